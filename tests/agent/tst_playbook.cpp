// Checks program.md (the LLM agent's playbook) against the code it describes, so the two cannot drift:
// op types and tolerances against the harness (`python3 -m harness.describe`), the reply format
// against ReplyParser, the example kernel against the static check, the rules against MoveOnRules and
// the keep rule, and the placeholders against PromptBuilder.
#include "agents/promptbuilder.h"
#include "keeprule.h"
#include "kernelstaticcheck.h"
#include "llm/replyparser.h"
#include "moveonrules.h"
#include "testregistry.h"

#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>

#include <nlohmann/json.hpp>

using namespace ak;
using json = nlohmann::json;

namespace {

QString sourceDir()
{
    return QStringLiteral(AUTOKERNEL_SOURCE_DIR);
}

// The text between "## <title-prefix>" and the next "## " heading.
QString section(const QString &doc, const QString &titlePrefix)
{
    const QStringList lines = doc.split(QLatin1Char('\n'));
    QStringList out;
    bool in = false;
    for (const QString &line : lines) {
        if (line.startsWith(QLatin1String("## "))) {
            if (in)
                break;
            in = line.mid(3).startsWith(titlePrefix);
            continue;
        }
        if (in)
            out << line;
    }
    return out.join(QLatin1Char('\n'));
}

// "1e-2" -> {1e-2, 1e-2}; "atol 1e-1, rtol 5e-2" -> {1e-1, 5e-2}.
bool parseTolerance(const QString &cell, double *atol, double *rtol)
{
    static const QRegularExpression pair(QStringLiteral(R"(^atol\s+(\S+),\s*rtol\s+(\S+)$)"));
    bool ok1 = false, ok2 = false;
    const QRegularExpressionMatch m = pair.match(cell.trimmed());
    if (m.hasMatch()) {
        *atol = m.captured(1).toDouble(&ok1);
        *rtol = m.captured(2).toDouble(&ok2);
        return ok1 && ok2;
    }
    *atol = *rtol = cell.trimmed().toDouble(&ok1);
    return ok1;
}

DeviceInfo h200()
{
    DeviceInfo d;
    d.available = true;
    d.name = QStringLiteral("NVIDIA H200");
    d.vendor = QStringLiteral("nvidia");
    d.computeCapability = QStringLiteral("9.0");
    d.smCount = 132;
    d.memoryGiB = 141;
    d.l2MiB = 60;
    d.bandwidthGBs = 4800;
    d.peakTflops = { 66.9, 494.7, 989.4, 989.4, 1978.9 };
    return d;
}

KernelRecord softmaxRecord()
{
    KernelRecord k;
    k.name = QStringLiteral("softmax_kernel");
    k.opType = QStringLiteral("softmax");
    k.dtype = QStringLiteral("bf16");
    k.shapes = QStringList { QStringLiteral("[8192, 8192]") };
    return k;
}

} // namespace

class PlaybookTest : public QObject
{
    Q_OBJECT

    QString m_doc; // program.md as bundled (the Qt resource)
    json m_describe; // harness describe output
    json m_ops; // op type -> spec

private Q_SLOTS:
    void initTestCase()
    {
        const PromptBuilder builder;
        QVERIFY2(builder.loadError().isEmpty(), qPrintable(builder.loadError()));
        m_doc = builder.playbook();
        QFile source(sourceDir() + QStringLiteral("/program.md"));
        QVERIFY(source.open(QIODevice::ReadOnly));
        QCOMPARE(m_doc, QString::fromUtf8(source.readAll())); // the bundled copy is the current file

        QString python = qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON");
        if (python.isEmpty())
            python = QStringLiteral("/usr/bin/python3");
        QProcess describe;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PYTHONPATH"), sourceDir() + QStringLiteral("/agent/python"));
        describe.setProcessEnvironment(env);
        describe.start(python, { QStringLiteral("-m"), QStringLiteral("harness.describe") });
        QVERIFY2(describe.waitForFinished(60000), "harness.describe did not finish");
        QVERIFY2(describe.exitCode() == 0, describe.readAllStandardError().constData());
        try {
            m_describe = json::parse(describe.readAllStandardOutput().toStdString());
        } catch (const json::exception &e) {
            QFAIL(e.what());
        }
        m_ops = m_describe.value("ops", json::object());
        QVERIFY2(m_ops.is_object() && m_ops.size() >= 10, "harness.describe lists no ops");
    }

    void everyOpTypeHasARecipe()
    {
        const QString tier6 = section(m_doc, QStringLiteral("8. Tier 6"));
        QVERIFY(!tier6.isEmpty());
        // Recipes: "### `name`" headings, each followed by its body up to the next heading.
        static const QRegularExpression heading(
            QStringLiteral(R"(^### `([a-z_0-9]+)`\s*$)"), QRegularExpression::MultilineOption);
        QMap<QString, QString> recipes;
        auto it = heading.globalMatch(tier6);
        QVector<QRegularExpressionMatch> matches;
        while (it.hasNext())
            matches << it.next();
        for (int i = 0; i < matches.size(); ++i) {
            const qsizetype end = i + 1 < matches.size() ? matches[i + 1].capturedStart() : tier6.size();
            recipes[matches[i].captured(1)]
                = tier6.mid(matches[i].capturedEnd(), end - matches[i].capturedEnd());
        }
        for (auto op = m_ops.begin(); op != m_ops.end(); ++op) {
            const QString name = QString::fromStdString(op.key());
            QVERIFY2(recipes.contains(name), qPrintable(QStringLiteral("no Tier 6 recipe for ") + name));
            const QString body = recipes.value(name);
            QVERIFY2(
                body.count(QLatin1Char('\n')) >= 4, qPrintable(name + QStringLiteral(": recipe too short")));
            // The recipe names kernel_fn with the harness's argument names, in order.
            QStringList args;
            for (const auto &a : op.value().at("args"))
                args << QString::fromStdString(a.get<std::string>());
            const QString signature = QStringLiteral("`kernel_fn(%1)`").arg(args.join(QStringLiteral(", ")));
            QVERIFY2(body.contains(signature),
                qPrintable(name + QStringLiteral(": recipe must show ") + signature));
        }
        for (const QString &name : recipes.keys())
            QVERIFY2(m_ops.contains(name.toStdString()),
                qPrintable(QStringLiteral("recipe for an op type the harness does not support: ") + name));
    }

    void tolerancesMatchHarness()
    {
        const qsizetype begin = m_doc.indexOf(QLatin1String("<!-- tolerances:begin -->"));
        const qsizetype end = m_doc.indexOf(QLatin1String("<!-- tolerances:end -->"));
        QVERIFY(begin > 0 && end > begin);
        const QStringList rows = m_doc.mid(begin, end - begin).split(QLatin1Char('\n'));
        const QStringList columns { QStringLiteral("float32"), QStringLiteral("float16"),
            QStringLiteral("bfloat16") };
        QSet<QString> seen;
        for (const QString &row : rows) {
            QStringList cells = row.split(QLatin1Char('|'));
            if (cells.size() != 6 || cells[1].trimmed() == QLatin1String("op type")
                || cells[1].startsWith(QLatin1String("---")))
                continue;
            const QString op = cells[1].trimmed();
            QVERIFY2(m_ops.contains(op.toStdString()),
                qPrintable(QStringLiteral("tolerance row for unknown op ") + op));
            seen.insert(op);
            const json &tol = m_ops[op.toStdString()].at("tolerances");
            for (int c = 0; c < 3; ++c) {
                double atol = 0, rtol = 0;
                QVERIFY2(parseTolerance(cells[c + 2], &atol, &rtol), qPrintable(row));
                const json &want = tol.at(columns[c].toStdString());
                const QString where = op + QLatin1Char(' ') + columns[c];
                QVERIFY2(qFuzzyCompare(atol, want.at("atol").get<double>()),
                    qPrintable(where + QStringLiteral(" atol")));
                QVERIFY2(qFuzzyCompare(rtol, want.at("rtol").get<double>()),
                    qPrintable(where + QStringLiteral(" rtol")));
            }
        }
        for (auto op = m_ops.begin(); op != m_ops.end(); ++op)
            QVERIFY2(seen.contains(QString::fromStdString(op.key())),
                qPrintable(QStringLiteral("no tolerance row for ") + QString::fromStdString(op.key())));
    }

    void exampleReplyParsesAndPassesStaticCheck()
    {
        const qsizetype begin = m_doc.indexOf(QLatin1String("<!-- example-reply:begin -->"));
        const qsizetype end = m_doc.indexOf(QLatin1String("<!-- example-reply:end -->"));
        QVERIFY(begin > 0 && end > begin);
        QStringList lines = m_doc.mid(begin, end - begin).split(QLatin1Char('\n'));
        // Drop the marker line and the outer ~~~~ fence that shows the reply verbatim.
        while (!lines.isEmpty() && !lines.first().startsWith(QLatin1String("~~~~")))
            lines.removeFirst();
        QVERIFY(!lines.isEmpty());
        lines.removeFirst();
        while (!lines.isEmpty() && !lines.last().startsWith(QLatin1String("~~~~")))
            lines.removeLast();
        QVERIFY(!lines.isEmpty());
        lines.removeLast();
        const ParsedReply reply = ReplyParser::parse(lines.join(QLatin1Char('\n')));
        QVERIFY2(reply.ok, qPrintable(reply.error));
        QVERIFY(reply.description.startsWith(QLatin1String("Tier ")));

        const KernelStaticInfo info
            = checkKernelSource(reply.kernelPy.toUtf8(), QStringLiteral("program.md example"));
        QVERIFY2(info.ok, qPrintable(info.error));
        QVERIFY2(m_ops.contains(info.kernelType.toStdString()), qPrintable(info.kernelType));
        QStringList args;
        for (const auto &a : m_ops[info.kernelType.toStdString()].at("args"))
            args << QString::fromStdString(a.get<std::string>());
        QCOMPARE(info.kernelFnArgs, args);
        QVERIFY2(!info.constants.isEmpty() && !info.constants.first().candidates.isEmpty(),
            "the example should show a tunable constant with a TUNE_SPACE");
    }

    void keepRuleMatchesHarnessAndCode()
    {
        const json keep = m_describe.value("keep_rule", json::object());
        QVERIFY2(keep.contains("min_improvement_pct"), keep.dump().c_str());
        QCOMPARE(keep.at("min_improvement_pct").get<double>(), kKeepMinImprovementPct);
        QVERIFY(m_doc.contains(QLatin1String("{{rules.keep_min_improvement_pct}}% *and* by more than")));
    }

    void rulesFlowIntoThePrompt()
    {
        // Every move-on rule and the keep rule are stated through placeholders, so a run with its own
        // thresholds tells the model those, and defaults can never be restated wrongly by hand.
        for (const char *name : { "rules.max_consecutive_reverts", "rules.roof_pct", "rules.hours_per_kernel",
                 "rules.speedup_over_baseline", "rules.keep_min_improvement_pct" })
            QVERIFY2(PromptBuilder(m_doc).placeholders().contains(QLatin1String(name)), name);
        MoveOnRules custom;
        custom.maxConsecutiveReverts = 7;
        custom.roofPct = 85;
        custom.hoursPerKernel = 3.5;
        custom.speedupOverBaseline = 2.5;
        for (const MoveOnRules &rules : { MoveOnRules(), custom }) {
            QString error;
            const QString prompt
                = PromptBuilder(m_doc).systemPrompt(h200(), softmaxRecord(), rules, &error).simplified();
            QVERIFY2(error.isEmpty(), qPrintable(error));
            QVERIFY(prompt.contains(QStringLiteral("%1 consecutive experiments without a keep")
                                        .arg(rules.maxConsecutiveReverts)));
            QVERIFY(prompt.contains(QStringLiteral("reaches %1% of its roof").arg(rules.roofPct)));
            QVERIFY(prompt.contains(QStringLiteral("%1 h have been spent on it").arg(rules.hoursPerKernel)));
            QVERIFY(prompt.contains(
                QStringLiteral("%1× faster than its own baseline").arg(rules.speedupOverBaseline)));
            QVERIFY(prompt.contains(QStringLiteral("by more than %1%").arg(kKeepMinImprovementPct)));
        }
        // No hand-written restatement of a default threshold next to the placeholders.
        static const QRegularExpression literal(
            QStringLiteral(R"(\b\d+ consecutive|\d+% of (its|the kernel's) roof)"));
        QVERIFY2(!literal.match(m_doc).hasMatch(), qPrintable(literal.match(m_doc).captured(0)));
    }

    void placeholdersAllFilled()
    {
        QString error;
        const QString full
            = PromptBuilder(m_doc).systemPrompt(h200(), softmaxRecord(), MoveOnRules(), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(!full.contains(QLatin1String("{{")) && !full.contains(QLatin1String("}}")));
        QVERIFY(full.simplified().contains(
            QLatin1String("Device: **NVIDIA H200** (nvidia, architecture `9.0`, family `hopper`, 132 SMs)")));
        QVERIFY(full.contains(QLatin1String("peak bandwidth 4800 GB/s")));
        QVERIFY(full.contains(QLatin1String("bf16 989.4")));
        QVERIFY(full.contains(QLatin1String("type `softmax`")));
        // A CPU run with no database numbers still fills everything (with "unknown", not blanks).
        DeviceInfo cpu;
        cpu.name = QStringLiteral("CPU (x86_64, 2 threads)");
        cpu.vendor = QStringLiteral("cpu");
        const QString cpuPrompt
            = PromptBuilder(m_doc).systemPrompt(cpu, KernelRecord(), MoveOnRules(), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(cpuPrompt.contains(QLatin1String("peak bandwidth unknown GB/s")));
        QVERIFY(!cpuPrompt.contains(QLatin1String("{{")));
    }

    void unknownPlaceholderIsAnError()
    {
        QString error;
        const QString out
            = PromptBuilder(QStringLiteral("line one\nDevice {{device.name}} at {{device.nmae}}\n"))
                  .systemPrompt(h200(), softmaxRecord(), MoveOnRules(), &error);
        QVERIFY(out.isEmpty());
        QVERIFY2(error.contains(QLatin1String("program.md:2: unknown placeholder {{device.nmae}}")),
            qPrintable(error));
    }

    void everyTierIsComplete()
    {
        const QStringList tiers { QStringLiteral("3. Tier 1"), QStringLiteral("4. Tier 2"),
            QStringLiteral("5. Tier 3"), QStringLiteral("6. Tier 4"), QStringLiteral("7. Tier 5") };
        for (const QString &t : tiers) {
            const QString body = section(m_doc, t);
            QVERIFY2(!body.isEmpty(), qPrintable(t));
            for (const char *part :
                { "**What to try", "**When", "**Typical gain", "**Failed if", "**Example" })
                QVERIFY2(body.contains(QLatin1String(part)),
                    qPrintable(t + QStringLiteral(" lacks ") + QLatin1String(part)));
        }
        // Tier 5 covers every architecture family the prompt can name for a GPU.
        const QString tier5 = section(m_doc, QStringLiteral("7. Tier 5")).toLower();
        for (const char *family : { "hopper", "ampere", "ada", "blackwell", "cdna3" })
            QVERIFY2(tier5.contains(QLatin1String(family)), family);
        QVERIFY(!section(m_doc, QStringLiteral("9. CPU")).isEmpty());
    }

    void startersMatchThePlaybook()
    {
        // The harness's starters pass the same static check proposals face, and every tunable constant
        // of a CPU starter (what the product tunes by default) is explained in the CPU section.
        const QString cpu = section(m_doc, QStringLiteral("9. CPU"));
        int cpuStarters = 0;
        for (auto op = m_ops.begin(); op != m_ops.end(); ++op) {
            const json starters = op.value().value("starters", json::object());
            for (auto st = starters.begin(); st != starters.end(); ++st) {
                const QString path = sourceDir() + QStringLiteral("/agent/python/harness/")
                    + QString::fromStdString(st.value().get<std::string>());
                QFile f(path);
                QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
                const KernelStaticInfo info = checkKernelSource(f.readAll(), path);
                QVERIFY2(info.ok, qPrintable(info.error));
                QCOMPARE(info.kernelType, QString::fromStdString(op.key()));
                if (st.key() != "cpu")
                    continue;
                ++cpuStarters;
                for (const TunableConstant &c : info.constants)
                    QVERIFY2(cpu.contains(QLatin1Char('`') + c.name + QLatin1Char('`')),
                        qPrintable(QStringLiteral("CPU section does not explain ") + c.name
                            + QStringLiteral(" of ") + path));
            }
        }
        QVERIFY(cpuStarters >= 10);
    }
};

AK_TEST_CLASS(PlaybookTest)
#include "tst_playbook.moc"
