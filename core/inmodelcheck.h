#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QString>
#include <QStringList>
#include <QVector>

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>

namespace ak {

// One in-model check of a kept kernel during the run (#38 item 5): the kernel alone plugged into the
// model against the model as written, a short paired A/B on the loop's device (the worker's `inmodel`
// op, agent/python/modelplug/inmodel.py). inmodel.json keeps every check; verification.json stays
// what the final `verify` found.
struct InModelCheck
{
    QString kernel; // folder name, "01-matmul"
    int experiment = 0; // the kept experiment whose kernel.py was checked
    QString blobSha256; // sha256 of that kernel.py
    QDateTime when;
    QString device; // "cpu" | "cuda"
    bool plugged = false; // some call of the model reached the kernel
    bool parityOk = false;
    double effectPct = std::nan(""); // % of the model's time it saves alone; NaN: not timed
    double limitPct = std::nan(""); // the noise the effect must beat (at least the 1% floor)
    bool positive = false; // effectPct > limitPct
    // The harness said it beats PyTorch (speedup > 1) when it was kept: only such a keep is a "harness
    // win" whose absence in the model counts for the move-on rule.
    bool harnessWin = false;
    double harnessSpeedup = std::nan("");
    // What the harness's win predicts for the model (Amdahl over the kernel's profiled share:
    // share x (1 - 1 / harnessSpeedup), in %); NaN: unknown. A win predicted below the noise cannot
    // show in the model, so it is no miss (a 1.15x rotary at 0.2 % of the model is not a failure).
    double expectedPct = std::nan("");
    QString why; // why it is not positive, as the worker worded it; empty when positive
    double seconds = std::nan(""); // what the check cost, wall time

    // A harness win that the model does not show: plugged and correct but no gain beyond the noise,
    // or not plugged / broken in the model.
    bool miss() const { return visibleWin() && !positive; }
    // A harness win whose predicted effect clears the noise the check measured (or is unknown).
    bool visibleWin() const { return harnessWin && !(expectedPct <= limitPct); }
    // "+3.25% alone vs eager (noise 1.50%), keep #12"; "no gain ...: why", "not plugged: ..." otherwise.
    QString summary() const;

    // From the worker's reply (plus what the loop knows); nullopt with *error naming the field.
    static std::optional<InModelCheck> fromReply(const nlohmann::json &reply, QString *error);
    nlohmann::json toJson() const;
};

// inmodel.json: {"format": "autokernel-inmodel", "version": 1, "checks": [...]}, oldest first.
struct InModelChecks
{
    QVector<InModelCheck> checks;

    bool isEmpty() const { return checks.isEmpty(); }
    const InModelCheck *latest(const QString &kernel) const; // nullptr: never checked
    int count(const QString &kernel) const;
    // Harness wins the model did not show, in a row, newest first; a positive check ends the streak,
    // a check of a keep that did not beat PyTorch in the harness, or whose predicted effect is below
    // the noise, neither counts nor ends it.
    int missesInARow(const QString &kernel) const;
    double seconds() const; // all checks together

    nlohmann::json toJson() const;
    // Entries that cannot be read are skipped with a warning naming fileName and the entry.
    static InModelChecks parse(const QByteArray &data, const QString &fileName, QStringList *warnings);
    static QString fileName() { return QStringLiteral("inmodel.json"); }
};

} // namespace ak
