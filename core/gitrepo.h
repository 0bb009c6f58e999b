#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QMap>
#include <QString>
#include <QStringList>

#include <memory>

struct git_repository;

namespace ak {

// A small RAII wrapper over one libgit2 repository, used by the run store (writes) and by readers
// (the GUI's diff view: read a blob at a commit + path). Object ids cross the API as 40-character hex
// strings. One instance per thread; libgit2 is thread-safe across separate repository handles.
// Every write goes through libgit2 with fsync enabled, so an object is durable before a ref names it.
class GitRepo
{
public:
    ~GitRepo();
    GitRepo(const GitRepo &) = delete;
    GitRepo &operator=(const GitRepo &) = delete;

    // Creates a non-bare repository in `dir` (or opens the one already there).
    static std::unique_ptr<GitRepo> init(const QString &dir, QString *error);
    // Read: libgit2's owner check (safe.directory, "config value 'safe.directory' was not found") is off
    // for this open, so that a run owned by another user can be looked at; libgit2 runs no hooks or
    // filters of the repository's config, which is what that check guards git against. Write (the
    // run store) keeps the check.
    enum class Purpose { Read, Write };
    static std::unique_ptr<GitRepo> open(const QString &dir, QString *error, Purpose purpose = Purpose::Read);

    QString writeBlob(const QByteArray &data, QString *error = nullptr);
    // The id `data` has (or would have) as a blob, computed without a repository: SHA-1 of
    // "blob <size>\0<data>", what `git hash-object` prints.
    static QString blobHash(const QByteArray &data);
    // Builds a (nested) tree from repository paths ("kernels/01-matmul/kernel.py") to blob ids.
    QString writeTree(const QMap<QString, QString> &files, QString *error = nullptr);
    // Writes a commit object only; no ref moves. `when` is used for author and committer.
    QString writeCommit(const QString &tree, const QStringList &parents, const QString &message,
        const QDateTime &when, QString *error = nullptr);

    // Refs under this prefix point at a blob, not a commit (RunStore's agent replies).
    static constexpr const char *BlobRefPrefix = "refs/replies/";

    // Points `name` ("refs/heads/best") at `target`, creating or overwriting it.
    bool setRef(const QString &name, const QString &target, const QString &reason, QString *error = nullptr);
    bool setHeadSymbolic(const QString &refName, QString *error = nullptr);
    // Object id a ref resolves to, empty if the ref does not exist.
    QString resolveRef(const QString &name) const;
    // Ref names matching a glob, e.g. "refs/experiments/*".
    QStringList listRefs(const QString &glob) const;

    bool hasObject(const QString &id) const;
    QString treeOf(const QString &commit) const;
    QStringList parentsOf(const QString &commit) const;
    QString messageOf(const QString &commit) const;
    QDateTime timeOf(const QString &commit) const;
    // Blob id at `path` in the commit's tree, empty if absent.
    QString blobIdAt(const QString &commit, const QString &path) const;
    // Every file of the commit's tree: repository path -> blob id (empty when not a commit).
    QMap<QString, QString> filesOf(const QString &commit) const;
    QByteArray readBlob(const QString &commit, const QString &path, QString *error = nullptr) const;
    QByteArray readBlobById(const QString &blob, QString *error = nullptr) const;

    // Makes the index match `tree`, so `git status` in the run directory is clean.
    bool resetIndex(const QString &tree, QString *error = nullptr);

    // Consistency check: every ref resolves to a commit whose tree and blobs are readable, and every
    // object in the object database decompresses. `error` lists the first problems found.
    bool verify(QString *error) const;

    QString workdir() const;

private:
    explicit GitRepo(git_repository *repo);
    git_repository *m_repo;
};

} // namespace ak
