"""#40 items 1-2 on the CPU: regions larger than one op. The profiler merges a residual add and the norm
that reads its sum (add_rmsnorm / add_layernorm), a gated MLP (fused_mlp: three GEMMs and SiLU*mul) and a
linear's activation (into the matmul row) from the call-site structure it records; the time moves into
the region and is never counted twice; the region's contract comes from the norm's facts; the CPU
starters fuse and pass the harness, a kernel that ignores an attribute does not; plug-check plugs each
region into the model at its sites with parity. Models: the bundled llama and bert examples,
fidelity_model.py, and heldout_regions_model.py (transformers/timm-style code written for this test)."""

import copy
import os
import shutil
import tempfile
import unittest

import akprofile
from harness import extract, ops
from harnesstest import TempDirMixin, run, write_kernel
from modelplug import plugcheck

HERE = os.path.dirname(os.path.abspath(__file__))
FIDELITY = os.path.join(HERE, "fidelity_model.py")
HELDOUT = os.path.join(HERE, "heldout_regions_model.py")
_PROFILES = {}


def profile(model):
    """(profile reply, the rows as they were before regions merged), cached per model."""
    if model not in _PROFILES:
        seen = {}
        original = akprofile._regions

        def spy(rows, capture):
            seen["before"] = copy.deepcopy(rows)
            return original(rows, capture)
        akprofile._regions = spy
        try:
            out = akprofile.handle({"model": model, "device": "cpu", "dtype": "fp32", "warmup": 0, "iterations": 1})
        finally:
            akprofile._regions = original
        _PROFILES[model] = (out, seen["before"])
    return _PROFILES[model]


def region_rows(out, op):
    return [r for r in out["kernels"] if r["aten_op"] == "region::" + op]


def sites_of(rows):
    return sorted(s["module"] for r in rows for s in r["call_sites"])


class Detection(unittest.TestCase):
    def test_llama_example(self):
        out, before = profile("llama")
        self.assertNotIn("capture_error", out)
        self.assertEqual(sites_of(region_rows(out, "add_rmsnorm")),
                         ["layers.0.mlp_norm@add:layers.0#0", "layers.1.attn_norm@add:layers.0#1",
                          "layers.1.mlp_norm@add:layers.1#0", "norm@add:layers.1#1"])
        mlp = region_rows(out, "fused_mlp")
        self.assertEqual(sites_of(mlp), ["layers.0.mlp", "layers.1.mlp"])
        self.assertEqual(mlp[0]["shapes"], [[2, 64, 128], [352, 128], [352, 128], [128, 352]])
        covers = {(c["op"], c["site"]) for c in mlp[0]["covers"]}
        for proj in ("w_gate", "w_up", "w_down"):
            self.assertIn(("matmul", "layers.0.mlp." + proj), covers)
        self.assertIn(("silu", "layers.0.mlp"), covers)
        self.assertIn(("mul", "layers.0.mlp"), covers)
        # The swallowed sites have no row of their own any more; the first layer's norm (fed by the
        # embedding, not an add) stays an rmsnorm row.
        swallowed = ("layers.0.mlp_norm", "layers.1.attn_norm", "layers.1.mlp_norm", "norm", "layers.0.mlp.w_gate")
        for row in out["kernels"]:
            if row["aten_op"].startswith("region::"):
                continue
            for s in row["call_sites"]:
                self.assertNotIn(s["module"], swallowed, row["aten_op"])
        self.assertTrue(any(s["module"] == "layers.0.attn_norm" for r in out["kernels"] if r["aten_op"] == "aten::pow"
                            for s in r["call_sites"]))
        self.assert_time_moved(out, before)

    def assert_time_moved(self, out, before):
        total_before = sum(r["time_us"] for r in before)
        self.assertAlmostEqual(sum(r["time_us"] for r in out["kernels"]), total_before, delta=1e-6 * total_before)
        self.assertAlmostEqual(out["total_time_us"], total_before, delta=1e-6 * total_before)
        for row in out["kernels"]:
            if row.get("covers"):
                own = sum(s["time_us"] for s in row["call_sites"])
                self.assertAlmostEqual(row["time_us"], own, delta=1e-6 * max(1.0, own))
                self.assertGreater(row["time_us"], 0.0)
        for row in region_rows(out, "add_rmsnorm") + region_rows(out, "add_layernorm"):
            for s in row["call_sites"]:
                covered = [c["time_us"] for c in row["covers"] if c["site"] in (s["call"]["add"]["site"],
                                                                                  s["module"].split("@")[0])]
                self.assertGreater(min(covered), 0.0)   # the add's and the norm's own time both moved

    def test_bert_example_post_norm_and_gelu(self):
        out, before = profile("bert")
        rows = region_rows(out, "add_layernorm")
        self.assertEqual(sites_of(rows), ["layers.0.ln1@add:layers.0#0", "layers.0.ln2@add:layers.0#1",
                                          "layers.1.ln1@add:layers.1#0", "layers.1.ln2@add:layers.1#1"])
        self.assertEqual(rows[0]["shapes"], [[2, 64, 128], [2, 64, 128], [128], [128]])
        fc1 = [r for r in out["kernels"] if r.get("covers") and not r["aten_op"].startswith("region::")]
        self.assertEqual(len(fc1), 1)
        self.assertEqual(sorted(s["module"] for s in fc1[0]["call_sites"]), ["layers.0.fc1", "layers.1.fc1"])
        self.assertEqual(sorted(c["op"] for c in fc1[0]["covers"]), ["gelu", "gelu"])
        self.assertFalse([r for r in out["kernels"] if r["aten_op"] == "aten::gelu"])   # no GELU row left
        self.assert_time_moved(out, before)

    def test_held_out_transformers_style_model(self):
        out, before = profile(HELDOUT)
        self.assertEqual(sites_of(region_rows(out, "add_rmsnorm")), [
            "layers.0.post_attention_layernorm@add:layers.0#0", "layers.1.input_layernorm@add:layers.0#1",
            "layers.1.post_attention_layernorm@add:layers.1#0", "layers.2.input_layernorm@add:layers.1#1",
            "layers.2.post_attention_layernorm@add:layers.2#0", "norm@add:layers.2#1"])
        self.assertEqual(sites_of(region_rows(out, "add_layernorm")), [
            "blocks.0.norm2@add:blocks.0#0", "blocks.1.norm1@add:blocks.0#1", "blocks.1.norm2@add:blocks.1#0",
            "fc_norm@add:blocks.1#1"])
        mlp = region_rows(out, "fused_mlp")
        self.assertEqual(sites_of(mlp), ["layers.0.mlp", "layers.1.mlp", "layers.2.mlp"])
        self.assertIn(("silu", "layers.0.mlp.act_fn"), {(c["op"], c["site"]) for c in mlp[0]["covers"]})
        # The region's contract comes from the norm's own facts: LlamaRMSNorm's variance_epsilon.
        attrs, refused = ops.get("add_rmsnorm").contract_from_sites(
            [s["call"] for s in region_rows(out, "add_rmsnorm")[0]["call_sites"]])
        self.assertEqual((attrs, refused), ({"eps": 1e-6, "offset": 0.0}, ""))
        attrs, refused = ops.get("add_layernorm").contract_from_sites(
            [s["call"] for s in region_rows(out, "add_layernorm")[0]["call_sites"]])
        self.assertEqual((attrs, refused), ({"eps": 1e-6, "bias": True}, ""))
        self.assertEqual(ops.get("fused_mlp").contract_from_sites([s["call"] for s in mlp[0]["call_sites"]]),
                         ({}, ""))
        self.assert_time_moved(out, before)

    def test_fidelity_model_contracts(self):
        out, _ = profile(FIDELITY)
        rms = region_rows(out, "add_rmsnorm")
        self.assertEqual(sites_of(rms), ["layers.1.input_layernorm@add:layers.0#1"])
        self.assertEqual(ops.get("add_rmsnorm").contract_from_sites([s["call"] for s in rms[0]["call_sites"]]),
                         ({"eps": 1e-5, "offset": 1.0}, ""))
        by_bias = {}
        for row in region_rows(out, "add_layernorm"):
            attrs, refused = ops.get("add_layernorm").contract_from_sites([s["call"] for s in row["call_sites"]])
            self.assertEqual(refused, "")
            by_bias[attrs["bias"]] = (attrs["eps"], sites_of([row]))
        self.assertEqual(by_bias, {True: (1e-6, ["layers.0.post_layernorm@add:layers.0#0",
                                                 "layers.1.post_layernorm@add:layers.1#0"]),
                                   False: (1e-6, ["norm@add:layers.1#1"])})

    def test_what_is_not_a_region(self):
        tmp = tempfile.mkdtemp(prefix="not-regions-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "not_regions.py")
        with open(path, "w") as f:
            f.write(NOT_REGIONS)
        out, before = profile(path)
        self.assertNotIn("capture_error", out)
        self.assertEqual([r["aten_op"] for r in out["kernels"] if r["aten_op"].startswith("region::")], [])
        # Only the gate projection took its GELU (a linear + activation); nothing else moved.
        covering = [r for r in out["kernels"] if r.get("covers")]
        self.assertEqual([[s["module"] for s in r["call_sites"]] for r in covering], [["mlp.gate_proj"]])
        self.assertEqual([c["op"] for c in covering[0]["covers"]], ["gelu"])
        # The GELU's own row is the only one gone: apply() also drops a row whose every call site has no
        # calls (none moved there; how many such rows a profile has depends on what the profiler
        # attributed where, which varied once on a loaded machine), so those are not counted.
        live = [r for r in before if not r.get("call_sites") or any(s.get("calls", 0) > 1e-9 for s in r["call_sites"])]
        self.assertEqual(len(out["kernels"]), len(live) - 1)
        # The GELU-gated MLP's projections stay matmul rows of their own (by op type: which aten op a row
        # is named by, aten::linear or the addmm/mm under it, varied on a loaded machine).
        linears = {s["module"] for r in out["kernels"] for s in r["call_sites"] if r["aten_op"] in MATMUL_OPS}
        self.assertTrue({"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"} <= linears, linears)

    def test_refused_gated_mlp_and_broadcast_add(self):
        gelu_mlp = {"kind": "region", "module": "mlp", "gate": {"activation": "gelu"}, "up": {}, "down": {}}
        _, refused = ops.get("fused_mlp").contract_from_sites([gelu_mlp])
        self.assertIn("SiLU only", refused)
        broadcast = {"kind": "region", "module": "n@add:b#0", "norm": {"kind": "module", "args": {"eps": 1e-6}},
                     "add": {"tensors": [{"shape": [2, 8, 32]}, {"shape": [1, 8, 32]}]}}
        _, refused = ops.get("add_rmsnorm").contract_from_sites([broadcast])
        self.assertIn("broadcasts", refused)


MATMUL_OPS = ("aten::linear", "aten::addmm", "aten::mm", "aten::matmul")
NOT_REGIONS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class GeGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj, self.up_proj = nn.Linear(16, 24, bias=False), nn.Linear(16, 24, bias=False)
        self.down_proj = nn.Linear(24, 16, bias=False)

    def forward(self, x):
        return self.down_proj(F.gelu(self.gate_proj(x)) * self.up_proj(x))


class LayerNorm2d(nn.LayerNorm):
    """timm's: channels of NCHW normalised by permuting them last (not the sum's last dim)."""

    def forward(self, x):
        x = F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln2d = LayerNorm2d(16)
        self.pos = nn.Parameter(torch.randn(1, 6, 16))
        self.ln_pos, self.ln_shared, self.ln_inplace = nn.LayerNorm(16), nn.LayerNorm(16), nn.LayerNorm(16)
        self.gn = nn.GroupNorm(4, 16)
        self.mlp = GeGLU()

    def forward(self, x):
        a = self.ln_pos(x + self.pos)                       # broadcast: not a residual add
        b = self.ln_shared(a + x) + self.ln_shared(x)       # one norm called twice
        h = b.clone()
        h += x                                              # in place
        c = self.ln_inplace(h)
        g = self.gn((c + x).reshape(-1, 16))                # GroupNorm: no formula of ours
        im = g.reshape(2, 16, 2, 3)
        d = self.ln2d(im + im.flip(-1))                     # channels-first: not the sum's last dim
        return self.mlp((g + d.reshape(-1, 16)).reshape(x.shape))


def get_model():
    return M()


def get_inputs():
    return [torch.randn(2, 6, 16)]
'''


WRONG_SUM = '''
import torch
KERNEL_TYPE = "add_rmsnorm"
def kernel_fn(x, residual, weight):
    xf = x.float()            # normalises x, not the sum: forgot the residual
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()
    return torch.stack(((x + residual), y.to(x.dtype)))
'''


def starter_with(op, attrs):
    """The CPU starter hard-wired to `attrs` (no CONTRACT literal: the folder's contract decides)."""
    with open(os.path.join(extract.STARTERS_DIR, "cpu", op + ".py"), encoding="utf-8") as f:
        src = f.read()
    assert 'globals().get("CONTRACT", {})' in src
    return src.replace('globals().get("CONTRACT", {})', repr(attrs))


class Starters(TempDirMixin, unittest.TestCase):
    CASES = (("add_rmsnorm", {"eps": 1e-5, "offset": 1.0}, [[6, 96], [6, 96], [96]],
              [{"eps": 1e-6, "offset": 1.0}, {"eps": 1e-5, "offset": 0.0}]),
             ("add_layernorm", {"eps": 1e-6, "bias": True}, [[6, 96], [6, 96], [96], [96]],
              [{"eps": 1e-5, "bias": True}]),
             ("add_layernorm", {"eps": 1e-5, "bias": False}, [[6, 96], [6, 96], [96]],
              [{"eps": 1e-6, "bias": False}]))

    def test_each_contract_passes_and_a_wrong_attribute_is_caught(self):
        for op, attrs, shapes, wrongs in self.CASES:
            with self.subTest(op=op, attrs=attrs):
                out = extract.handle({"op_type": op, "device": "cpu", "dtype": "float32", "shapes": shapes,
                                      "attrs": attrs})
                self.assertEqual(out["contract"], {"op_type": op, "attrs": attrs, "refused": ""})
                path = write_kernel(self.tmp, "%s.py" % op, out["kernel_py"])
                r = run(path, contract={"op_type": op, "attrs": attrs})
                self.assertEqual(r["status"], "ok", r["failure"])
            for wrong in wrongs:
                with self.subTest(op=op, attrs=attrs, wrong=wrong):
                    path = write_kernel(self.tmp, "%s_wrong.py" % op, starter_with(op, wrong))
                    r = run(path, contract={"op_type": op, "attrs": attrs})
                    self.assertEqual(r["status"], "incorrect", "a %r kernel passed a %r folder" % (wrong, attrs))

    def test_a_kernel_that_normalises_the_wrong_tensor_is_caught(self):
        path = write_kernel(self.tmp, "wrong_sum.py", WRONG_SUM)
        r = run(path, contract={"op_type": "add_rmsnorm", "attrs": {"eps": 1e-6}})
        self.assertEqual(r["status"], "incorrect", r)

    def test_the_harness_counts_the_fused_bytes(self):
        spec = ops.get("add_rmsnorm")
        self.assertEqual(spec.bytes({"M": 10, "N": 8}, 2), (4 * 80 + 8) * 2)   # x, r read; h, y written
        spec = ops.get("add_layernorm").bind({"bias": True})
        self.assertEqual(spec.bytes({"M": 10, "N": 8}, 2), (4 * 80 + 16) * 2)


def region_folders(model, tmp):
    """One kernel folder per region row of the model's profile: the CPU starter rendered by extract under
    the contract the row's facts give, with the row's region sites."""
    out, _ = profile(model)
    kernels = []
    for op in ("add_rmsnorm", "add_layernorm", "fused_mlp"):
        for i, row in enumerate(region_rows(out, op)):
            attrs, refused = ops.get(op).contract_from_sites([s["call"] for s in row["call_sites"]])
            assert refused == "", (op, refused)
            text, _ = extract.render(ops.get(op).bind(attrs), "cpu", "float32", [], op, attrs)
            path = os.path.join(tmp, "%s_%d.py" % (op, i))
            with open(path, "w") as f:
                f.write(text)
            kernels.append({"name": "%s-%d" % (op, i), "op_type": op, "path": path,
                            "sites": sites_of([row])})
    return kernels


class PlugCheck(unittest.TestCase):
    """The region's starter, rendered by extract under the contract its facts give, plugged into the model
    at every region site by the `plugcheck` op: every call routes, none falls back, the outputs keep
    parity. A site whose add ordinal names another add, or a kernel with another eps, is not pluggable."""

    def folders(self, model, tmp):
        return region_folders(model, tmp)

    def check(self, model):
        tmp = tempfile.mkdtemp(prefix="regions-plug-")
        self.addCleanup(shutil.rmtree, tmp, True)
        kernels = self.folders(model, tmp)
        self.assertGreaterEqual(len(kernels), 2)
        reply = plugcheck.handle({"model_path": model, "device": "cpu", "dtype": "float32", "seed": 5,
                                  "kernels": kernels})
        for k in reply["kernels"]:
            with self.subTest(model=os.path.basename(model), kernel=k["name"]):
                self.assertTrue(k["pluggable"], k)
                self.assertEqual(sorted(k["plugged_sites"]), sorted(k["sites"]))
                self.assertEqual(k["routed_calls"], len(k["sites"]))
                self.assertTrue(k["parity"]["ok"])
        return kernels

    def test_fidelity_model(self):
        self.check(FIDELITY)

    def test_held_out_model(self):
        self.check(HELDOUT)

    def test_llama_example(self):
        self.check(akprofile.resolve_model_path("llama"))

    def test_a_wrong_ordinal_or_eps_is_not_pluggable(self):
        tmp = tempfile.mkdtemp(prefix="regions-plug-")
        self.addCleanup(shutil.rmtree, tmp, True)
        kernels = [k for k in self.folders(HELDOUT, tmp) if k["op_type"] == "add_rmsnorm"]
        wrong_site = dict(kernels[0], name="wrong-ordinal",
                          sites=["layers.0.post_attention_layernorm@add:layers.0#1"])   # #1 feeds layers.1
        eps_path = os.path.join(tmp, "eps.py")
        with open(eps_path, "w") as f:
            f.write(extract.render(ops.get("add_rmsnorm"), "cpu", "float32", [], "eps", {"eps": 1e-5})[0])
        wrong_eps = dict(kernels[0], name="wrong-eps", path=eps_path)
        reply = plugcheck.handle({"model_path": HELDOUT, "device": "cpu", "dtype": "float32", "seed": 5,
                                  "kernels": [wrong_site, wrong_eps]})
        by_name = {k["name"]: k for k in reply["kernels"]}
        self.assertFalse(by_name["wrong-ordinal"]["pluggable"])
        self.assertIn("fell back", by_name["wrong-ordinal"]["reason"])
        self.assertFalse(by_name["wrong-eps"]["pluggable"])
        self.assertIn("eps", by_name["wrong-eps"]["reason"])


class CompilePath(unittest.TestCase):
    """What the compile path (modelplug/plug/customops.py, #40 item 3) needs of a region: its arity
    and fake shape, matching the CPU starters' real outputs; and under torch.compile the region plug
    steps aside (inductor fuses the add and the norm itself)."""

    def test_fake_shapes_match_the_starters(self):
        import torch
        from modelplug import plug
        g = torch.Generator().manual_seed(0)
        for op, attrs, n in (("add_rmsnorm", {}, 3), ("add_layernorm", {"bias": True}, 4),
                             ("add_layernorm", {"bias": False}, 3)):
            with self.subTest(op=op, attrs=attrs):
                text, _ = extract.render(ops.get(op).bind(attrs), "cpu", "float32", [], op, attrs)
                scope = {}
                exec(compile(text, op, "exec"), scope)
                args = [torch.randn(6, 8, generator=g), torch.randn(6, 8, generator=g)] + \
                    [torch.randn(8, generator=g) for _ in range(n - 2)]
                self.assertEqual(plug.arity(op, attrs), n)
                out = scope["kernel_fn"](*args)
                self.assertEqual(tuple(out.shape), plug.fake_shape(op, attrs, [a.shape for a in args]))

    def test_under_compile_the_region_steps_aside(self):
        import torch
        from modelplug import plug
        tmp = tempfile.mkdtemp(prefix="regions-compile-")
        self.addCleanup(shutil.rmtree, tmp, True)
        k = [k for k in region_folders(HELDOUT, tmp) if k["op_type"] == "add_rmsnorm"][0]
        module, _ = plug.load_kernel(k["path"], "compile_aside")
        spec = akprofile.load_model_module(HELDOUT)
        torch.manual_seed(0)
        model = spec.get_model().eval()
        x = spec.get_inputs()
        with torch.no_grad():
            want = model(*x)
        kernel = plug.Kernel("r", "add_rmsnorm", module.kernel_fn, k["sites"], torch.float32,
                             contract=plug.contract_of(module))
        plugged = plug.Plugged(model, [kernel])
        saved = plug.regions._compiling        # what the region code asks
        plug.regions._compiling = lambda: True
        try:
            with torch.no_grad():
                got = model(*x)
        finally:
            plug.regions._compiling = saved
            plugged.restore()
        self.assertTrue(torch.equal(got, want))
        self.assertEqual((kernel.routed, kernel.fallbacks), (0, {}))


if __name__ == "__main__":
    unittest.main()
