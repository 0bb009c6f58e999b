"""#38 on the CPU: the profiler records each call site's own call (eps, weight offset, bias present,
causal or not and the scale, exact GELU, NeoX rotary through the model's apply_rotary_pos_emb), the
plug routes a call only when the kernel's CONTRACT says the same, and the `plugcheck` op reports each
kernel pluggable with parity, or not pluggable with the reason (eps 1e-6 where the model has 1e-5,
causal where it is not, ...). The model is fidelity_model.py, profiled with akprofile.handle as a
user's file would be; the kernels are small CPU kernel.py files written here, each honouring its
CONTRACT's attributes as the starters do.

torch 1.13 (the CI's) has no F.scaled_dot_product_attention: a pure-Python stand-in of the same name
and signature is installed for this module, overridable like torch's own functions, so the capture
and the plug see the call as they would on torch 2.x."""

import json
import math
import os
import shutil
import tempfile
import unittest

import torch
import torch.nn.functional as F

import akcapture
import akprofile
from modelplug import plug, plugcheck

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "fidelity_model.py")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    from torch.overrides import handle_torch_function, has_torch_function
    if has_torch_function((query, key, value)):
        return handle_torch_function(scaled_dot_product_attention, (query, key, value), query, key, value,
                                     attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale)
    s = query @ key.transpose(-2, -1) * (scale if scale is not None else 1.0 / math.sqrt(query.shape[-1]))
    if is_causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ value


_OWN_SDPA = hasattr(F, "scaled_dot_product_attention")


def setUpModule():
    if not _OWN_SDPA:
        F.scaled_dot_product_attention = scaled_dot_product_attention


def tearDownModule():
    if not _OWN_SDPA and F.__dict__.get("scaled_dot_product_attention") is scaled_dot_product_attention:
        del F.scaled_dot_product_attention


# Kernel bodies: each reads its own CONTRACT's attributes, as a starter does once extract writes them.
KERNELS = {
    "rmsnorm": '''
def kernel_fn(x, weight):
    a = CONTRACT["attrs"]
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + a["eps"]) * (a["offset"] + weight.float())
    return y.to(x.dtype)
''',
    "layernorm": '''
def kernel_fn(x, weight, bias=None):
    a = CONTRACT["attrs"]
    assert (bias is not None) == a["bias"]
    mu = x.mean(-1, keepdim=True)
    y = (x - mu) * torch.rsqrt((x - mu).pow(2).mean(-1, keepdim=True) + a["eps"]) * weight
    return y + bias if bias is not None else y
''',
    "flash_attention": '''
def kernel_fn(q, k, v):
    a = CONTRACT["attrs"]
    scale = a["scale"] if a["scale"] is not None else 1.0 / math.sqrt(q.shape[-1])
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if a["causal"]:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    p = torch.exp(s - s.amax(-1, keepdim=True))
    return torch.matmul(p / p.sum(-1, keepdim=True), v)
''',
    "matmul": '''
def kernel_fn(a, b, bias=None):
    assert (bias is not None) == CONTRACT["attrs"]["bias"]
    y = torch.mm(a, b)
    y = y + bias if bias is not None else y
    act = CONTRACT["attrs"]["activation"]
    if act == "gelu":
        return 0.5 * y * (1.0 + torch.erf(y / math.sqrt(2.0)))
    return y
''',
    "gelu": '''
def kernel_fn(x):
    if CONTRACT["attrs"]["approximate"] == "tanh":
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
''',
    "softmax": '''
def kernel_fn(x):
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)
''',
    "rotary_embedding": '''
def kernel_fn(x, cos, sin):
    assert CONTRACT["attrs"]["layout"] == "neox"
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
''',
    # Interleaved pairs under a NeoX contract: routed everywhere, and parity catches it.
    "rotary_interleaved": '''
def kernel_fn(x, cos, sin):
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)
''',
}


def write_kernel(directory, name, op_type, contract, body=None):
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as f:
        f.write("import math\nimport torch\n\nKERNEL_TYPE = %r\nCONTRACT = %s\n%s"
                % (op_type, json.dumps(contract).replace("null", "None").replace("true", "True")
                   .replace("false", "False"), KERNELS[body or op_type]))
    return path


def profile():
    return akprofile.handle({"model": MODEL, "device": "cpu", "dtype": "fp32", "warmup": 1, "iterations": 1})


def sites_by_call(result):
    """module qualname -> its call facts, over every row's call sites (one set of facts per site and
    function name)."""
    out = {}
    for row in result["kernels"]:
        for cover in row.get("covers") or []:
            if cover.get("call"):           # a call a region swallowed (a linear's GELU)
                out.setdefault(cover["site"], {})[cover["call"]["name"]] = cover["call"]
        for site in row["call_sites"]:
            call = site.get("call")
            if call and call.get("kind") == "region" and isinstance(call.get("norm"), dict):
                # A residual add + norm region (#40, test_regions.py) carries the norm's own facts.
                call = call["norm"]
                out.setdefault(call["module"], {})[call["name"]] = call
            elif call:
                out.setdefault(site["module"], {})[call["name"]] = call
    return out


class Facts(unittest.TestCase):
    """What the profiler records per call site."""

    @classmethod
    def setUpClass(cls):
        cls.result = profile()
        cls.sites = sites_by_call(cls.result)

    def call(self, site, suffix):
        calls = self.sites.get(site, {})
        found = [c for name, c in calls.items() if name.endswith(suffix)]
        self.assertEqual(len(found), 1, "%s at %s: %s" % (suffix, site, sorted(calls)))
        return found[0]

    def test_no_capture_error(self):
        self.assertNotIn("capture_error", self.result)

    def test_gemma_rmsnorm_offset_and_eps_from_the_probe(self):
        for layer in (0, 1):
            c = self.call("layers.%d.input_layernorm" % layer, "GemmaRMSNorm")
            self.assertEqual(c["kind"], "module")
            self.assertEqual(c["args"]["eps"], 1e-5)
            self.assertEqual(c["params"], {"weight": [32]})
            self.assertEqual(c["probe"]["formula"], "rmsnorm")
            self.assertEqual(c["probe"]["offset"], 1.0)
            self.assertEqual(c["probe"]["eps"], 1e-5)
            self.assertLess(c["probe"]["max_err"], 1e-5)

    def test_the_probe_tells_eps_and_offset_apart_and_restores_the_weight(self):
        import importlib.util
        spec = importlib.util.spec_from_file_location("fm_probe", MODEL)
        fm = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fm)
        for eps in (1e-5, 1e-6, 1e-8):
            norm = fm.GemmaRMSNorm(16, eps=eps)
            del norm.eps                    # no attribute: eps comes from the behaviour alone
            norm._norm = lambda x, e=eps: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + e)
            before = norm.weight.detach().clone()
            probe = akcapture.probe_norm(norm)
            self.assertEqual((probe.get("eps"), probe.get("offset")), (eps, 1.0), probe)
            self.assertTrue(torch.equal(norm.weight, before))
        plain = torch.nn.LayerNorm(16, eps=1e-6)
        probe = akcapture.probe_norm(plain)
        self.assertEqual((probe["formula"], probe["offset"], probe["eps"]), ("layernorm", 0.0, 1e-6), probe)

    def test_layernorm_eps_and_bias(self):
        c = self.call("layers.0.post_layernorm", "functional.layer_norm")
        self.assertEqual(c["args"]["eps"], 1e-6)
        self.assertEqual(c["args"]["normalized_shape"], [32])
        self.assertEqual([t["arg"] for t in c["tensors"]], ["input", "weight", "bias"])
        self.assertEqual(c["module_class"], "torch.nn.modules.normalization.LayerNorm")
        nobias = self.call("norm", "functional.layer_norm")
        self.assertIsNone(nobias["args"]["bias"])
        self.assertEqual(nobias["args"]["eps"], 1e-6)
        self.assertEqual([t["arg"] for t in nobias["tensors"]], ["input", "weight"])

    def test_attention_not_causal_with_its_scale(self):
        c = self.call("layers.0.attn", "scaled_dot_product_attention")
        self.assertEqual(c["args"]["is_causal"], False)
        self.assertIsNone(c["args"]["attn_mask"])
        self.assertAlmostEqual(c["args"]["scale"], 0.5 / math.sqrt(8))
        self.assertEqual(c["tensors"][0]["shape"], [2, 4, 16, 8])
        self.assertFalse(c["tensors"][0]["contiguous"])     # q after transpose(1, 2): its layout is recorded
        softmax = self.call("layers.1.attn", "functional.softmax")
        self.assertEqual(softmax["args"]["dim"], -1)

    def test_exact_gelu_and_linear_bias(self):
        self.assertEqual(self.call("layers.0.mlp.act", "gelu")["args"]["approximate"], "none")
        lin = self.call("layers.1.mlp.fc1", "functional.linear")
        self.assertEqual([t["arg"] for t in lin["tensors"]], ["input", "weight", "bias"])
        self.assertEqual(lin["tensors"][1]["shape"], [64, 32])
        self.assertEqual(lin["activation"], "gelu")        # nn.GELU takes fc1's output as it is
        self.assertNotIn("activation", self.call("layers.1.mlp.fc2", "functional.linear"))
        self.assertNotIn("activation", self.call("layers.1.attn.q_proj", "functional.linear"))

    def test_neox_rotary_through_the_models_function(self):
        c = self.call("layers.1.attn", "apply_rotary_pos_emb")
        self.assertEqual(c["name"], "akmodel_fidelity_model.apply_rotary_pos_emb")
        self.assertEqual(c["args"]["layout"], "neox")
        self.assertEqual(c["args"]["unsqueeze_dim"], 1)
        self.assertEqual([t["arg"] for t in c["tensors"]], ["q", "k", "cos", "sin"])
        self.assertEqual(c["tensors"][2]["shape"], [2, 16, 8])

    def test_rows_with_different_facts_do_not_merge(self):
        # The two layer_norm sites (bias / no bias) run the same aten op on the same shapes: two rows.
        # Both read a residual add's sum, so they are add_layernorm regions (#40) carrying the norm's facts.
        rows = [r for r in self.result["kernels"] if r["aten_op"] in ("aten::native_layer_norm", "region::add_layernorm")]

        def bias(s):
            return json.dumps(s["call"].get("norm", s["call"])["args"].get("bias", "tensor"))
        biases = sorted({bias(s) for r in rows for s in r["call_sites"]})
        self.assertEqual(biases, ['"tensor"', "null"])
        for r in rows:
            self.assertEqual(len({bias(s) for s in r["call_sites"]}), 1)


class CaptureDetails(unittest.TestCase):
    def test_one_site_called_with_two_argument_sets_has_variants(self):
        class Two(torch.nn.Module):
            def forward(self, x):
                return F.gelu(x) + F.gelu(x, approximate="tanh")
        model = torch.nn.Sequential(Two())
        cap = akcapture.capture(model, [torch.randn(3, 5)], "cpu")
        facts = cap.join("0", "gelu", "aten::gelu", [], [], [[3, 5]])
        self.assertEqual(sorted(v["args"]["approximate"] for v in facts["variants"]), ["none", "tanh"])

    def test_a_failing_capture_leaves_the_profile_and_says_why(self):
        original = akcapture.capture

        def broken(*a, **k):
            raise RuntimeError("capture broke")
        akcapture.capture = broken
        try:
            result = profile()
        finally:
            akcapture.capture = original
        self.assertEqual(result["capture_error"], "RuntimeError: capture broke")
        self.assertTrue(result["kernels"])
        self.assertFalse(any("call" in s for r in result["kernels"] for s in r["call_sites"]))


class PlugCheck(unittest.TestCase):
    """Kernels carrying the model's contract plug with parity; a wrong attribute is refused with why."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="plugcheck-")
        result = profile()
        sites = sites_by_call(result)
        by = lambda pred: sorted(s for s, calls in sites.items() if any(pred(n, c) for n, c in calls.items()))  # noqa: E731
        rms = by(lambda n, c: c.get("probe", {}).get("formula") == "rmsnorm")
        ln_bias = by(lambda n, c: n.endswith("layer_norm") and c["args"].get("bias", "t") is not None)
        ln_nobias = by(lambda n, c: n.endswith("layer_norm") and c["args"].get("bias", "t") is None)
        sdpa = by(lambda n, c: n.endswith("scaled_dot_product_attention"))
        softmax = by(lambda n, c: n.endswith("functional.softmax"))
        linear = by(lambda n, c: n.endswith("functional.linear") and "activation" not in c)
        linear_gelu = by(lambda n, c: n.endswith("functional.linear") and c.get("activation") == "gelu")
        gelu = by(lambda n, c: n.endswith("gelu"))
        rope = by(lambda n, c: n.endswith("apply_rotary_pos_emb"))
        rope_name = sites[rope[0]]["akmodel_fidelity_model.apply_rotary_pos_emb"]["name"]
        probe = sites[rms[0]]["akmodel_fidelity_model.GemmaRMSNorm"]["probe"]
        sdpa_args = sites[sdpa[0]]["torch.nn.functional.scaled_dot_product_attention"]["args"]
        cls.expect_sites = {"rmsnorm": rms, "ln_bias": ln_bias, "ln_nobias": ln_nobias, "sdpa": sdpa,
                            "softmax": softmax, "linear": linear, "linear_gelu": linear_gelu, "gelu": gelu,
                            "rope": rope}
        specs = [
            ("rmsnorm", "rmsnorm", rms, {"eps": probe["eps"], "offset": probe["offset"]}, ""),
            ("layernorm", "layernorm", ln_bias, {"eps": 1e-6, "bias": True}, ""),
            ("layernorm-nobias", "layernorm", ln_nobias, {"eps": 1e-6, "bias": False}, ""),
            ("attention", "flash_attention", sdpa, {"causal": sdpa_args["is_causal"], "scale": sdpa_args["scale"],
                                                    "kv_heads": None}, ""),
            ("softmax", "softmax", softmax, {}, ""),
            ("linear", "matmul", linear, {"bias": True, "activation": "none"}, ""),
            ("linear-gelu", "matmul", linear_gelu, {"bias": True, "activation": "gelu"}, ""),
            ("gelu", "gelu", gelu, {"approximate": "none"}, ""),
            ("rotary", "rotary_embedding", rope, {"layout": "neox"}, "function:" + rope_name),
            # Wrong contracts: each differs from the model in one attribute.
            ("wrong-rmsnorm-eps", "rmsnorm", rms, {"eps": 1e-6, "offset": 1.0}, ""),
            ("wrong-rmsnorm-offset", "rmsnorm", rms, {"eps": 1e-5, "offset": 0.0}, ""),
            ("wrong-attention-causal", "flash_attention", sdpa, {"causal": True, "scale": sdpa_args["scale"],
                                                                 "kv_heads": None}, ""),
            ("wrong-attention-scale", "flash_attention", sdpa, {"causal": False, "scale": None, "kv_heads": None}, ""),
            ("wrong-gelu-tanh", "gelu", gelu, {"approximate": "tanh"}, ""),
            ("wrong-layernorm-bias", "layernorm", ln_nobias, {"eps": 1e-6, "bias": True}, ""),
            ("wrong-linear-nobias", "matmul", linear, {"bias": False, "activation": "none"}, ""),
            ("wrong-linear-fused", "matmul", [s for s in linear if s.endswith("fc2")], {"bias": True, "activation": "gelu"},
             ""),
            ("wrong-rotary-callable", "rotary_embedding", rope, {"layout": "neox"}, "function:elsewhere.apply_rotary_pos_emb"),
            ("wrong-rotary-math", "rotary_embedding", rope, {"layout": "neox"}, "function:" + rope_name),
        ]
        kernels = []
        for name, op, ksites, attrs, callable_ in specs:
            contract = {"op_type": op, "callable": callable_, "attrs": attrs, "dtype": "float32", "sites": ksites,
                        "refused": ""}
            kernels.append({"name": name, "op_type": op, "sites": ksites,
                            "path": write_kernel(cls.tmp, name.replace("-", "_"), op, contract,
                                                 "rotary_interleaved" if name == "wrong-rotary-math" else None)})
        cls.reply = plugcheck.handle({"model_path": MODEL, "device": "cpu", "dtype": "float32", "seed": 7,
                                      "kernels": kernels})
        cls.by_name = {k["name"]: k for k in cls.reply["kernels"]}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_profile_found_every_site(self):
        e = self.expect_sites
        self.assertEqual(e["rmsnorm"], ["layers.0.input_layernorm", "layers.1.input_layernorm"])
        self.assertEqual(e["ln_bias"], ["layers.0.post_layernorm", "layers.1.post_layernorm"])
        self.assertEqual(e["ln_nobias"], ["norm"])
        self.assertEqual(e["sdpa"], ["layers.0.attn"])
        self.assertEqual(e["softmax"], ["layers.1.attn"])
        self.assertEqual(len(e["linear"]), 10)
        self.assertEqual(e["linear_gelu"], ["layers.0.mlp.fc1", "layers.1.mlp.fc1"])
        self.assertEqual(e["rope"], ["layers.0.attn", "layers.1.attn"])

    def test_kernels_with_the_models_contract_are_pluggable_with_parity(self):
        for name in ("rmsnorm", "layernorm", "layernorm-nobias", "attention", "softmax", "linear", "linear-gelu", "gelu",
                     "rotary"):
            with self.subTest(kernel=name):
                k = self.by_name[name]
                self.assertTrue(k["pluggable"], k)
                self.assertEqual(k["reason"], "")
                self.assertEqual(k["unplugged_sites"], {})
                self.assertEqual(sorted(k["plugged_sites"]), sorted(k["sites"]))
                self.assertEqual(k["fallback_calls"], {})
                self.assertGreater(k["routed_calls"], 0)
                self.assertTrue(k["parity"]["ok"], k["parity"])
                self.assertLessEqual(k["parity"]["max_err"], 1.0)
        self.assertEqual(self.by_name["rotary"]["routed_calls"], 4)       # q and k in two layers
        self.assertEqual(self.by_name["linear"]["routed_calls"], 10)
        self.assertEqual(self.by_name["linear-gelu"]["routed_calls"], 2)

    def test_a_wrong_attribute_is_not_pluggable_and_says_why(self):
        expected = {
            "wrong-rmsnorm-eps": "eps 1e-05, the kernel implements 1e-06",
            "wrong-rmsnorm-offset": "the module computes x^ * (1 + w), the kernel x^ * (0 + w)",
            "wrong-attention-causal": "not causal, the kernel is causal",
            "wrong-attention-scale": "scale 0.176777, the kernel implements 0.353553",
            "wrong-gelu-tanh": "exact gelu",
            "wrong-layernorm-bias": "layer_norm without bias, the kernel adds one",
            "wrong-linear-nobias": "linear with a bias, the kernel has none",
            "wrong-linear-fused": "the model's own gelu after the linear was not found",
            "wrong-rotary-callable": "elsewhere.apply_rotary_pos_emb is not what this module's forward calls",
        }
        for name, why in expected.items():
            with self.subTest(kernel=name):
                k = self.by_name[name]
                self.assertFalse(k["pluggable"], k)
                self.assertIn(why, k["reason"])
                if name != "wrong-linear-fused":     # routed, then found to have no activation to take out
                    self.assertEqual(k["routed_calls"], 0, k)

    def test_a_kernel_on_the_data_path_that_computes_something_else_fails_parity(self):
        k = self.by_name["wrong-rotary-math"]
        self.assertEqual(k["routed_calls"], 4, k)
        self.assertEqual(k["fallback_calls"], {})
        self.assertFalse(k["parity"]["ok"], k["parity"])
        self.assertFalse(k["pluggable"])
        self.assertIn("the model's output differs with the kernel plugged in", k["reason"])

    def test_the_model_is_restored(self):
        # Every kernel plugged and taken out again: the model's own function and forwards are back.
        fm = None
        for k in self.reply["kernels"]:
            self.assertIn("attrs", k)
        import sys
        for mod in sys.modules.values():
            if getattr(mod, "__name__", "") == "akmodel_fidelity_model":
                fm = mod
        if fm is not None:
            self.assertFalse(hasattr(fm.apply_rotary_pos_emb, "_autokernel_original"))


class Starters(unittest.TestCase):
    """The whole path with the real CPU starters: the profile's facts -> the op's contract_from_sites ->
    the starter rendered by extract with that CONTRACT -> plugcheck. Every folder plugs with parity; the
    NeoX rotary's function is found in the attention modules' globals (CONTRACT carries the attributes
    only; the folder's callable is passed as plugcheck's `callable`, and also left out here)."""

    GROUPS = {  # folder -> (op type, which facts)
        "rmsnorm": ("rmsnorm", lambda n, c: c.get("probe", {}).get("formula") == "rmsnorm"),
        "layernorm": ("layernorm", lambda n, c: n.endswith("layer_norm") and c["args"].get("bias", "t") is not None),
        "layernorm-nobias": ("layernorm", lambda n, c: n.endswith("layer_norm") and c["args"].get("bias", "t") is None),
        "attention": ("flash_attention", lambda n, c: n.endswith("scaled_dot_product_attention")),
        "softmax": ("softmax", lambda n, c: n.endswith("functional.softmax")),
        "linear": ("matmul", lambda n, c: n.endswith("functional.linear") and "activation" not in c),
        "linear-gelu": ("matmul", lambda n, c: n.endswith("functional.linear") and "activation" in c),
        "gelu": ("gelu", lambda n, c: n.endswith("gelu")),
        "rotary": ("rotary_embedding", lambda n, c: n.endswith("apply_rotary_pos_emb")),
        "rotary-named": ("rotary_embedding", lambda n, c: n.endswith("apply_rotary_pos_emb")),
    }

    def test_starters_under_the_models_contract_plug_with_parity(self):
        try:
            from harness import extract, ops
        except ImportError as e:
            self.skipTest("the harness is not importable here: %s" % e)
        sites = sites_by_call(profile())
        tmp = tempfile.mkdtemp(prefix="plugcheck-starters-")
        self.addCleanup(shutil.rmtree, tmp, True)
        kernels = []
        for folder, (op, pred) in self.GROUPS.items():
            facts = {site: c for site, calls in sites.items() for n, c in calls.items() if pred(n, c)}
            spec = ops.get(op)
            if not hasattr(spec, "contract_from_sites"):
                self.skipTest("the harness has no contract_from_sites yet")
            attrs, refused = spec.contract_from_sites(list(facts.values()))
            self.assertEqual(refused, "", folder)
            text, _ = extract.render(spec, "cpu", "float32", [], folder, attrs)
            path = os.path.join(tmp, folder.replace("-", "_") + ".py")
            with open(path, "w") as f:
                f.write(text)
            entry = {"name": folder, "op_type": op, "path": path, "sites": sorted(facts)}
            if folder == "rotary-named":
                entry["callable"] = "function:" + next(iter(facts.values()))["name"]
            kernels.append(entry)
        reply = plugcheck.handle({"model_path": MODEL, "device": "cpu", "dtype": "float32", "seed": 3,
                                  "kernels": kernels})
        for k in reply["kernels"]:
            with self.subTest(folder=k["name"]):
                self.assertTrue(k["pluggable"], k)
                self.assertEqual(sorted(k["plugged_sites"]), sorted(k["sites"]))
                self.assertTrue(k["parity"]["ok"])


class GroupedQuery(unittest.TestCase):
    def test_kv_heads_from_the_contract_repeat_kv_before_the_kernel(self):
        g = torch.Generator().manual_seed(5)
        q = torch.randn(2, 8, 6, 4, generator=g)
        k, v = torch.randn(2, 2, 6, 4, generator=g), torch.randn(2, 2, 6, 4, generator=g)
        seen = []

        def fn(q_, k_, v_):
            seen.append(k_.shape[1])
            s = torch.softmax(q_ @ k_.transpose(-1, -2) / 2.0, dim=-1)
            return s @ v_
        args, kwargs = (q, k, v), {"is_causal": False, "enable_gqa": True}
        ok = plug.Kernel("a", "flash_attention", fn, ["x"], torch.float32,
                         contract={"causal": False, "scale": None, "kv_heads": 2})
        out = plug.ADAPTERS["flash_attention"](ok, args, dict(kwargs))
        ref = torch.softmax(q @ k.repeat_interleave(4, 1).transpose(-1, -2) / 2.0, -1) @ v.repeat_interleave(4, 1)
        torch.testing.assert_close(out, ref)
        self.assertEqual(seen, [8])
        wrong = plug.Kernel("b", "flash_attention", fn, ["x"], torch.float32,
                            contract={"causal": False, "scale": None, "kv_heads": None})
        self.assertIsNone(plug.ADAPTERS["flash_attention"](wrong, args, dict(kwargs)))
        self.assertEqual(list(wrong.fallbacks), ["grouped-query with 2 K/V heads, the kernel expects 8"])
        mask = plug.Kernel("c", "flash_attention", fn, ["x"], torch.float32, contract={"causal": False})
        self.assertIsNone(plug.ADAPTERS["flash_attention"](mask, (q, q, q), {"attn_mask": torch.zeros(6, 6)}))
        self.assertIn("attn_mask", list(mask.fallbacks)[0])


class LegacyKernels(unittest.TestCase):
    def test_a_kernel_without_contract_has_the_default_attributes(self):
        k = plug.Kernel("k", "layernorm", lambda *a: None, ["x"])
        self.assertFalse(k.contracted)
        self.assertEqual(k.attrs, {"eps": 1e-5, "bias": True})
        k = plug.Kernel("k", "rmsnorm", lambda *a: None, ["x"], contract={"eps": 1e-5, "offset": 1.0})
        self.assertEqual(k.attrs, {"eps": 1e-5, "offset": 1.0})


if __name__ == "__main__":
    unittest.main()


class Conv1DAddmm(unittest.TestCase):
    """GPT-2's Conv1D: torch.addmm(bias, x, weight[in, out]) plugs into a matmul folder with bias (the
    CPU starter as extract renders it from the profiled facts); a folder without bias is refused."""

    def test_addmm_sites_plug_with_parity(self):
        try:
            from harness import extract, ops
        except ImportError as e:
            self.skipTest("the harness is not importable here: %s" % e)
        model = os.path.join(HERE, "gpt2_conv1d_model.py")
        result = akprofile.handle({"model": model, "device": "cpu", "dtype": "fp32", "warmup": 1, "iterations": 1})
        facts = {site: c for site, calls in sites_by_call(result).items() for n, c in calls.items()
                 if n == "torch.addmm"}
        self.assertEqual(sorted(facts), ["h.0.c_fc", "h.0.c_proj", "h.1.c_fc", "h.1.c_proj"])
        spec = ops.get("matmul")
        attrs, refused = spec.contract_from_sites(list(facts.values()))
        self.assertEqual((attrs.get("bias"), refused), (True, ""))
        tmp = tempfile.mkdtemp(prefix="plugcheck-addmm-")
        self.addCleanup(shutil.rmtree, tmp, True)
        kernels = []
        for name, a in (("addmm", attrs), ("addmm-nobias", dict(attrs, bias=False)), ("linear", attrs)):
            text, _ = extract.render(spec, "cpu", "float32", [], name, a)
            path = os.path.join(tmp, name.replace("-", "_") + ".py")
            with open(path, "w") as f:
                f.write(text)
            kernels.append({"name": name, "op_type": "matmul", "path": path, "sites": sorted(facts),
                            "callable": "function:torch.nn.functional.linear" if name == "linear" else
                            "function:torch.addmm"})
        reply = plugcheck.handle({"model_path": model, "device": "cpu", "dtype": "float32", "seed": 3,
                                  "kernels": kernels})
        by = {k["name"]: k for k in reply["kernels"]}
        ok = by["addmm"]
        self.assertTrue(ok["pluggable"], ok)
        self.assertEqual(ok["routed_calls"], 4)
        self.assertEqual(ok["fallback_calls"], {})
        self.assertTrue(ok["parity"]["ok"], ok["parity"])
        self.assertFalse(by["addmm-nobias"]["pluggable"])
        self.assertIn("addmm adds a bias, the kernel has none", json.dumps(by["addmm-nobias"]))
        # An addend that is no bias row (a 0-d scalar, a column, a full [M, N]) falls back with the reason.
        k = plug.Kernel("a", "matmul", lambda *a: self.fail("ran"), ["x"], torch.float32,
                        contract={"bias": True, "activation": "none"}, callable="function:torch.addmm")
        x, w = torch.randn(3, 4), torch.randn(4, 5)
        for addend in (torch.tensor(1.0), torch.randn(5, 1), torch.randn(3, 5)):
            self.assertIsNone(plug.ADAPTERS["matmul"](k, (addend, x, w), {"__name": "addmm"}))
        self.assertEqual(dict(k.fallbacks), {"addmm's addend is not a bias row [N]": 3})
        # A Linear's folder at these sites: the addmm calls are another folder's, not its fallbacks.
        self.assertEqual(by["linear"]["fallback_calls"], {})
        self.assertEqual(by["linear"]["routed_calls"], 0)
