"""Batched matmul folders (#38 item 3, docs/contracts.md "bmm"): attention written as torch.matmul / bmm /
`@` of batched tensors. The op's contract (b_transposed from the recorded strides, broadcasting refused),
the CPU starter under the harness in both layouts and a kernel of the wrong layout caught by it, the plug
routing exactly the calls of its layout (the transposed operand's own storage, no copy), and the whole
path (profile -> contract -> extract's starter -> plugcheck) on the fidelity model's bmm attention and on
a GPT-2-like block written here with 4-D `q @ k.transpose(-2, -1)` and `probs @ v`."""

import os
import shutil
import tempfile
import textwrap
import unittest

import torch

import akprofile
from harnesstest import STARTERS, TempDirMixin, run, write_kernel
from harness import extract, ops
from modelplug import plug, plugcheck

HERE = os.path.dirname(os.path.abspath(__file__))
FIDELITY = os.path.join(HERE, "fidelity_model.py")

GPT2_BLOCK = '''
import math
import torch
import torch.nn as nn

B, S, D, H = 2, 12, 32, 4


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)
        q, k, v = (t.view(b, s, H, D // H).transpose(1, 2) for t in (q, k, v))
        k = k.contiguous()                  # GPT-2 caches k contiguous: k.transpose(-2, -1) is a view of it
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(D // H)
        mask = torch.ones(s, s, dtype=torch.bool).triu(1)
        probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        y = torch.matmul(probs, v)          # v: a strided view, neither contiguous nor transposed
        return self.proj(y.transpose(1, 2).reshape(b, s, D))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln, self.attn = nn.LayerNorm(D), Attention()

    def forward(self, x):
        return x + self.attn(self.ln(x))


def get_model():
    return nn.Sequential(Block(), Block())


def get_inputs():
    return [torch.randn(B, S, D)]
'''


def starter(bt):
    with open(os.path.join(STARTERS, "cpu", "bmm.py"), encoding="utf-8") as f:
        src = f.read()
    return src.replace('globals().get("CONTRACT", {})', repr({"b_transposed": bt}))


def fact(a_shape, b_shape, b_stride=None, name="torch.matmul", module="blocks.0.attn"):
    def t(arg, shape, stride):
        contiguous = stride is None
        if stride is None:
            stride, n = [], 1
            for d in reversed(shape):
                stride.insert(0, n)
                n *= d
        return {"arg": arg, "shape": shape, "dtype": "float32", "stride": stride, "contiguous": contiguous}
    return {"kind": "function", "name": name, "args": {}, "module": module,
            "tensors": [t("input", a_shape, None), t("other", b_shape, b_stride)]}


class Contract(unittest.TestCase):
    def test_from_sites(self):
        spec = ops.get("bmm")
        cases = [
            ([fact([2, 12, 64, 16], [2, 12, 16, 64], [12288, 1024, 1, 16])], {"b_transposed": True}, ""),
            ([fact([24, 64, 64], [24, 64, 16])], {"b_transposed": False}, ""),
            # A strided view that is not a transpose (v of GPT-2): not transposed, the plug copies it.
            ([fact([2, 4, 12, 12], [2, 4, 12, 8], [1152, 8, 96, 1])], {"b_transposed": False}, ""),
            ([fact([1, 4, 1], [2, 1, 16])], {}, "broadcasting A [1, 4, 1] against B [2, 1, 16]"),
            ([fact([64, 16], [2, 16, 64])], {}, "broadcasting A [64, 16]"),
            ([fact([2, 3, 8], [2, 4, 8])], {}, "inner dimensions differ"),
            ([dict(fact([2, 3, 8], [2, 8, 4]), name="torch.baddbmm")], {}, "baddbmm"),
            ([fact([2, 8, 4], [2, 4, 8], [32, 1, 4]), fact([2, 8, 8], [2, 8, 4], module="blocks.1.attn")], {},
             "the sites disagree on b_transposed"),
            ([], {"b_transposed": False}, ""),
        ]
        for i, (facts, want, refusal) in enumerate(cases):
            with self.subTest(case=i):
                attrs, refused = spec.contract_from_sites(facts)
                if refusal:
                    self.assertIn(refusal, refused)
                else:
                    self.assertEqual(refused, "")
                    self.assertEqual(attrs, want)

    def test_shapes_and_binding(self):
        spec = ops.get("bmm")
        self.assertEqual(spec.from_shapes([[2, 12, 64, 16], [2, 12, 16, 64]]), {"batch": 24, "M": 64, "N": 64, "K": 16})
        with self.assertRaisesRegex(ValueError, "leading dims"):
            spec.from_shapes([[1, 4, 1], [2, 1, 16]])
        with self.assertRaisesRegex(ValueError, "both be batched"):
            spec.from_shapes([[4, 8], [2, 8, 4]])
        self.assertEqual(spec.bind({"b_transposed": True}).args, ("A", "Bt"))
        self.assertEqual(spec.bind({"b_transposed": True}).arg_shapes, ("A[batch, M, K]", "Bt[batch, N, K]"))
        self.assertIs(ops.get("batched_matmul"), ops.OPS["bmm"])
        with self.assertRaisesRegex(ValueError, "b_transposed = 'yes' is not allowed"):
            spec.bind({"b_transposed": "yes"})
        # The matmul op still refuses a batched right operand (a profile row routed there by an old app).
        _, refused = ops.get("matmul").contract_from_sites([fact([4, 8, 16], [4, 16, 8])])
        self.assertIn("a bmm folder takes it", refused)


class Harness(TempDirMixin, unittest.TestCase):
    def test_starter_passes_in_both_layouts_and_the_wrong_layout_is_caught(self):
        shapes = [[2, 3, 24, 24], [2, 3, 24, 24]]       # square: the wrong layout runs and computes garbage
        for bt in (False, True):
            with self.subTest(b_transposed=bt):
                out = extract.handle({"op_type": "bmm", "device": "cpu", "dtype": "float32", "shapes": shapes,
                                      "attrs": {"b_transposed": bt}})
                self.assertEqual(out["contract"], {"op_type": "bmm", "attrs": {"b_transposed": bt}, "refused": ""})
                self.assertEqual(out["test_sizes"], [{"batch": 6, "M": 24, "N": 24, "K": 24}])
                path = write_kernel(self.tmp, "bmm.py", out["kernel_py"])
                r = run(path, contract={"op_type": "bmm", "attrs": {"b_transposed": bt}})
                self.assertEqual(r["status"], "ok", r["failure"])
                wrong = write_kernel(self.tmp, "wrong.py", starter(not bt))
                r = run(wrong, contract={"op_type": "bmm", "attrs": {"b_transposed": bt}})
                self.assertEqual(r["status"], "incorrect", "a b_transposed %s kernel passed a %s folder" % (not bt, bt))

    def test_a_kernel_that_mixes_the_batch_is_caught(self):
        src = textwrap.dedent('''
            import torch
            KERNEL_TYPE = "bmm"
            def kernel_fn(A, B):
                return torch.matmul(A, B[:1])       # batch entry 0's B for every entry
            ''')
        r = run(write_kernel(self.tmp, "mix.py", src), contract={"op_type": "bmm", "attrs": {}})
        self.assertEqual(r["status"], "incorrect", r["failure"])

    def test_half_precision_accumulates_in_fp32(self):
        path = write_kernel(self.tmp, "bf16.py", starter(True))
        r = run(path, contract={"op_type": "bmm", "attrs": {"b_transposed": True}}, dtype="bfloat16")
        self.assertEqual(r["status"], "ok", r["failure"])


class Adapter(unittest.TestCase):
    def kernel(self, bt, seen):
        def fn(a, b):
            seen.append((a.shape, b.shape, b.data_ptr(), b.is_contiguous()))
            return torch.bmm(a, b.transpose(1, 2) if bt else b)
        return plug.Kernel("k", "bmm", fn, ["x"], torch.float32, contract={"b_transposed": bt})

    def test_routes_its_layout_without_copying_the_transposed_operand(self):
        g = torch.Generator().manual_seed(1)
        q, k, v = (torch.randn(2, 3, 5, 4, generator=g) for _ in range(3))
        seen = []
        kt = self.kernel(True, seen)
        out = plug.ADAPTERS["bmm"](kt, (q, k.transpose(-2, -1)), {"__name": "__matmul__"})
        torch.testing.assert_close(out, q @ k.transpose(-2, -1))
        self.assertEqual(seen[0][1], torch.Size([6, 5, 4]))
        self.assertEqual(seen[0][2], k.data_ptr())          # k's own storage: no copy
        p = torch.softmax(out, -1)
        self.assertIsNone(plug.ADAPTERS["bmm"](kt, (p, v), {}))     # P @ V is the other folder's call
        self.assertEqual(kt.report()["other_calls"], {"a right operand not transposed (another bmm folder's layout)": 1})
        kn = self.kernel(False, seen)
        torch.testing.assert_close(plug.ADAPTERS["bmm"](kn, (p, v.transpose(1, 2).transpose(1, 2)), {}), p @ v)
        self.assertEqual((kt.routed, kn.routed), (1, 1))
        self.assertEqual(kt.fallbacks, {})

    def test_broadcast_falls_back_and_a_matmul_kernel_leaves_batched_calls(self):
        seen = []
        kn = self.kernel(False, seen)
        self.assertIsNone(plug.ADAPTERS["bmm"](kn, (torch.randn(1, 4, 1), torch.randn(2, 1, 8)), {}))
        self.assertIn("broadcasting A [1, 4, 1] against B [2, 1, 8]", list(kn.fallbacks)[0])
        self.assertIsNone(plug.ADAPTERS["bmm"](kn, (torch.randn(3, 4, 5), torch.randn(5, 6)), {}))
        self.assertIn("unbatched right operand", list(kn.others)[0])
        mm = plug.Kernel("m", "matmul", lambda a, b: a @ b, ["x"], torch.float32, contract={"bias": False})
        self.assertIsNone(plug.ADAPTERS["matmul"](mm, (torch.randn(3, 4, 5), torch.randn(3, 5, 6)),
                                                  {"__name": "matmul"}))
        self.assertEqual(mm.fallbacks, {})
        self.assertIn("a bmm folder's call", list(mm.others)[0])

    def test_fake_shape(self):
        self.assertEqual(plug.fake_shape("bmm", {"b_transposed": True}, [(6, 5, 4), (6, 7, 4)]), (6, 5, 7))
        self.assertEqual(plug.fake_shape("bmm", {}, [(6, 5, 4), (6, 4, 7)]), (6, 5, 7))
        with self.assertRaisesRegex(ValueError, "do not multiply"):
            plug.fake_shape("bmm", {}, [(6, 5, 4), (6, 7, 4)])


def folded(shape):
    n = 1
    for d in shape[:-2]:
        n *= d
    return (n,) + tuple(shape[-2:])


def bmm_folders(result):
    """What RunCreator does with a profile's matmul rows whose right operand is batched (the C++ is tested
    in tst_fidelitycli): folders keyed by the shapes (leading dims folded) and the harness's contract;
    {(B's folded shape, attrs, refused): sorted sites}. Every row of a key must agree (the 4-D matmul
    row and the bmm row it dispatches to: the bmm row's facts are found by the folded shapes)."""
    spec = ops.get("bmm")
    folders = {}
    for row in result["kernels"]:
        shapes = row["shapes"]
        if row["aten_op"] not in ("aten::bmm", "aten::matmul") or len(shapes) < 2 or len(shapes[1]) < 3:
            continue
        facts = [s["call"] for s in row["call_sites"] if s.get("call")]
        attrs, refused = spec.contract_from_sites(facts)
        key = (folded(shapes[1]), tuple(sorted(attrs.items())), refused)
        folders.setdefault(key, set()).update(s["module"] for s in row["call_sites"])
    return {k: sorted(v) for k, v in folders.items()}


class PlugCheckEndToEnd(unittest.TestCase):
    """The profile's facts -> the bmm contract -> the CPU starter rendered by extract -> plugcheck."""

    def plugcheck(self, model_path, folders, tamper=None):
        tmp = tempfile.mkdtemp(prefix="bmm-plug-")
        self.addCleanup(shutil.rmtree, tmp, True)
        kernels = []
        for i, ((_, attrs, refused), sites) in enumerate(sorted(folders.items())):
            if refused:
                continue
            text, _ = extract.render(ops.get("bmm"), "cpu", "float32", [], "bmm%d" % i, dict(attrs))
            if tamper:
                text = tamper(text, dict(attrs))
            path = os.path.join(tmp, "bmm%d.py" % i)
            with open(path, "w") as f:
                f.write(text)
            kernels.append({"name": "bmm%d" % i, "op_type": "bmm", "path": path, "sites": sites})
        reply = plugcheck.handle({"model_path": model_path, "device": "cpu", "dtype": "float32", "seed": 5,
                                  "kernels": kernels})
        return reply["kernels"]

    def check_pluggable(self, kernels, layouts):
        self.assertEqual(sorted(k["attrs"]["b_transposed"] for k in kernels), layouts)
        for k in kernels:
            with self.subTest(kernel=k["name"], attrs=k["attrs"]):
                self.assertTrue(k["pluggable"], k)
                self.assertEqual(k["fallback_calls"], {})
                self.assertEqual(sorted(k["plugged_sites"]), sorted(k["sites"]))
                self.assertGreater(k["routed_calls"], 0)
                self.assertTrue(k["parity"]["ok"], k["parity"])

    def test_fidelity_model_bmm_attention(self):
        result = akprofile.handle({"model": FIDELITY, "device": "cpu", "dtype": "fp32", "warmup": 1, "iterations": 1})
        folders = bmm_folders(result)
        refused = {r for (_, _, r) in folders if r}
        self.assertEqual(len(refused), 1, folders)          # the rotary table's broadcast [1, 4, 1] @ [2, 1, 16]
        self.assertIn("broadcasting A [1, 4, 1] against B [2, 1, 16]", refused.pop())
        self.assertIn("layers.1.attn", [s for (_, _, r), sites in folders.items() if not r for s in sites])
        self.check_pluggable(self.plugcheck(FIDELITY, folders), [False, True])

    def test_gpt2_like_block_with_4d_matmuls(self):
        tmp = tempfile.mkdtemp(prefix="bmm-gpt2-")
        self.addCleanup(shutil.rmtree, tmp, True)
        model = os.path.join(tmp, "gpt2_block.py")
        with open(model, "w") as f:
            f.write(GPT2_BLOCK)
        result = akprofile.handle({"model": model, "device": "cpu", "dtype": "fp32", "warmup": 1, "iterations": 1})
        folders = bmm_folders(result)
        # Two folders, each the 4-D matmul row and its bmm row: q @ k^T (B [8, 8, 12], transposed) and
        # P @ V (B [8, 12, 8], GPT-2's strided v: not transposed, the plug copies it).
        self.assertEqual(sorted(folders), [((8, 8, 12), (("b_transposed", True),), ""),
                                           ((8, 12, 8), (("b_transposed", False),), "")])
        for sites in folders.values():
            self.assertEqual(sites, ["0.attn", "1.attn"])
        kernels = self.plugcheck(model, folders)
        self.check_pluggable(kernels, [False, True])
        for k in kernels:       # each routes its own call in both blocks and leaves the other's alone
            self.assertEqual(k["routed_calls"], 2, k)
            self.assertEqual(sum(k.get("other_calls", {}).values()), 2, k)

        def other_layout(text, attrs):     # the kernel's body computes the other layout, CONTRACT unchanged
            return text.replace('globals().get("CONTRACT", {})', repr({"b_transposed": not attrs["b_transposed"]}))
        for k in self.plugcheck(model, folders, tamper=other_layout):
            with self.subTest(wrong=k["attrs"]):
                self.assertFalse(k["pluggable"], k)       # it raises on these non-square shapes, or differs
                self.assertTrue(k["parity"].get("raised") or not k["parity"]["ok"], k)


if __name__ == "__main__":
    unittest.main()
