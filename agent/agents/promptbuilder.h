#pragma once

#include "deviceinfo.h"
#include "kernelrecord.h"
#include "moveonrules.h"

#include <QMap>
#include <QString>
#include <QStringList>

namespace ak {

// Turns program.md (the playbook, a Qt resource at :/autokernel/program.md) into the system prompt of
// an LLM experiment by filling its {{placeholders}} with the run's device, kernel and rules. Device
// facts therefore come from resources/gpus.json (through DeviceInfo) at prompt time, never from text
// frozen into the playbook. A placeholder the builder does not know is an error, not a blank.
class PromptBuilder
{
public:
    PromptBuilder(); // the bundled program.md
    explicit PromptBuilder(const QString &playbook); // a given template (tests, a user's own playbook)

    QString playbook() const { return m_playbook; }
    QString loadError() const { return m_loadError; } // set when the resource could not be read

    // The filled system prompt; on error (unknown placeholders, no template) an empty string and
    // *error = "program.md:12: unknown placeholder {{device.foo}}; ...".
    QString systemPrompt(const DeviceInfo &device, const KernelRecord &kernel, const MoveOnRules &rules,
        QString *error = nullptr) const;

    // The playbook for a model whose context cannot hold all of it: the run's facts, the rules of the
    // loop and the reply format, the roofline, the first tier of ideas (GPU) or the CPU section, the
    // recipe for `opType` only, and the checklist before replying; the other tiers and the other op
    // types' recipes are left out. `prompt` is a filled systemPrompt(); sections are its "## " headings.
    static QString compact(const QString &prompt, const QString &opType, bool cpu);

    // Every placeholder the builder fills, with its value for these inputs ("unknown" when the
    // database has no number).
    static QMap<QString, QString> values(
        const DeviceInfo &device, const KernelRecord &kernel, const MoveOnRules &rules);
    // The placeholder names that occur in the template, in order of first use.
    QStringList placeholders() const;

    // "hopper", "ampere", "ada", "blackwell", "cdna3", "cpu", ... from vendor and compute capability.
    static QString architectureFamily(const DeviceInfo &device);

private:
    QString m_playbook;
    QString m_loadError;
};

} // namespace ak
