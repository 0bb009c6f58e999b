"""modelplug: every op type the harness supports is plugged at its call site (11 of 11), proven by
routing a kernel into a small model: calls counted, the starter's output matching the original,
a deliberately wrong kernel changing the output (the kernel is on the data path), restore() giving
the original back bit for bit, and each contract mismatch falling back to PyTorch with its reason.
Runs on the CPU in CI (torch 1.13) and on a GPU machine's torch 2.x (with torch.compile there)."""

import math
import os
import unittest

from harnesstest import STARTERS

import torch
import torch.nn as nn
import torch.nn.functional as F

from modelplug import plug



def _sdpa_stand_in(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """F.scaled_dot_product_attention for a torch that predates it (the CI's 1.13), overridable like
    torch's own functions so that a TorchFunctionMode sees the call."""
    from torch.overrides import handle_torch_function, has_torch_function
    if has_torch_function((query, key, value)):
        return handle_torch_function(_sdpa_stand_in, (query, key, value), query, key, value, attn_mask=attn_mask,
                                     dropout_p=dropout_p, is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
    if enable_gqa:
        key = key.repeat_interleave(query.shape[1] // key.shape[1], dim=1)
        value = value.repeat_interleave(query.shape[1] // value.shape[1], dim=1)
    s = query @ key.transpose(-2, -1) * (scale or 1.0 / math.sqrt(query.shape[-1]))
    if is_causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ value


_sdpa_stand_in.__name__ = "scaled_dot_product_attention"
_OWN_SDPA = hasattr(F, "scaled_dot_product_attention")


def setUpModule():
    if not _OWN_SDPA:
        F.scaled_dot_product_attention = _sdpa_stand_in


def tearDownModule():
    if not _OWN_SDPA:
        del F.scaled_dot_product_attention


def starter(op):
    module, ktype = plug.load_kernel(os.path.join(STARTERS, "cpu", op + ".py"), "test_starter_" + op)
    assert ktype == op
    return module.kernel_fn


class Wrap(nn.Module):
    """The op under test runs in `site`, a child module: sites are qualified names."""

    def __init__(self, site):
        super().__init__()
        self.site = site

    def forward(self, *args):
        return self.site(*args)


class Fn(nn.Module):
    def __init__(self, fn, **params):
        super().__init__()
        self.fn = fn
        for name, p in params.items():
            setattr(self, name, p)

    def forward(self, *args):
        return self.fn(self, *args)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.rand(d) + 0.5), eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(nn.Module):
    def __init__(self, d, h, bias=False):
        super().__init__()
        self.w_gate, self.w_up, self.w_down = nn.Linear(d, h, bias=bias), nn.Linear(d, h, bias=bias), nn.Linear(h, d, bias=bias)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class Rotary(nn.Module):
    def __init__(self, head_dim, seq):
        super().__init__()
        angles = torch.outer(torch.arange(seq).float(), 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim)))
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())

    def forward(self, x):
        s = x.shape[-2]
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, sn = self.cos[:s], self.sin[:s]
        return torch.stack((x1 * c - x2 * sn, x1 * sn + x2 * c), dim=-1).flatten(-2)


def causal_attention(self, q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def cases():
    """op -> (site module, inputs)."""
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    out = {
        "matmul": (nn.Linear(16, 24), [r(2, 5, 16)]),
        "softmax": (Fn(lambda self, x: torch.softmax(x, dim=-1)), [r(3, 7, 33)]),
        "layernorm": (nn.LayerNorm(32), [r(4, 6, 32)]),
        "rmsnorm": (RMSNorm(32), [r(4, 6, 32)]),
        "fused_mlp": (SwiGLU(16, 40), [r(2, 5, 16)]),
        "cross_entropy": (Fn(lambda self, x, t: F.cross_entropy(x, t)), [r(9, 50), torch.randint(0, 50, (9,), generator=g)]),
        "rotary_embedding": (Rotary(16, 12), [r(2, 3, 10, 16)]),
        "reduce": (Fn(lambda self, x: torch.sum(x, dim=-1)), [r(5, 7, 64)]),
        "gelu": (Fn(lambda self, x: F.gelu(x, approximate="tanh")), [r(4, 40)]),
        "silu": (Fn(lambda self, x: F.silu(x)), [r(4, 40)]),
    }
    out["flash_attention"] = (Fn(causal_attention), [r(2, 4, 12, 16), r(2, 4, 12, 16), r(2, 4, 12, 16)])
    return out


def torch_dynamo():
    import importlib
    return importlib.import_module("torch._dynamo")   # `import torch._dynamo` here would make torch a local


def leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


class EveryOpType(unittest.TestCase):
    def plug_into(self, op, site_module, inputs, fn=None):
        model = Wrap(site_module).eval()
        with torch.no_grad():
            original = model(*inputs)
        kernel = plug.Kernel("k-" + op, op, fn or starter(op), ["site"], torch.float32)
        p = plug.Plugged(model, [kernel])
        with torch.no_grad():
            ours = model(*inputs)
        report = p.report()[0]
        p.restore()
        with torch.no_grad():
            back = model(*inputs)
        return original, ours, back, report

    def test_every_op_type_is_plugged_routed_and_restored(self):
        all_cases = cases()
        expected = {"matmul", "softmax", "layernorm", "rmsnorm", "flash_attention", "fused_mlp", "cross_entropy",
                    "rotary_embedding", "reduce", "gelu", "silu"}
        self.assertEqual(set(all_cases), expected)
        for op, (module, inputs) in all_cases.items():
            with self.subTest(op=op):
                original, ours, back, report = self.plug_into(op, module, inputs)
                self.assertEqual(report["plugged_sites"], ["site"], report)
                self.assertGreater(report["routed_calls"], 0, report)
                self.assertEqual(report["fallback_calls"], {}, report)
                self.assertEqual(ours.shape, original.shape)
                torch.testing.assert_close(ours, original, rtol=1e-4, atol=1e-4)
                self.assertTrue(torch.equal(back, original), "restore() is not the original")
                # A wrong kernel at the same site changes the model's output: the plug is on the data path.
                fn = starter(op)
                _, wrong, _, _ = self.plug_into(op, module, inputs, fn=lambda *a, fn=fn: fn(*a) * 1.5 + 0.25)
                self.assertFalse(torch.allclose(wrong, original, rtol=1e-3, atol=1e-3), op)

    def test_grouped_query_attention_handed_over_whole(self):
        g = torch.Generator().manual_seed(1)
        q, k, v = torch.randn(2, 8, 12, 16, generator=g), torch.randn(2, 2, 12, 16, generator=g), torch.randn(2, 2, 12, 16, generator=g)
        gqa = Fn(lambda self, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
        try:
            with torch.no_grad():
                Wrap(gqa)(q, k, v)
        except TypeError:
            self.skipTest("this torch's SDPA has no enable_gqa")
        original, ours, _, report = self.plug_into("flash_attention", gqa, [q, k, v])
        self.assertGreater(report["routed_calls"], 0, report)
        torch.testing.assert_close(ours, original, rtol=1e-4, atol=1e-4)

    def test_contract_mismatches_fall_back_with_the_reason(self):
        g = torch.Generator().manual_seed(2)
        x = torch.randn(4, 32, generator=g)
        mismatches = {
            "gelu": (Fn(lambda self, x: F.gelu(x)), [x], "exact gelu"),
            "softmax": (Fn(lambda self, x: torch.softmax(x, dim=0)), [x], "other than the last"),
            "layernorm": (nn.LayerNorm(32, eps=1e-6), [x], "eps"),
            "reduce": (Fn(lambda self, x: x.sum(dim=0)), [x], "other than over the last"),
            "matmul": (nn.Linear(32, 8), [x.double()], "dtype"),
        }
        for op, (module, inputs, why) in mismatches.items():
            with self.subTest(op=op):
                original, ours, _, report = self.plug_into(op, module.double() if op == "matmul" else module, inputs)
                self.assertEqual(report["routed_calls"], 0, report)
                self.assertTrue(any(why in reason for reason in report["fallback_calls"]), report)
                self.assertTrue(torch.equal(ours, original))

    def test_module_sites_that_cannot_take_the_kernel_say_why(self):
        for op, module, why in (("rmsnorm", RMSNorm(16, eps=1e-5), "eps"),
                                ("fused_mlp", SwiGLU(8, 16, bias=True), "biases"),
                                ("rotary_embedding", nn.Identity(), "cos/sin")):
            with self.subTest(op=op):
                model = Wrap(module)
                kernel = plug.Kernel("k", op, starter(op), ["site", "nowhere"], torch.float32)
                plug.Plugged(model, [kernel]).restore()
                self.assertIn(why, kernel.unplugged.get("site", ""), kernel.unplugged)
                self.assertIn("no module named", kernel.unplugged["nowhere"])

    def test_a_frozen_plug_holds_the_transposed_weight_and_restores(self):
        # The compiled copy's plug: W^T made once as a non-persistent buffer (no id()-keyed cache for
        # Dynamo to guard on), gone after restore(), never in the state dict.
        lin = nn.Linear(16, 24)
        model = Wrap(lin).eval()
        x = torch.randn(3, 16)
        with torch.no_grad():
            original = model(x)
        keys = set(model.state_dict())
        kernel = plug.Kernel("k", "matmul", starter("matmul"), ["site"], torch.float32)
        p = plug.Plugged(model, [kernel], frozen=True)
        self.assertTrue(torch.equal(getattr(lin, plug.FROZEN_WT), lin.weight.t()))
        self.assertEqual(set(model.state_dict()), keys)
        with torch.no_grad():
            ours = model(x)
        self.assertEqual(kernel.routed, 1)
        torch.testing.assert_close(ours, original, rtol=1e-4, atol=1e-4)
        p.restore()
        self.assertFalse(hasattr(lin, plug.FROZEN_WT))
        with torch.no_grad():
            self.assertTrue(torch.equal(model(x), original))

    def test_a_site_plug_does_not_reach_child_modules(self):
        # softmax plugged at the outer module only: the same call inside a child stays PyTorch's.
        inner = Fn(lambda self, x: torch.softmax(x, dim=-1))
        outer = Fn(lambda self, x: torch.softmax(self.inner(x), dim=-1), inner=inner)
        kernel = plug.Kernel("k", "softmax", starter("softmax"), ["site"], torch.float32)
        model = Wrap(outer)
        p = plug.Plugged(model, [kernel])
        with torch.no_grad():
            model(torch.randn(3, 9))
        p.restore()
        self.assertEqual(kernel.routed, 1)

    def test_custom_op_names_are_identifiers(self):
        # Kernel folders start with their rank ("03-rmsnorm"); torch.library's schema parser refuses a
        # name that starts with a digit, and on the H200 compile + ours failed on every folder for it.
        for folder in ("03-rmsnorm", "07-rotary_embedding", "x.y-z"):
            ns, name = plug.op_name(folder).split("::")
            self.assertEqual(ns, "autokernel")
            self.assertTrue(name.isidentifier() and not name[0].isdigit(), name)

    @unittest.skipUnless(hasattr(torch, "compile") and hasattr(getattr(torch, "library", None), "custom_op"),
                         "torch %s has no torch.compile / torch.library.custom_op" % torch.__version__)
    def test_custom_ops_under_torch_compile(self):
        for i, (op, (module, inputs)) in enumerate(cases().items()):
            with self.subTest(op=op):
                model = Wrap(module).eval()
                with torch.no_grad():
                    original = model(*inputs)
                fn = starter(op)
                call = plug.custom_op("%02d-%s" % (i + 1, op), op, fn)   # named like a kernel folder
                kernel = plug.Kernel("k-" + op, op, fn, ["site"], torch.float32, call=call)
                plug.Plugged(model, [kernel])
                torch_dynamo().reset()
                with torch.no_grad():
                    ours = torch.compile(model)(*inputs)
                torch.testing.assert_close(ours, original, rtol=1e-4, atol=1e-4)

    @unittest.skipUnless(hasattr(torch, "compile") and hasattr(getattr(torch, "library", None), "custom_op"),
                         "torch %s has no torch.compile / torch.library.custom_op" % torch.__version__)
    def test_many_linear_sites_compile_once(self):
        # Twelve plugged Linears in one compiled model: one frame, no recompile per weight (an
        # id()-keyed weight cache made Dynamo recompile per Linear until its limit, then run eager).
        model = nn.Sequential(*[nn.Linear(16, 16) for _ in range(12)]).eval()
        fn = starter("matmul")
        kernel = plug.Kernel("k", "matmul", fn, [str(i) for i in range(12)], torch.float32,
                             call=plug.custom_op("test_many_linear", "matmul", fn))
        plug.Plugged(model, [kernel], frozen=True)
        dynamo = torch_dynamo()
        dynamo.reset()
        from torch._dynamo.utils import counters
        counters.clear()
        x = torch.randn(4, 16)
        with torch.no_grad():
            compiled = torch.compile(model)
            compiled(x)
            compiled(x)
        self.assertEqual(sum(counters["graph_break"].values()), 0, dict(counters["graph_break"]))
        self.assertLessEqual(counters["stats"]["unique_graphs"], 1, dict(counters["stats"]))



class CompileAdvice(unittest.TestCase):
    """What verify tells a torch.compile user, from the paired compile / compile+ours samples."""

    def advice(self, compile_us, ours_us):
        from modelplug import verify
        samples = {"compile": compile_us, "compile+ours": ours_us}
        ratio = verify._paired_ratio(compile_us, ours_us)
        return verify._compile_advice({"compile+ours": {"speedup_vs_compile": ratio}}, samples)

    def test_slower_under_compile_says_compile_without_them(self):
        a = self.advice([9710.0, 9700.0, 9720.0], [10930.0, 10910.0, 10950.0])       # gpt2 on the H200
        self.assertIn("compile the original model, without apply()", a)
        self.assertIn("0.888x", a)

    def test_faster_under_compile_says_apply_then_compile(self):
        a = self.advice([14160.0, 14150.0, 14170.0], [13000.0, 13010.0, 12990.0])
        self.assertIn("compile the model after apply()", a)

    def test_inside_the_noise_says_no_difference(self):
        self.assertIn("no measurable difference", self.advice([14160.0, 14150.0, 14170.0], [14140.0, 14160.0, 14150.0]))

if __name__ == "__main__":
    unittest.main()


class TimerWarmsEachVariant(unittest.TestCase):
    """verify's and the in-model check's _Timer: a variant's first forward (one-time costs, 15.3 ms against
    ~8.8 on the H100 in session 25) runs untimed, so no variant's median carries it."""

    def test_the_first_sample_of_each_variant_is_not_counted(self):
        import time as _time
        from modelplug.verify import _Timer

        class Runner:
            def __init__(self):
                self.timed = {}

            def request(self, msg):
                if msg["op"] == "time":
                    n = self.timed[msg["variant"]] = self.timed.get(msg["variant"], 0) + 1
                    _time.sleep(0.05 if n == 1 else 0.002)
                return {"ok": True}

        runner = Runner()
        medians, samples = _Timer(runner, 1).compare(["eager", "with"], 3)
        self.assertEqual(runner.timed, {"eager": 4, "with": 4})
        self.assertEqual([len(samples["eager"]), len(samples["with"])], [3, 3])
        # Four forwards each, three timed: the slow first one was the untimed one (no wall-clock
        # threshold here: a busy CI machine must not fail it).
