"""modelplug's thin per-call path (plug/swap.py, #38/#40): a swapped module forward decides its route once
and checks the contract once per input signature. What must still hold: a call whose dtype, shape or
strides changed is checked again (routed only where the kernel fits it, else it falls back to the
module's own code and is counted with its reason), the routed/fallback counters stay exact over repeated
calls, a weight changed in place is seen, and a module whose fixed attributes do not fit keeps the
per-call route with its reasons. CPU, torch 1.13 in CI."""

import importlib.util
import os
import unittest

from harnesstest import STARTERS

import torch
import torch.nn as nn
import torch.nn.functional as F

from modelplug import plug


def starter(op, contract=None):
    """The CPU starter's kernel_fn, rendered under `contract` (set before it runs, as extract writes it)."""
    spec = importlib.util.spec_from_file_location("test_plugfast_%s_%d" % (op, len(contract or {})),
                                                  os.path.join(STARTERS, "cpu", op + ".py"))
    module = importlib.util.module_from_spec(spec)
    if contract:
        module.CONTRACT = dict(contract)
    spec.loader.exec_module(module)
    assert module.KERNEL_TYPE == op
    return module.kernel_fn


class Recording:
    """A kernel_fn that records what it was given (contiguity, shapes), then runs the starter."""

    def __init__(self, fn):
        self.fn, self.calls = fn, []

    def __call__(self, *args):
        self.calls.append([(tuple(a.shape), a.is_contiguous()) for a in args])
        return self.fn(*args)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)
        self.norm = nn.LayerNorm(6)
        self.soft = nn.Softmax(dim=1)

    def forward(self, x):
        return self.soft(self.norm(self.fc(x)))


def kernel(op, fn, sites, dtype=torch.float32, **attrs):
    return plug.Kernel(op, op, fn, sites, dtype, contract=dict(attrs) if attrs else None)


class SignatureCache(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.net = Net().eval()

    def plug(self, kernels):
        p = plug.Plugged(self.net, kernels)
        self.addCleanup(p.restore)
        return p

    def test_the_modules_are_swapped_without_hooks_and_restored(self):
        p = self.plug([kernel("matmul", starter("matmul"), ["fc"], bias=True),
                       kernel("layernorm", starter("layernorm"), ["norm"], eps=1e-5, bias=True),
                       kernel("softmax", starter("softmax"), ["soft"])])
        for name in ("fc", "norm", "soft"):
            m = getattr(self.net, name)
            self.assertIn("forward", vars(m), name)
            self.assertEqual((len(m._forward_pre_hooks), len(m._forward_hooks)), (0, 0), name)
        self.assertEqual([r["plugged_sites"] for r in p.report()], [["fc"], ["norm"], ["soft"]])
        p.restore()
        for name in ("fc", "norm", "soft"):
            self.assertNotIn("forward", vars(getattr(self.net, name)), name)

    def test_a_dtype_change_falls_back_and_counts_then_routes_again(self):
        k = kernel("matmul", starter("matmul"), ["fc"], bias=True)
        self.plug([k])
        x = torch.randn(4, 8)
        fc = self.net.fc
        with torch.no_grad():
            for _ in range(3):
                torch.testing.assert_close(fc(x), F.linear(x, fc.weight, fc.bias))
            self.assertEqual((k.routed, k.fallbacks), (3, {}))
            fc.double()                                  # the same module, another dtype: a new signature
            xd = x.double()
            for _ in range(2):
                self.assertTrue(torch.equal(fc(xd), F.linear(xd, fc.weight, fc.bias)))
            self.assertEqual(k.routed, 3)
            self.assertEqual(k.fallbacks, {"dtype float64, the kernel was judged in float32": 2})
            fc.float()
            torch.testing.assert_close(fc(x), F.linear(x, fc.weight, fc.bias))
        self.assertEqual((k.routed, sum(k.fallbacks.values())), (4, 2))

    def test_a_shape_change_the_kernel_does_not_fit_falls_back(self):
        # nn.Softmax(dim=1) is over the last dim of a 2-d input only: the same module on a 3-d input is
        # softmax over a middle dim, which the kernel (rows over the last dim) does not compute.
        rec = Recording(starter("softmax"))
        k = kernel("softmax", rec, ["soft"])
        self.plug([k])
        soft = self.net.soft
        x2, x3 = torch.randn(3, 5), torch.randn(2, 3, 5)
        with torch.no_grad():
            torch.testing.assert_close(soft(x2), torch.softmax(x2, 1))
            self.assertTrue(torch.equal(soft(x3), torch.softmax(x3, 1)))
            self.assertTrue(torch.equal(soft(x3), torch.softmax(x3, 1)))
            torch.testing.assert_close(soft(x2), torch.softmax(x2, 1))
        self.assertEqual(k.routed, 2)
        self.assertEqual(k.fallbacks, {"softmax over a dimension other than the last": 2})
        self.assertEqual(len(rec.calls), 2)

    def test_a_stride_change_gives_the_kernel_a_contiguous_copy(self):
        rec = Recording(starter("layernorm"))
        k = kernel("layernorm", rec, ["norm"], eps=1e-5, bias=True)
        self.plug([k])
        norm = self.net.norm
        base = torch.randn(6, 4)
        with torch.no_grad():
            for x in (base.t().contiguous(), base.t(), torch.randn(2, 4, 6), torch.randn(2, 6, 4).transpose(1, 2)):
                self.assertEqual(tuple(x.shape[-1:]), (6,))
                torch.testing.assert_close(norm(x), F.layer_norm(x, (6,), norm.weight, norm.bias, 1e-5))
        self.assertEqual((k.routed, k.fallbacks), (4, {}))
        self.assertEqual([c[0] for c in rec.calls], [((4, 6), True)] * 2 + [((8, 6), True)] * 2)

    def test_a_weight_changed_in_place_is_seen(self):
        k = kernel("matmul", starter("matmul"), ["fc"], bias=True)
        self.plug([k])
        fc, x = self.net.fc, torch.randn(4, 8)
        with torch.no_grad():
            fc(x)
            fc.weight.mul_(-2.0)
            torch.testing.assert_close(fc(x), F.linear(x, fc.weight, fc.bias))
        self.assertEqual(k.routed, 2)

    def test_a_kernel_without_contract_adds_the_bias_after(self):
        k = kernel("matmul", starter("matmul"), ["fc"])          # no CONTRACT: the old rule
        self.plug([k])
        fc, x = self.net.fc, torch.randn(2, 3, 8)
        with torch.no_grad():
            torch.testing.assert_close(fc(x), F.linear(x, fc.weight, fc.bias))
        self.assertEqual((k.routed, k.fallbacks), (1, {}))

    def test_attributes_that_do_not_fit_keep_the_per_call_route(self):
        k = kernel("layernorm", starter("layernorm"), ["norm"], eps=1e-6, bias=True)     # the module's is 1e-5
        self.plug([k])
        norm = self.net.norm
        self.assertNotIn("forward", vars(norm))
        x = torch.randn(3, 6)
        with torch.no_grad():
            for _ in range(3):
                self.assertTrue(torch.equal(norm(x), F.layer_norm(x, (6,), norm.weight, norm.bias, 1e-5)))
        self.assertEqual((k.routed, k.fallbacks), (0, {"eps 1e-05, the kernel implements 1e-06": 3}))

    def test_a_full_signature_table_starts_over(self):
        from modelplug.plug import swap
        self.addCleanup(setattr, swap, "MAX_SIGNATURES", swap.MAX_SIGNATURES)
        swap.MAX_SIGNATURES = 2
        k = kernel("matmul", starter("matmul"), ["fc"], bias=True)
        self.plug([k])
        fc = self.net.fc
        with torch.no_grad():
            for rows in (1, 2, 3, 4, 1, 3):
                x = torch.randn(rows, 8)
                torch.testing.assert_close(fc(x), F.linear(x, fc.weight, fc.bias))
            fc.double()
            fc(torch.randn(2, 8, dtype=torch.float64))
        self.assertEqual((k.routed, sum(k.fallbacks.values())), (6, 1))

    def test_counters_stay_exact_over_a_model(self):
        ks = [kernel("matmul", starter("matmul"), ["fc"], bias=True),
              kernel("layernorm", starter("layernorm"), ["norm"], eps=1e-5, bias=True),
              kernel("softmax", starter("softmax"), ["soft"])]
        p = self.plug(ks)
        x = torch.randn(5, 8)
        with torch.no_grad():
            want = torch.softmax(F.layer_norm(F.linear(x, self.net.fc.weight, self.net.fc.bias), (6,),
                                              self.net.norm.weight, self.net.norm.bias, 1e-5), 1)
            for _ in range(7):
                torch.testing.assert_close(self.net(x), want)
        self.assertEqual([(r["routed_calls"], r["fallback_calls"]) for r in p.report()], [(7, {})] * 3)
        p.reset_counts()
        self.assertEqual([k.routed for k in ks], [0, 0, 0])


class AddNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(6)

    def forward(self, x, r):
        return self.norm(x + r)


class RegionOverSwap(unittest.TestCase):
    """A region (add + layernorm) and a layernorm kernel on the same nn.LayerNorm: a call the region does
    not take goes on to the layernorm kernel's swapped forward, not around it."""

    def test_the_norm_falls_through_to_the_swapped_forward(self):
        torch.manual_seed(0)
        model = AddNorm().eval()
        ln = kernel("layernorm", starter("layernorm"), ["norm"], eps=1e-5, bias=True)
        region = kernel("add_layernorm", starter("add_layernorm"), ["norm@add:<model>#0"], eps=1e-5, bias=True)
        p = plug.Plugged(model, [ln, region])
        self.addCleanup(p.restore)
        self.assertEqual((ln.plugged_sites, region.plugged_sites), (["norm"], ["norm@add:<model>#0"]))
        x, r = torch.randn(3, 6), torch.randn(3, 6)
        norm = model.norm
        with torch.no_grad():
            torch.testing.assert_close(model(x, r), F.layer_norm(x + r, (6,), norm.weight, norm.bias, 1e-5))
            self.assertEqual((region.routed, ln.routed), (1, 0))
            torch.testing.assert_close(norm(x), F.layer_norm(x, (6,), norm.weight, norm.bias, 1e-5))
        self.assertEqual(ln.routed, 1)
        self.assertEqual(sum(region.fallbacks.values()), 1)     # the region counts the call it did not take


class TimmBlock(nn.Module):
    """timm's ViT block at inference: LayerScale and DropPath are nn.Identity; norm2 reads the first
    residual sum (an add + layernorm region), the block's second sum feeds the model's last norm."""

    def __init__(self):
        super().__init__()
        self.norm1, self.attn, self.ls1, self.drop_path1 = nn.LayerNorm(6), nn.Linear(6, 6), nn.Identity(), nn.Identity()
        self.norm2, self.mlp, self.ls2, self.drop_path2 = nn.LayerNorm(6), nn.Linear(6, 6), nn.Identity(), nn.Identity()

    def forward(self, x):
        x = x + self.drop_path1(self.ls1(self.attn(self.norm1(x))))
        return x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))


class TimmNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.block, self.norm = TimmBlock(), nn.LayerNorm(6)

    def forward(self, x):
        return self.norm(self.block(x))


class QuietChildren(unittest.TestCase):
    """A site's mode steps aside only around children that run torch functions of their own: not around
    nn.Identity, nor around a region's norm, whose forward hands back the kernel's output (each step
    aside is two mode switches and the hooks' slow call path: about half a timm block's children)."""

    def test_identity_and_region_norms_get_no_hooks_and_the_regions_still_route(self):
        torch.manual_seed(0)
        model = TimmNet().eval()
        x = torch.randn(2, 3, 6)
        with torch.no_grad():
            want = model(x)
        region = kernel("add_layernorm", starter("add_layernorm"), ["block.norm2@add:block#0", "norm@add:block#1"],
                        eps=1e-5, bias=True)
        p = plug.Plugged(model, [region])
        self.addCleanup(p.restore)
        b = model.block
        for quiet in (b.ls1, b.drop_path1, b.ls2, b.drop_path2, b.norm2):
            self.assertFalse(quiet._forward_pre_hooks or quiet._forward_hooks, quiet)
        for busy in (b.norm1, b.attn, b.mlp):
            self.assertTrue(busy._forward_pre_hooks and busy._forward_hooks, busy)
        with torch.no_grad():
            for _ in range(2):
                torch.testing.assert_close(model(x), want)
                self.assertEqual(torch._C._len_torch_function_stack(), 0)
        self.assertEqual((region.routed, region.fallbacks), (4, {}))


class FusedFunctional(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        return self._act(self.fc(x))

    def _act(self, h):
        return F.gelu(h)           # found through the method the forward calls


class FusedModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.act = nn.Linear(8, 6), nn.GELU()

    def forward(self, x):
        return self.act(self.fc(x))


class FusedActivation(unittest.TestCase):
    """A Linear + GELU kernel: the model's own GELU taken out. Where the parent calls it as a function the
    parent gets the route (hooks + mode); where it is only an activation module, no mode (it would cost
    every torch call in the parent, the Linear's launch included)."""

    def check(self, model, want_hooks):
        torch.manual_seed(0)
        model = model.eval()
        x = torch.randn(3, 8)
        with torch.no_grad():
            want = F.gelu(F.linear(x, model.fc.weight, model.fc.bias))
            attrs = {"bias": True, "activation": "gelu"}
            k = kernel("matmul", starter("matmul", attrs), ["fc"], **attrs)
            p = plug.Plugged(model, [k])
            self.addCleanup(p.restore)
            self.assertEqual(len(model._forward_pre_hooks) > 0, want_hooks)
            for _ in range(3):
                torch.testing.assert_close(model(x), want)
        self.assertEqual((k.routed, k.fallbacks), (3, {}))

    def test_a_functional_gelu_gets_the_route(self):
        self.check(FusedFunctional(), True)

    def test_an_activation_module_needs_no_route(self):
        self.check(FusedModule(), False)


class Child(nn.Module):
    def __init__(self):
        super().__init__()
        self.fail, self.modes = False, []

    def forward(self, x):
        self.modes.append(torch._C._len_torch_function_stack())     # the site's mode stepped aside: 0
        if self.fail:
            raise RuntimeError("the child failed")
        return F.softmax(x * 2, dim=-1)         # the child's own softmax: another site's call, not routed


class Site(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Child()

    def forward(self, x):
        a = F.softmax(x, dim=-1)
        b = self.child(x)
        return F.softmax(a + b, dim=-1)         # after the child: the route must be back


class RouteAroundChildren(unittest.TestCase):
    """A function-level site steps its mode aside while a child runs, and takes it back after."""

    def test_the_route_skips_the_child_and_comes_back(self):
        rec = Recording(starter("softmax"))
        k = kernel("softmax", rec, ["<model>"])
        site = Site().eval()
        p = plug.Plugged(site, [k])
        self.addCleanup(p.restore)
        x = torch.randn(3, 5)
        with torch.no_grad():
            want = torch.softmax(torch.softmax(x, -1) + torch.softmax(x * 2, -1), -1)
            for _ in range(2):
                torch.testing.assert_close(site(x), want)
                self.assertEqual(torch._C._len_torch_function_stack(), 0)
        self.assertEqual((k.routed, k.fallbacks, len(rec.calls)), (4, {}, 4))
        self.assertEqual(site.child.modes, [0, 0])

    def test_a_child_that_raises_leaves_no_mode_after_restore(self):
        k = kernel("softmax", starter("softmax"), ["<model>"])
        site = Site().eval()
        p = plug.Plugged(site, [k])
        site.child.fail = True
        with torch.no_grad(), self.assertRaises(RuntimeError):
            site(torch.randn(3, 5))
        p.restore()
        self.assertEqual(torch._C._len_torch_function_stack(), 0)
        site.child.fail = False
        with torch.no_grad():
            site(torch.randn(3, 5))
        self.assertEqual(k.routed, 1)       # the first softmax of the failed call; none after restore

class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.modes = []

    def forward(self, x):
        self.modes.append(torch._C._len_torch_function_stack())
        return x * 3


class Mid(nn.Module):
    def forward(self, x):
        return F.softmax(x * 2, dim=-1)         # the mid site's own call


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.mid, self.probe = Mid(), Probe()

    def forward(self, x):
        a = F.softmax(x, dim=-1)                # the outer site's
        b = self.mid(x)
        c = self.probe(x)                       # no site: no mode may be active in it
        return F.softmax(a + b + c, dim=-1)     # the outer site's again


class NestedSites(unittest.TestCase):
    """A function-level site inside another (attention inside a decoder layer whose residual add is a
    region's): the child steps out of its parent's mode before entering its own and leaves its own before
    the parent's comes back, whichever site was hooked first. On the H100 the other order left the inner
    mode on the stack for the rest of the layer: every torch call there, the MLP's Triton launches
    included, went through it (the llama example's attention folder: -1.2 % alone, -32 % with the others)."""

    def check(self, outer_first):
        ko = kernel("softmax", starter("softmax"), ["<model>"])
        km = kernel("softmax", starter("softmax"), ["mid"])
        model = Outer().eval()
        p = plug.Plugged(model, [ko, km] if outer_first else [km, ko])
        self.addCleanup(p.restore)
        x = torch.randn(3, 5)
        with torch.no_grad():
            want = torch.softmax(torch.softmax(x, -1) + torch.softmax(x * 2, -1) + x * 3, -1)
            for _ in range(3):
                torch.testing.assert_close(model(x), want)
                self.assertEqual(torch._C._len_torch_function_stack(), 0)
        self.assertEqual(model.probe.modes, [0, 0, 0])
        self.assertEqual((ko.routed, km.routed, ko.fallbacks, km.fallbacks), (6, 3, {}, {}))

    def test_outer_site_hooked_first(self):
        self.check(True)

    def test_inner_site_hooked_first(self):
        self.check(False)


if __name__ == "__main__":
    unittest.main()
