#include "gitrepo.h"
#include "errorout.h"

#include "atomicfile.h"

#include <git2.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>

#include <mutex>

namespace ak {

namespace {

QString lastError(const QString &what)
{
    const git_error *e = git_error_last();
    return QStringLiteral("%1: %2").arg(
        what, e && e->message ? QString::fromUtf8(e->message) : QStringLiteral("libgit2 error"));
}

QString toHex(const git_oid &oid)
{
    char buf[GIT_OID_HEXSZ + 1];
    git_oid_tostr(buf, sizeof(buf), &oid);
    return QString::fromLatin1(buf);
}

bool fromHex(const QString &hex, git_oid *oid)
{
    const QByteArray b = hex.toLatin1();
    return b.size() == GIT_OID_HEXSZ && git_oid_fromstrn(oid, b.constData(), size_t(b.size())) == 0;
}

// Scoped libgit2 handles; each frees with its own function.
template<typename T, void (*Free)(T *)>
struct Handle
{
    T *p = nullptr;
    ~Handle()
    {
        if (p)
            Free(p);
    }
    T **out() { return &p; }
};
using CommitH = Handle<git_commit, git_commit_free>;
using TreeH = Handle<git_tree, git_tree_free>;
using RefH = Handle<git_reference, git_reference_free>;
using IndexH = Handle<git_index, git_index_free>;
using SigH = Handle<git_signature, git_signature_free>;
using BlobH = Handle<git_blob, git_blob_free>;
using EntryH = Handle<git_tree_entry, git_tree_entry_free>;
using OdbH = Handle<git_odb, git_odb_free>;
using OdbObjH = Handle<git_odb_object, git_odb_object_free>;

void initLibrary()
{
    git_libgit2_init();
    // Objects and refs are fsynced: a ref or the experiment log must never name an object that a
    // power loss could take away.
    git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, AtomicFile::syncEnabled() ? 1 : 0);
}

} // namespace

GitRepo::GitRepo(git_repository *repo)
    : m_repo(repo)
{ }

GitRepo::~GitRepo()
{
    git_repository_free(m_repo);
    git_libgit2_shutdown();
}

std::unique_ptr<GitRepo> GitRepo::init(const QString &dir, QString *error)
{
    initLibrary();
    git_repository *repo = nullptr;
    if (git_repository_init(&repo, QFile::encodeName(dir).constData(), 0) != 0) {
        fail(error, lastError(dir));
        git_libgit2_shutdown();
        return nullptr;
    }
    return std::unique_ptr<GitRepo>(new GitRepo(repo));
}

std::unique_ptr<GitRepo> GitRepo::open(const QString &dir, QString *error, Purpose purpose)
{
    initLibrary();
    git_repository *repo = nullptr;
    int rc = 0;
    {
        // The owner check is a process-wide libgit2 option read during the open (libgit2 1.5): switched
        // off only around a reading open, and every open serialised, so a writer's open in another
        // thread never sees it off.
        static std::mutex openMutex;
        std::lock_guard<std::mutex> lock(openMutex);
        if (purpose == Purpose::Read)
            git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
        rc = git_repository_open_ext(
            &repo, QFile::encodeName(dir).constData(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
        if (purpose == Purpose::Read)
            git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 1);
    }
    if (rc != 0) {
        fail(error, lastError(dir));
        git_libgit2_shutdown();
        return nullptr;
    }
    return std::unique_ptr<GitRepo>(new GitRepo(repo));
}

QString GitRepo::workdir() const
{
    const char *w = git_repository_workdir(m_repo);
    return w ? QFile::decodeName(w) : QString();
}

QString GitRepo::writeBlob(const QByteArray &data, QString *error)
{
    git_oid oid;
    if (git_blob_create_from_buffer(&oid, m_repo, data.constData(), size_t(data.size())) != 0)
        return fail(error, lastError(QStringLiteral("write blob"))), QString();
    return toHex(oid);
}

QString GitRepo::writeTree(const QMap<QString, QString> &files, QString *error)
{
    // An in-memory index builds the nested trees for us.
    IndexH index;
    if (git_index_new(index.out()) != 0)
        return fail(error, lastError(QStringLiteral("write tree"))), QString();
    for (auto it = files.cbegin(); it != files.cend(); ++it) {
        git_index_entry entry {};
        const QByteArray path = it.key().toUtf8();
        entry.path = path.constData();
        entry.mode = GIT_FILEMODE_BLOB;
        if (!fromHex(it.value(), &entry.id))
            return fail(error, QStringLiteral("write tree: bad blob id for %1").arg(it.key())), QString();
        if (git_index_add(index.p, &entry) != 0)
            return fail(error, lastError(QStringLiteral("write tree: %1").arg(it.key()))), QString();
    }
    git_oid oid;
    if (git_index_write_tree_to(&oid, index.p, m_repo) != 0)
        return fail(error, lastError(QStringLiteral("write tree"))), QString();
    return toHex(oid);
}

QString GitRepo::writeCommit(const QString &tree, const QStringList &parents, const QString &message,
    const QDateTime &when, QString *error)
{
    git_oid treeId;
    TreeH treeObj;
    if (!fromHex(tree, &treeId) || git_tree_lookup(treeObj.out(), m_repo, &treeId) != 0)
        return fail(error, lastError(QStringLiteral("commit: tree %1").arg(tree))), QString();
    std::vector<CommitH> parentObjs(size_t(parents.size()));
    std::vector<const git_commit *> parentPtrs;
    for (int i = 0; i < parents.size(); ++i) {
        git_oid pid;
        if (!fromHex(parents[i], &pid) || git_commit_lookup(parentObjs[size_t(i)].out(), m_repo, &pid) != 0)
            return fail(error, lastError(QStringLiteral("commit: parent %1").arg(parents[i]))), QString();
        parentPtrs.push_back(parentObjs[size_t(i)].p);
    }
    SigH sig;
    const QDateTime t = when.isValid() ? when : QDateTime::currentDateTimeUtc();
    if (git_signature_new(sig.out(), "AutoKernel Studio", "autokernel@localhost",
            git_time_t(t.toSecsSinceEpoch()), t.offsetFromUtc() / 60)
        != 0)
        return fail(error, lastError(QStringLiteral("commit: signature"))), QString();
    git_oid oid;
    const QByteArray msg = message.toUtf8();
    if (git_commit_create(&oid, m_repo, nullptr, sig.p, sig.p, nullptr, msg.constData(), treeObj.p,
            parentPtrs.size(), parentPtrs.data())
        != 0)
        return fail(error, lastError(QStringLiteral("commit"))), QString();
    return toHex(oid);
}

bool GitRepo::setRef(const QString &name, const QString &target, const QString &reason, QString *error)
{
    git_oid oid;
    if (!fromHex(target, &oid))
        return fail(error, QStringLiteral("%1: bad target id '%2'").arg(name, target));
    RefH ref;
    if (git_reference_create(
            ref.out(), m_repo, name.toUtf8().constData(), &oid, 1, reason.toUtf8().constData())
        != 0)
        return fail(error, lastError(name));
    return true;
}

bool GitRepo::setHeadSymbolic(const QString &refName, QString *error)
{
    RefH ref;
    if (git_reference_symbolic_create(
            ref.out(), m_repo, "HEAD", refName.toUtf8().constData(), 1, "autokernel")
        != 0)
        return fail(error, lastError(QStringLiteral("HEAD")));
    return true;
}

QString GitRepo::resolveRef(const QString &name) const
{
    git_oid oid;
    if (git_reference_name_to_id(&oid, m_repo, name.toUtf8().constData()) != 0)
        return QString();
    return toHex(oid);
}

QStringList GitRepo::listRefs(const QString &glob) const
{
    // Names only: a run has one ref per experiment, and reading 10,000 loose ref files to list
    // them would dominate opening the run.
    QStringList names;
    git_reference_iterator *it = nullptr;
    if (git_reference_iterator_glob_new(&it, m_repo, glob.toUtf8().constData()) != 0)
        return names;
    const char *name = nullptr;
    while (git_reference_next_name(&name, it) == 0)
        names << QString::fromUtf8(name);
    git_reference_iterator_free(it);
    return names;
}

bool GitRepo::hasObject(const QString &id) const
{
    git_oid oid;
    OdbH odb;
    return fromHex(id, &oid) && git_repository_odb(odb.out(), m_repo) == 0 && git_odb_exists(odb.p, &oid);
}

QString GitRepo::treeOf(const QString &commit) const
{
    git_oid oid;
    CommitH c;
    if (!fromHex(commit, &oid) || git_commit_lookup(c.out(), m_repo, &oid) != 0)
        return QString();
    return toHex(*git_commit_tree_id(c.p));
}

QStringList GitRepo::parentsOf(const QString &commit) const
{
    git_oid oid;
    CommitH c;
    QStringList out;
    if (!fromHex(commit, &oid) || git_commit_lookup(c.out(), m_repo, &oid) != 0)
        return out;
    for (unsigned i = 0; i < git_commit_parentcount(c.p); ++i)
        out << toHex(*git_commit_parent_id(c.p, i));
    return out;
}

QString GitRepo::messageOf(const QString &commit) const
{
    git_oid oid;
    CommitH c;
    if (!fromHex(commit, &oid) || git_commit_lookup(c.out(), m_repo, &oid) != 0)
        return QString();
    return QString::fromUtf8(git_commit_message(c.p));
}

QDateTime GitRepo::timeOf(const QString &commit) const
{
    git_oid oid;
    CommitH c;
    if (!fromHex(commit, &oid) || git_commit_lookup(c.out(), m_repo, &oid) != 0)
        return QDateTime();
    // With the commit's own offset, so that writeCommit(…, timeOf(c)) writes the same signature.
    return QDateTime::fromSecsSinceEpoch(
        git_commit_time(c.p), Qt::OffsetFromUTC, git_commit_time_offset(c.p) * 60);
}

QString GitRepo::blobIdAt(const QString &commit, const QString &path) const
{
    git_oid oid;
    CommitH c;
    TreeH tree;
    EntryH entry;
    if (!fromHex(commit, &oid) || git_commit_lookup(c.out(), m_repo, &oid) != 0
        || git_commit_tree(tree.out(), c.p) != 0
        || git_tree_entry_bypath(entry.out(), tree.p, path.toUtf8().constData()) != 0)
        return QString();
    return toHex(*git_tree_entry_id(entry.p));
}

QMap<QString, QString> GitRepo::filesOf(const QString &commit) const
{
    QMap<QString, QString> files;
    git_oid oid;
    CommitH c;
    TreeH tree;
    if (!fromHex(commit, &oid) || git_commit_lookup(c.out(), m_repo, &oid) != 0
        || git_commit_tree(tree.out(), c.p) != 0)
        return files;
    git_tree_walk(
        tree.p, GIT_TREEWALK_PRE,
        [](const char *root, const git_tree_entry *entry, void *payload) {
            if (git_tree_entry_type(entry) == GIT_OBJECT_BLOB)
                static_cast<QMap<QString, QString> *>(payload)->insert(
                    QString::fromUtf8(root) + QString::fromUtf8(git_tree_entry_name(entry)),
                    toHex(*git_tree_entry_id(entry)));
            return 0;
        },
        &files);
    return files;
}

QByteArray GitRepo::readBlob(const QString &commit, const QString &path, QString *error) const
{
    const QString id = blobIdAt(commit, path);
    if (id.isEmpty()) {
        fail(error, QStringLiteral("%1 not found at commit %2").arg(path, commit));
        return QByteArray();
    }
    return readBlobById(id, error);
}

QByteArray GitRepo::readBlobById(const QString &blob, QString *error) const
{
    git_oid oid;
    BlobH b;
    if (!fromHex(blob, &oid) || git_blob_lookup(b.out(), m_repo, &oid) != 0) {
        fail(error, lastError(QStringLiteral("blob %1").arg(blob)));
        return QByteArray();
    }
    return QByteArray(static_cast<const char *>(git_blob_rawcontent(b.p)), qsizetype(git_blob_rawsize(b.p)));
}

bool GitRepo::resetIndex(const QString &tree, QString *error)
{
    git_oid oid;
    TreeH t;
    IndexH index;
    if (!fromHex(tree, &oid) || git_tree_lookup(t.out(), m_repo, &oid) != 0)
        return fail(error, lastError(QStringLiteral("index: tree %1").arg(tree)));
    if (git_repository_index(index.out(), m_repo) != 0 || git_index_read_tree(index.p, t.p) != 0
        || git_index_write(index.p) != 0)
        return fail(error, lastError(QStringLiteral("index")));
    return true;
}

bool GitRepo::verify(QString *error) const
{
    QStringList problems;
    OdbH odb;
    if (git_repository_odb(odb.out(), m_repo) != 0)
        return fail(error, lastError(QStringLiteral("odb")));

    // Every object must read back (libgit2 verifies the hash of what it inflates).
    struct OdbScan
    {
        git_odb *odb;
        QStringList *problems;
        int count = 0;
    } scan { odb.p, &problems };
    git_odb_foreach(
        odb.p,
        [](const git_oid *id, void *payload) {
            auto *s = static_cast<OdbScan *>(payload);
            OdbObjH obj;
            if (git_odb_read(obj.out(), s->odb, id) != 0)
                s->problems->append(lastError(QStringLiteral("object %1").arg(toHex(*id))));
            ++s->count;
            return s->problems->size() > 20 ? 1 : 0;
        },
        &scan);

    // Every ref must resolve to a commit whose tree and blobs exist.
    const QStringList refs = listRefs(QStringLiteral("*"));
    for (const QString &name : refs) {
        RefH ref, resolved;
        CommitH commit;
        TreeH tree;
        if (git_reference_lookup(ref.out(), m_repo, name.toUtf8().constData()) != 0
            || git_reference_resolve(resolved.out(), ref.p) != 0) {
            problems << lastError(name);
            continue;
        }
        if (name.startsWith(QLatin1String(BlobRefPrefix))) { // a blob of its own (an agent's reply)
            BlobH blob;
            if (git_blob_lookup(blob.out(), m_repo, git_reference_target(resolved.p)) != 0)
                problems << lastError(QStringLiteral("%1 -> blob").arg(name));
            continue;
        }
        if (git_commit_lookup(commit.out(), m_repo, git_reference_target(resolved.p)) != 0
            || git_commit_tree(tree.out(), commit.p) != 0) {
            problems << lastError(QStringLiteral("%1 -> commit").arg(name));
            continue;
        }
        struct Walk
        {
            git_odb *odb;
            QStringList *problems;
            QString ref;
        } walk { odb.p, &problems, name };
        git_tree_walk(
            tree.p, GIT_TREEWALK_PRE,
            [](const char *, const git_tree_entry *entry, void *payload) {
                auto *w = static_cast<Walk *>(payload);
                if (!git_odb_exists(w->odb, git_tree_entry_id(entry)))
                    w->problems->append(QStringLiteral("%1: missing object %2")
                                            .arg(w->ref, toHex(*git_tree_entry_id(entry))));
                return 0;
            },
            &walk);
        for (unsigned i = 0; i < git_commit_parentcount(commit.p); ++i)
            if (!git_odb_exists(odb.p, git_commit_parent_id(commit.p, i)))
                problems << QStringLiteral("%1: missing parent %2")
                                .arg(name, toHex(*git_commit_parent_id(commit.p, i)));
        if (problems.size() > 20)
            break;
    }
    if (!problems.isEmpty())
        return fail(error, problems.join(QLatin1Char('\n')));
    return true;
}

QString GitRepo::blobHash(const QByteArray &data)
{
    QCryptographicHash sha(QCryptographicHash::Sha1);
    QByteArray header = "blob " + QByteArray::number(data.size());
    header.append('\0');
    sha.addData(header);
    sha.addData(data);
    return QString::fromLatin1(sha.result().toHex());
}

} // namespace ak
