#pragma once

#include "runstore.h"

#include <nlohmann/json.hpp>

#include <QByteArray>
#include <QString>

// verification.json fixtures in the shape agent/python/modelplug/verify.py returns, and a run that
// holds one. Numbers are realistic, not measured: the kernels of a GPT-2-like bf16 run on an H200.
namespace ak::test {

inline nlohmann::json kernelEntry(const char *name, const char *op, bool plugged, bool parityOk,
    double effect, bool final, const char *whyNot)
{
    nlohmann::json k { { "kernel", name }, { "op_type", op },
        { "sites", { "transformer.h.0.attn", "transformer.h.1.attn" } }, { "plugged", plugged },
        { "in_final_set", final }, { "blob_sha256", std::string(64, 'a') } };
    if (plugged || !parityOk)
        k["parity"] = { { "ok", parityOk }, { "error", parityOk ? 0.41 : 37.5 }, { "eager_error", 0.38 },
            { "worst_output", "logits" }, { "seeds", { 11, 22, 33 } } };
    if (plugged && parityOk)
        k["effect_pct"] = effect;
    if (whyNot)
        k["why_not"] = whyNot;
    k["plug"] = { { "kernel", name }, { "routed_calls", plugged ? 12 : 0 },
        { "fallback_calls", nlohmann::json::object() } };
    return k;
}

// The kernels of test::makeRun (01-matmul in the final set, 02-softmax left out, 03-layernorm not
// plugged) plus a 04-gelu that broke parity. withCompile = false: torch without torch.compile (the
// CI's 1.13), so the compile timings are missing and only their errors are there.
inline nlohmann::json verificationDict(bool withCompile)
{
    nlohmann::json timings {
        { "eager",
            { { "median_us", 15230.0 }, { "speedup_vs_eager", 1.0 },
                { "samples_us", { 15210.0, 15230.0, 15260.0 } } } },
        { "eager+ours",
            { { "median_us", 14420.0 }, { "speedup_vs_eager", 15230.0 / 14420.0 },
                { "samples_us", { 14400.0, 14420.0, 14450.0 } } } },
    };
    nlohmann::json compileSeconds = nlohmann::json::object();
    if (withCompile) {
        timings["compile"] = { { "median_us", 11890.0 }, { "speedup_vs_eager", 15230.0 / 11890.0 },
            { "samples_us", { 11890.0 } } };
        timings["compile+ours"] = { { "median_us", 11580.0 }, { "speedup_vs_eager", 15230.0 / 11580.0 },
            { "speedup_vs_compile", 11890.0 / 11580.0 }, { "samples_us", { 11580.0 } } };
        timings["compile_advice"]
            = "with torch.compile: compile the model after apply(); 1.03x faster than compile alone";
        compileSeconds = { { "compile", 48.2 }, { "compile+ours", 51.7 } };
    } else {
        timings["compile_error"] = "torch 1.13.1 has no torch.compile";
        timings["compile+ours_error"] = "torch 1.13.1 has no torch.compile";
    }
    return {
        { "format", "autokernel-verification" },
        { "version", 1 },
        { "when", "2025-06-03T09:14:27+00:00" },
        { "model_path", "/runs/gpt2/model.py" },
        { "model_sha256", std::string(64, 'b') },
        { "device", "cuda" },
        { "dtype", "bfloat16" },
        { "plug_sha256", std::string(64, 'c') },
        { "device_name", "NVIDIA H200" },
        { "torch", withCompile ? "2.5.1+cu124" : "1.13.1" },
        { "triton", withCompile ? nlohmann::json("3.1.0") : nlohmann::json() },
        { "python", "3.11.2" },
        { "seeds", { 11, 22, 33 } },
        { "reps_per_sample", 16 },
        { "rounds", 7 },
        { "kernels",
            { kernelEntry("01-matmul", "matmul", true, true, 4.2, true, nullptr),
                kernelEntry("02-softmax", "softmax", true, true, -1.3, false,
                    "slows the model down: -1.30% (removing it makes the model faster beyond the 1.00% "
                    "noise)"),
                kernelEntry("03-layernorm", "layernorm", false, true, 0, false,
                    "not plugged: eps 1e-06 differs from the contract's 1e-05"),
                kernelEntry("04-gelu", "gelu", true, false, 0, false,
                    "parity: output logits is 37.5 tolerances from the truth (eager: 0.38)") } },
        { "final_set", { "01-matmul" } },
        { "parity",
            { { "ok", true }, { "error", 0.44 }, { "eager_error", 0.38 }, { "seeds", { 11, 22, 33 } },
                { "worst_output", "logits" } } },
        { "timings", timings },
        { "compile_seconds", compileSeconds },
        { "model_speedup", 15230.0 / 14420.0 },
        { "seconds", 97.4 },
        { "isolation", "bubblewrap" },
    };
}

// A GPT-2-like run made through RunStore (six kernel folders with kept experiments at the speedups
// the tune agent found on an H200) with its verification committed, as `verify` leaves it.
inline bool makeVerifiedRun(const QString &dir, QString *error)
{
    auto store = RunStore::create(dir,
        nlohmann::json { { "model", "gpt2" }, { "activity", "cuda" }, { "dtype", "bf16" },
            { "device",
                { { "name", "NVIDIA H200" }, { "vendor", "nvidia" }, { "available", true },
                    { "sm_count", 132 } } } },
        error);
    if (!store)
        return false;
    struct K
    {
        const char *op;
        double timeUs;
        double share;
        int calls;
        double floorUs;
        double maxX;
        double modelX;
        QVector<double> kept;
    };
    const K kernels[] = { { "matmul", 8742.8, 0.618, 1, 852.2, 10.3, 2.226, {} },
        { "matmul", 1176.8, 0.083, 12, 69.5, 1.4, 1.018, { 1.08, 1.21 } },
        { "matmul", 1024.2, 0.072, 12, 69.5, 1.2, 1.007, { 1.03 } },
        { "matmul", 859.1, 0.061, 12, 52.1, 1.4, 1.012, { 1.21 } },
        { "flash_attention", 693.1, 0.049, 12, 17.4, 3.3, 1.034, {} },
        { "layernorm", 534.8, 0.038, 25, 7.0, 3.1, 1.025, { 1.12, 1.30, 1.39 } } };
    int rank = 0;
    for (const K &k : kernels) {
        KernelRecord r;
        r.rank = ++rank;
        r.opType = QString::fromLatin1(k.op);
        r.name = QStringLiteral("%1_kernel_%2").arg(r.opType).arg(rank);
        r.folder = QStringLiteral("kernels/%1-%2").arg(rank, 2, 10, QLatin1Char('0')).arg(r.opType);
        r.dtype = QStringLiteral("bf16");
        r.timeUs = k.timeUs;
        r.share = k.share;
        r.calls = k.calls;
        r.floorUs = k.floorUs;
        r.maxSpeedup = k.maxX;
        r.modelSpeedupAt90 = k.modelX;
        const QByteArray code = "KERNEL_TYPE = \"" + QByteArray(k.op) + "\"\nBLOCK = 128\n";
        const Experiment base = store->addKernel(r, code, error);
        if (base.id == 0)
            return false;
        Metrics m;
        m.latencyUs = 100;
        m.speedup = 1;
        m.correct = true;
        if (!store->finishExperiment(base.id, ExperimentStatus::Baseline, m, QString(), error))
            return false;
        int attempt = 0;
        for (double speedup : k.kept) {
            const QByteArray next = code + "# attempt " + QByteArray::number(++attempt) + "\n";
            const Experiment e = store->beginExperiment(
                base.kernel, next, QStringLiteral("tune"), QStringLiteral("BLOCK_N 128 -> 256"), error);
            m.latencyUs = 100 / speedup;
            m.refLatencyUs = 100;
            m.speedup = speedup;
            m.pctPeak = 40 * speedup;
            if (e.id == 0 || !store->finishExperiment(e.id, ExperimentStatus::Kept, m, QString(), error))
                return false;
        }
    }
    nlohmann::json v = verificationDict(true);
    v["kernels"]
        = { kernelEntry("01-matmul", "matmul", true, true, -2.4, false,
                "slows the model down: -2.40% (removing it makes the model faster beyond the 1.00% noise)"),
              kernelEntry("02-matmul", "matmul", true, true, 1.2, true, nullptr),
              kernelEntry("03-matmul", "matmul", true, true, 0.1, true, nullptr),
              kernelEntry("04-matmul", "matmul", true, true, 0.9, true, nullptr),
              kernelEntry("05-flash_attention", "flash_attention", false, true, 0, false,
                  "not plugged: an attention mask is given (the contract is causal, no mask)"),
              kernelEntry("06-layernorm", "layernorm", true, true, 0.8, true, nullptr) };
    v["final_set"] = { "02-matmul", "03-matmul", "04-matmul", "06-layernorm" };
    v["timings"]["eager+ours"] = { { "median_us", 14790.0 }, { "speedup_vs_eager", 15230.0 / 14790.0 } };
    v["timings"]["compile+ours"] = { { "median_us", 11640.0 }, { "speedup_vs_eager", 15230.0 / 11640.0 },
        { "speedup_vs_compile", 11890.0 / 11640.0 } };
    v["model_speedup"] = 15230.0 / 14790.0;
    return store->writeVerification(v, error);
}

} // namespace ak::test
