"""The NeoX rotary plug reads the values of the model's cos/sin tables (one table for every batch row,
duplicated halves) once per table pair, not once per call: on a GPU each read is a sync that stalls
the host, and three per call in eight layers cost a Llama 12 % on an H100 (session 24). A model
computes its tables once per forward and hands them to every layer, so a forward of N layers reads
once. The verdict stays right when the tables change (new tensors, or the same ones written in place)."""

import importlib.util
import os
import unittest
from unittest import mock

from harnesstest import STARTERS

import torch

import fidelity_model as fm
from modelplug import plug


def rotary_kernel(sites):
    """The CPU starter rendered under a NeoX contract (as extract writes CONTRACT into a folder's kernel)."""
    spec = importlib.util.spec_from_file_location("test_rotaryplug_starter",
                                                  os.path.join(STARTERS, "cpu", "rotary_embedding.py"))
    module = importlib.util.module_from_spec(spec)
    module.CONTRACT = {"layout": "neox"}
    spec.loader.exec_module(module)
    contract = {"op_type": "rotary_embedding", "callable": "function:fidelity_model.apply_rotary_pos_emb",
                "attrs": {"layout": "neox"}}
    return plug.Kernel("05-rotary_embedding", "rotary_embedding", module.kernel_fn, sites, torch.float32,
                       contract=contract)


class Reads:
    """Counts the device-to-host reads the plug makes (tolist, torch.equal, item) while it is entered."""

    def __enter__(self):
        self.count = 0
        real_tolist, real_equal, real_item = torch.Tensor.tolist, torch.equal, torch.Tensor.item

        def counted(f):
            def g(*a, **kw):
                self.count += 1
                return f(*a, **kw)
            return g
        self._patches = [mock.patch.object(torch.Tensor, "tolist", counted(real_tolist)),
                         mock.patch.object(torch, "equal", counted(real_equal)),
                         mock.patch.object(torch.Tensor, "item", counted(real_item))]
        for p in self._patches:
            p.start()
        return self

    def __exit__(self, *exc):
        for p in reversed(self._patches):
            p.stop()


class RotaryTables(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(3)
        self.model = fm.Model().eval()
        self.x = torch.randn(fm.B, fm.S, fm.DIM)
        with torch.no_grad():
            self.want = self.model(self.x)
        self.kernel = rotary_kernel(["layers.0.attn", "layers.1.attn"])
        self.plugged = plug.Plugged(self.model, [self.kernel])
        self.assertEqual(sorted(self.kernel.plugged_sites), ["layers.0.attn", "layers.1.attn"],
                         self.kernel.unplugged)

    def tearDown(self):
        self.plugged.restore()

    def forward(self):
        with torch.no_grad():
            return self.model(self.x)

    def test_one_read_per_forward_for_every_layer(self):
        with Reads() as reads:
            out = self.forward()
        self.assertEqual(self.kernel.routed, 4)                  # q and k in each of the two layers
        self.assertEqual(self.kernel.fallbacks, {})
        self.assertEqual(reads.count, 1)
        torch.testing.assert_close(out, self.want)
        with Reads() as reads:
            torch.testing.assert_close(self.forward(), self.want)
        self.assertEqual(reads.count, 1)                         # a new forward: new tables, read again

    def test_tables_written_in_place_are_read_again(self):
        seen = []
        original = fm.Attention.forward

        def forward(attn, x, cos, sin):
            seen.append(cos)
            if len(seen) == 2:          # the second layer: the same tensors, written in place
                with torch.no_grad():
                    half = cos.shape[-1] // 2
                    cos[..., half:] += 1.0              # halves no longer duplicated
            return original(attn, x, cos, sin)
        with mock.patch.object(fm.Attention, "forward", forward), Reads() as reads:
            self.forward()
        self.assertIs(seen[0], seen[1])
        self.assertEqual(reads.count, 2)
        self.assertEqual(self.kernel.routed, 2)                  # layer 0 only
        self.assertEqual(list(self.kernel.fallbacks), ["cos/sin halves differ (not the NeoX layout's duplicated halves)"])

    def test_batch_rows_at_other_positions_fall_back(self):
        original = fm.RotaryEmbedding.forward

        def shifted(rot, x, position_ids):      # left padding: each batch row starts at another position
            return original(rot, x, position_ids + torch.arange(position_ids.shape[0]).unsqueeze(1))
        with mock.patch.object(fm.RotaryEmbedding, "forward", shifted):
            with torch.no_grad():
                want = self.model(self.x)       # plugged, but every call falls back: the model's own math
            self.assertEqual(self.kernel.routed, 0)
            self.assertEqual(list(self.kernel.fallbacks),
                             ["cos/sin differ between batch rows (per-sequence positions; the kernel takes one table)"])
        self.plugged.restore()
        with mock.patch.object(fm.RotaryEmbedding, "forward", shifted), torch.no_grad():
            torch.testing.assert_close(want, self.model(self.x))
        self.plugged = plug.Plugged(self.model, [])


if __name__ == "__main__":
    unittest.main()
