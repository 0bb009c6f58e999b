"""Contract attributes (docs/contracts.md, #38): per semantic, the CPU starter extracted for that
contract passes the harness and a kernel written for the wrong attribute is rejected as incorrect;
CONTRACT literal vs the folder's contract; contract_from_sites; extract's CONTRACT."""

import os
import unittest

from harnesstest import STARTERS, TempDirMixin, run, write_kernel

from harness import extract, ops
from harness.runners import loader

IGNORES_BIAS = """
import torch
import torch.nn.functional as F
KERNEL_TYPE = "matmul"
def kernel_fn(A, B, bias=None):
    return F.gelu(torch.matmul(A.float(), B.float())).to(A.dtype)
"""

# op -> (the folder's attributes, [(what the wrong kernel does, its attributes or source), ...],
#        extract shapes)
SEMANTICS = {
    "rmsnorm": ({"eps": 1e-5, "offset": 1.0},
                [("eps 1e-6", {"eps": 1e-6, "offset": 1.0}), ("offset 0", {"eps": 1e-5, "offset": 0.0})],
                [[6, 96], [96]]),
    "layernorm": ({"eps": 1e-6, "bias": False},
                  [("eps 1e-5", {"eps": 1e-5, "bias": False})],
                  [[6, 96], [96]]),
    "flash_attention": ({"causal": False, "scale": 0.3},
                        [("causal", {"causal": True, "scale": 0.3}), ("scale 1/sqrt(D)", {"causal": False})],
                        [[1, 2, 24, 16], [1, 2, 24, 16], [1, 2, 24, 16]]),
    "matmul": ({"bias": True, "activation": "gelu"},
               [("no bias", IGNORES_BIAS), ("tanh gelu", {"bias": True, "activation": "gelu_tanh"})],
               [[24, 32], [32, 40]]),
    "gelu": ({"approximate": "none"}, [("tanh", {"approximate": "tanh"})], [[6, 96]]),
    "rotary_embedding": ({"layout": "neox"}, [("interleaved", {"layout": "interleaved"})],
                         [[1, 2, 12, 16], [12, 8], [12, 8]]),
}


def starter_source(op):
    with open(os.path.join(STARTERS, "cpu", op + ".py"), encoding="utf-8") as f:
        return f.read()


def wrong_kernel(op, attrs):
    """The CPU starter hard-wired to `attrs`, with no CONTRACT literal (the folder's contract decides);
    a string is the kernel's source itself."""
    if isinstance(attrs, str):
        return attrs
    src = starter_source(op)
    assert 'globals().get("CONTRACT", {})' in src, op
    return src.replace('globals().get("CONTRACT", {})', repr(attrs))


class Semantics(TempDirMixin, unittest.TestCase):
    def test_each_attribute_passes_and_the_wrong_one_is_caught(self):
        for op, (attrs, wrongs, shapes) in SEMANTICS.items():
            with self.subTest(op=op):
                out = extract.handle({"op_type": op, "device": "cpu", "dtype": "float32", "shapes": shapes,
                                      "attrs": attrs})
                want = ops.get(op).check_attrs(attrs)
                self.assertEqual(out["contract"], {"op_type": op, "attrs": want, "refused": ""})
                path = write_kernel(self.tmp, "%s.py" % op, out["kernel_py"])
                self.assertEqual(loader.read_static(path)["CONTRACT"], want)
                r = run(path, contract={"op_type": op, "attrs": attrs})
                self.assertEqual(r["status"], "ok", r["failure"])
                self.assertEqual(r["contract"], want)
            for what, wrong in wrongs:
                with self.subTest(op=op, wrong=what):
                    path = write_kernel(self.tmp, "%s_wrong.py" % op, wrong_kernel(op, wrong))
                    r = run(path, contract={"attrs": attrs})
                    self.assertEqual(r["status"], "incorrect", "%s kernel passed a %r folder" % (what, attrs))

    def test_wrong_attribute_caught_in_half_precision(self):
        # bf16's tolerance hides eps 1e-6 vs 1e-5 on O(1) data: the tiny case (~sqrt(eps)) exposes
        # it; exact vs tanh GELU is below bf16 resolution: the float32 probe case exposes it.
        for op, attrs, wrong in (("rmsnorm", {"eps": 1e-5}, {"eps": 1e-6}),
                                 ("layernorm", {"eps": 1e-5}, {"eps": 1e-6}),
                                 ("gelu", {"approximate": "none"}, {"approximate": "tanh"})):
            with self.subTest(op=op):
                path = write_kernel(self.tmp, "%s_bf16.py" % op, wrong_kernel(op, wrong))
                r = run(path, contract={"attrs": attrs}, dtype="bfloat16")
                self.assertEqual(r["status"], "incorrect", r["failure"])
                self.assertTrue(r["failure"].startswith("hostile: "), r["failure"])

    def test_defaults_without_contract_and_reference_binding(self):
        r = run(os.path.join(STARTERS, "cpu", "layernorm.py"))
        self.assertEqual(r["status"], "ok", r["failure"])
        self.assertEqual(r["contract"], {"eps": 1e-5, "bias": True})


class ContractSources(TempDirMixin, unittest.TestCase):
    def test_literal_and_folder_contract_must_agree(self):
        src = extract.handle({"op_type": "rmsnorm", "device": "cpu", "shapes": [[4, 64], [64]],
                              "attrs": {"eps": 1e-5}})["kernel_py"]
        path = write_kernel(self.tmp, "kernel.py", src)
        r = run(path, contract={"op_type": "rmsnorm", "attrs": {"eps": 1e-6, "offset": 1.0}})
        self.assertEqual(r["status"], "error")
        self.assertEqual(r["stages"][0]["name"], "import")
        self.assertIn("'eps': 1e-05", r["failure"])
        self.assertIn("'offset': 1.0", r["failure"])
        r = run(path, contract={"op_type": "layernorm", "attrs": {}})
        self.assertIn("folder's contract is for layernorm", r["failure"])
        bad = {"dyn.py": ("CONTRACT = dict(eps=1e-5)", "must be literal"),
               "unknown.py": ("CONTRACT = {'epsilon': 1e-5}", "no contract attribute 'epsilon'"),
               "value.py": ("CONTRACT = {'offset': 2.0}", "offset = 2.0 is not allowed (allowed: 0.0, 1.0)")}
        for fname, (line, needle) in bad.items():
            with self.subTest(file=fname):
                path = write_kernel(self.tmp, fname, src.replace("CONTRACT = {'eps': 1e-05, 'offset': 0.0}", line))
                r = run(path)
                self.assertEqual(r["status"], "error")
                self.assertIn(needle, r["failure"])

    def test_binding_validates(self):
        spec = ops.get("matmul")
        self.assertEqual(spec.bind({"bias": True}).args, ("A", "B", "bias"))
        self.assertEqual(spec.args, ("A", "B"))
        self.assertEqual(ops.get("layernorm").bind({"bias": False}).args, ("x", "weight"))
        with self.assertRaisesRegex(ValueError, 'activation = .tanh. is not allowed .allowed: "none", "gelu"'):
            spec.bind({"activation": "tanh"})
        with self.assertRaisesRegex(ValueError, "rmsnorm attribute eps = -1"):
            ops.get("rmsnorm").bind({"eps": -1})


def fn(name, args=None, tensors=None, **more):
    d = {"kind": "function", "name": name, "args": {} if args is None else args, "tensors": tensors or []}
    d.update(more)
    return d


def mod(cls, args=None, **more):
    d = {"kind": "module", "name": cls, "args": args or {}, "module": "model.layers.0.x"}
    d.update(more)
    return d


def t(arg, shape):
    return {"arg": arg, "shape": shape, "dtype": "bfloat16"}


SITES = [
    # (op, facts, attrs expected (subset), refusal text or "")
    ("rmsnorm", [], {"eps": 1e-6, "offset": 0.0}, ""),
    ("rmsnorm", [{"call": mod("transformers.models.gemma.modeling_gemma.GemmaRMSNorm", {"eps": 1e-6},
                              probe={"offset": 1.0, "eps": 1e-6, "max_err": 3e-7}, params={"weight": [64]})}],
     {"eps": 1e-6, "offset": 1.0}, ""),
    ("rmsnorm", [mod("LlamaRMSNorm", {"variance_epsilon": 1e-5})], {"eps": 1e-5, "offset": 0.0}, ""),
    ("rmsnorm", [fn("torch.nn.functional.rms_norm", {"eps": None}, [t("input", [4, 64])])],
     {"eps": 0.0078125}, ""),
    ("rmsnorm", [mod("X", probe={"mismatch": "max_err 0.3"})], {}, "matches no rmsnorm formula"),
    ("rmsnorm", [mod("X", {"eps": 1e-5}), dict(mod("X", {"eps": 1e-6}), module="model.layers.1.x")], {},
     "sites disagree on eps"),
    ("rmsnorm", [dict(mod("X"), variants=[{"args": {"eps": 1e-5}}, {"args": {"eps": 1e-6}}])], {},
     "2 different argument sets"),
    ("layernorm", [fn("torch.nn.functional.layer_norm", {"normalized_shape": [768], "eps": 1e-6},
                      [t("input", [64, 197, 768]), t("weight", [768]), t("bias", [768])])],
     {"eps": 1e-6, "bias": True}, ""),
    ("layernorm", [fn("torch.nn.functional.layer_norm", {"normalized_shape": [768], "eps": 1e-5, "bias": None},
                      [t("input", [4, 768]), t("weight", [768])])], {"bias": False}, ""),
    ("layernorm", [mod("torch.nn.modules.normalization.LayerNorm", {"eps": 1e-6},
                       params={"weight": [768], "bias": None})], {"eps": 1e-6, "bias": False}, ""),
    ("layernorm", [mod("torch.nn.modules.normalization.LayerNorm", {"eps": 1e-6},
                       params={"weight": None, "bias": None})], {}, "without a weight"),
    ("layernorm", [fn("torch.nn.functional.layer_norm", {"normalized_shape": [8, 768]})], {},
     "last 2 dimensions"),
    ("flash_attention", [fn("torch.nn.functional.scaled_dot_product_attention", {"is_causal": True})],
     {"causal": True, "scale": None}, ""),
    ("flash_attention", [fn("torch.nn.functional.scaled_dot_product_attention", {"scale": 0.125},
                            [t("query", [2, 32, 64, 64]), t("key", [2, 8, 64, 64])])],
     {"causal": False, "scale": 0.125, "kv_heads": 8}, ""),
    ("flash_attention", [fn("torch.nn.functional.scaled_dot_product_attention", {},
                            [t("query", [1, 2, 8, 16]), t("attn_mask", [1, 1, 8, 8])])], {},
     "attention with an explicit attn_mask tensor: not supported (only causal or no mask)"),
    ("flash_attention", [fn("torch.nn.functional.scaled_dot_product_attention", {"dropout_p": 0.1})], {},
     "dropout_p 0.1"),
    ("matmul", [mod("torch.nn.modules.linear.Linear", {"in_features": 64}, params={"weight": [32, 64],
                                                                                   "bias": [32]})],
     {"bias": True, "activation": "none"}, ""),
    ("matmul", [fn("torch.nn.functional.linear", {"bias": None}, [t("input", [4, 64]), t("weight", [32, 64])],
                   activation="gelu")], {"bias": False, "activation": "gelu"}, ""),
    ("matmul", [fn("torch.addmm", {"beta": 0.5})], {}, "beta 0.5"),
    ("matmul", [fn("torch.matmul", {}, [t("input", [4, 8, 16]), t("other", [4, 16, 8])])], {},
     "batched right operand"),
    ("gelu", [fn("torch.nn.functional.gelu", {})], {"approximate": "none"}, ""),
    ("gelu", [fn("torch.nn.functional.gelu", {"approximate": "tanh"})], {"approximate": "tanh"}, ""),
    ("gelu", [mod("torch.nn.modules.activation.GELU", {"approximate": "none"})], {"approximate": "none"}, ""),
    ("gelu", [mod("transformers.activations.NewGELUActivation")], {"approximate": "tanh"}, ""),
    ("gelu", [mod("transformers.activations.QuickGELUActivation")], {}, "QuickGELU"),
    ("rotary_embedding", [fn("transformers.models.llama.modeling_llama.apply_rotary_pos_emb")],
     {"layout": "neox"}, ""),
    ("rotary_embedding", [fn("transformers.models.gptj.modeling_gptj.apply_rotary_pos_emb")],
     {"layout": "interleaved"}, ""),
    ("rotary_embedding", [fn("flash_attn.layers.rotary.apply_rotary_emb", {"interleaved": False})],
     {"layout": "neox"}, ""),
    ("cross_entropy", [fn("torch.nn.functional.cross_entropy", {"reduction": "mean", "ignore_index": -100})],
     {}, ""),
    ("cross_entropy", [fn("torch.nn.functional.cross_entropy", {"label_smoothing": 0.1})], {},
     "label_smoothing 0.1"),
    ("cross_entropy", [fn("torch.nn.functional.cross_entropy", {}, [t("weight", [10])])], {},
     "class weights"),
    ("softmax", [fn("torch.softmax", {"dim": 1}, [t("input", [2, 3, 4])])], {}, "over dim 1 of 3"),
    ("softmax", [fn("torch.softmax", {"dim": 2}, [t("input", [2, 3, 4])])], {}, ""),
]


class FromSites(unittest.TestCase):
    def test_contract_from_sites(self):
        for i, (op, facts, want, refusal) in enumerate(SITES):
            with self.subTest(case=i, op=op):
                attrs, refused = ops.get(op).contract_from_sites(facts)
                if refusal:
                    self.assertIn(refusal, refused)
                else:
                    self.assertEqual(refused, "")
                    self.assertEqual(set(attrs), set(ops.get(op).attrs))
                for k, v in want.items():
                    self.assertEqual(attrs[k], v, k)

    def test_extract_from_sites_renders_contract_and_refusal(self):
        sites = [{"call": fn("torch.nn.functional.scaled_dot_product_attention", {"is_causal": False}),
                  "module": "blocks.0.attn"}]
        out = extract.handle({"op_type": "flash_attention", "device": "cuda", "dtype": "bfloat16",
                              "shapes": [[2, 4, 64, 64]] * 3, "sites": sites})
        self.assertEqual(out["contract"]["attrs"], {"causal": False, "scale": None, "kv_heads": None})
        self.assertIn("CONTRACT = {'causal': False, 'scale': None, 'kv_heads': None}\n", out["kernel_py"])
        text = out["kernel_py"]
        self.assertLess(text.index("KERNEL_TYPE ="), text.index("CONTRACT ="))
        self.assertLess(text.index("CONTRACT ="), text.index("TEST_SIZES ="))
        refused = extract.handle({"op_type": "flash_attention", "device": "cpu", "shapes": [[1, 2, 8, 16]] * 3,
                                  "sites": [fn("torch.nn.functional.scaled_dot_product_attention",
                                               {"attn_mask": "tensor"})]})
        self.assertIn("explicit attn_mask", refused["contract"]["refused"])
        self.assertIn("CONTRACT = ", refused["kernel_py"])
        with self.assertRaisesRegex(ValueError, "no contract attribute 'causal'"):
            extract.handle({"op_type": "softmax", "device": "cpu", "shapes": [[4, 8]], "attrs": {"causal": True}})


if __name__ == "__main__":
    unittest.main()
