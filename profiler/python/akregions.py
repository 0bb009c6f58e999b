"""Regions larger than one op (#40 [beat-compile] item 1): from the call-site structure the capture
pass recorded, profile rows that one fused kernel can replace are merged into one row that stands for
all of them, ranked by the time of everything it covers (docs/profiler.md "Regions").

- add + norm: a norm module whose input is exactly the output of a residual add (`h = x + residual;
  y = norm(h)`: Llama's post_attention_layernorm, the next layer's input_layernorm, ViT's norm2...):
  op type add_rmsnorm or add_layernorm, its sites "NORM_SITE@add:ADD_SITE#ORDINAL" (the plug finds
  the add by the site it runs in and its ordinal among that site's residual adds);
- gated MLP: a module with gate/up/down linears whose gate output goes through SiLU (LlamaMLP,
  SwiGLU): op type fused_mlp, covering the three GEMMs, the SiLU and the product;
- Linear + activation: a linear whose output the next call activates (its contract's `activation`
  attribute) takes that activation's time into its own matmul row.

The rows a region covers lose those sites (and their time): the single-op folders it swallows are not
tuned again for the same sites; what they ran is listed in the region row's "covers". Each site entry
carries time_us (akprofile), which is what moves. Nothing here may fail a profile: the caller catches.
"""

import akcapture

REGION_OP = "region::"
ACTIVATION_OPS = ("aten::gelu", "aten::silu", "aten::relu", "aten::clamp_min", "aten::gelu_", "aten::silu_",
                  "aten::relu_")
ADD_OPS = ("aten::add", "aten::add_")
GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "aten::linear")
VIEW_OPS = ("view", "_reshape_alias", "_unsafe_view", "as_strided", "reshape", "t", "transpose", "expand",
            "slice", "select", "unsqueeze", "squeeze", "permute", "detach", "empty", "resize_", "zeros", "zero_",
            "fill_")
_EPS = 1e-9


def region_site(norm_site, add_site, ordinal):
    return "%s@add:%s#%d" % (norm_site, add_site, ordinal)


def _bare(aten_op):
    return aten_op.split(".")[0]


class _Sites:
    """Index of every (row, site entry) by the site's module qualname."""

    def __init__(self, rows):
        self.rows = rows
        self.by_module = {}
        for row in rows:
            for site in row.get("call_sites") or []:
                self.by_module.setdefault(site.get("module") or "<model>", []).append((row, site))

    def take(self, row, site, calls=None):
        """Moves `calls` calls' time (all, when None) out of a row's site entry; returns the time."""
        t = float(site.get("time_us", 0.0))
        n = float(site.get("calls", 0.0))
        if calls is not None and n > calls + _EPS:
            t = t * calls / n
            site["time_us"] = site.get("time_us", 0.0) - t
            site["calls"] = n - calls
            moved = calls
        else:
            moved = n
            site["calls"], site["time_us"] = 0.0, 0.0
        row["time_us"] -= t
        row["calls"] = max(0.0, row["calls"] - moved)
        return t


def _norm_kind(cap, site):
    """(op type, the norm's call facts) of the norm module at `site`: rmsnorm or layernorm."""
    facts = None
    for key in ("layer_norm", "rms_norm"):
        entries = cap.functions.get((site, key))
        if entries:
            facts = akcapture._pick(entries, None)
            return ("layernorm" if key == "layer_norm" else "rmsnorm"), facts
    facts = cap.modules.get(site)
    if not facts:
        return None, None
    probe = facts.get("probe") if isinstance(facts.get("probe"), dict) else {}
    if probe.get("formula") not in ("rmsnorm", "layernorm"):
        return None, None       # a GroupNorm, or a norm no formula reproduces: no region is proposed
    return probe["formula"], dict(facts)


def _normalises_the_sum(norm, shape):
    """Whether the norm's own call takes the add's output as it is and normalises its last dim (the
    region kernel's rows). timm's LayerNorm2d permutes NCHW to put the channels last and normalises
    those: its layer_norm input is not the sum's shape and its weight is not the sum's last dim (on an
    H100, session 25, ConvNeXt's was proposed and the plug-check refused it with an exception)."""
    params = (norm or {}).get("params") or {}
    weight = params.get("weight") if isinstance(params.get("weight"), (list, tuple)) else None
    for t in (norm or {}).get("tensors") or ():
        if t.get("arg") == "input" and t.get("shape") is not None and list(t["shape"]) != list(shape):
            return False
        if t.get("arg") == "weight" and t.get("shape") is not None:
            weight = t["shape"]
    return weight is None or list(weight) == [shape[-1]]


def _region_row(op, shapes, dtype, module_class):
    return {"name": "%s region" % op, "aten_op": REGION_OP + op, "op_stack": [], "module": module_class,
            "shapes": shapes, "dtypes": [dtype] * len(shapes), "concrete_inputs": [], "time_us": 0.0,
            "calls": 0.0, "call_sites": [], "functions": [], "covers": [], "region": op}


def _add_site(row, site_name, module_class, facts, shapes, t, covers):
    row["call_sites"].append({"module": site_name, "module_class": module_class, "function": "", "frames": [],
                              "aten_op": row["aten_op"], "op_stack": [], "shapes": shapes,
                              "dtypes": row["dtypes"], "calls": 1.0, "time_us": t, "call": facts})
    row["time_us"] += t
    row["calls"] += 1.0
    row["covers"] += covers


def _dtype_short(name):
    return {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(name, name)


def _moved_at(index, module, pred=None):
    """(time, [(op, time)]) of every row's whole site entry at `module` (pred(row) filters)."""
    total, covers = 0.0, []
    for row, site in list(index.by_module.get(module, ())):
        if site.get("calls", 0) <= _EPS or (pred is not None and not pred(row)):
            continue
        t = index.take(row, site)
        total += t
        covers.append((row, t))
    return total, covers


def _cover_entries(pairs, site, label=None):
    out = {}
    for row, t in pairs:
        op = label or _bare(row.get("aten_op", "")).replace("aten::", "")
        out[op] = out.get(op, 0.0) + t
    return [{"op": op, "site": site, "time_us": t} for op, t in sorted(out.items())]


def add_norm_regions(cap, index, groups):
    for norm_site, links in sorted(cap.norm_inputs.items()):
        if len(links) != 1 or links[0] is None:
            continue            # called more than once per forward, or not on an add's output
        link = links[0]
        kind, norm = _norm_kind(cap, norm_site)
        if kind is None:
            continue
        tensors = link["facts"]["tensors"]
        shape, dtype = list(tensors[0]["shape"]), tensors[0]["dtype"]
        if not _normalises_the_sum(norm, shape):
            continue            # a channels-first norm (LayerNorm2d): the kernel normalises rows
        n = shape[-1]
        params = (norm or {}).get("params") or {}
        bias = any(t.get("arg") == "bias" for t in (norm or {}).get("tensors") or ()) or bool(params.get("bias"))
        op = "add_" + kind
        shapes = [shape, shape, [n]] + ([[n]] if op == "add_layernorm" and bias else [])
        # The add: one call's time of the same-shape add rows at its site.
        add_time = 0.0
        for row, site in list(index.by_module.get(link["site"], ())):
            if _bare(row.get("aten_op", "")) in ADD_OPS and [list(s) for s in row.get("shapes") or []][:2] == [shape, shape] \
                    and site.get("calls", 0) > _EPS:
                add_time += index.take(row, site, calls=1.0)
                break
        norm_time, pairs = _moved_at(index, norm_site)
        site_name = region_site(norm_site, link["site"], link["ordinal"])
        facts = {"kind": "region", "name": op, "module": site_name,
                 "module_class": (norm or {}).get("module_class", ""),
                 "norm": norm, "add": {"site": link["site"], "ordinal": link["ordinal"],
                                       "name": link["facts"]["name"], "tensors": tensors}}
        covers = [{"op": "add", "site": link["site"], "time_us": add_time}] + _cover_entries(pairs, norm_site, kind)
        key = (op, repr(shapes), dtype, akcapture.fingerprint(dict(norm or {}, module="")))
        row = groups.get(key)
        if row is None:
            row = groups[key] = _region_row(op, shapes, _dtype_short(dtype), (norm or {}).get("module_class", ""))
        _add_site(row, site_name, facts["module_class"], facts, shapes, add_time + norm_time, covers)


def _linear_facts(cap, site):
    entries = cap.functions.get((site, "linear"))
    return akcapture._pick(entries, None) if entries else None


def mlp_regions(cap, index, groups):
    for site, (g, u, d) in sorted(cap.mlps.items()):
        prefix = "" if site == "<model>" else site + "."
        gate, up, down = (_linear_facts(cap, prefix + n) for n in (g, u, d))
        if not (gate and up and down) or gate.get("activation") != "silu":
            continue            # a GeGLU or an MLP that never ran: its linears stay matmul folders
        if any(f.get("variants") or any(t.get("arg") == "bias" for t in f.get("tensors") or ()) for f in (gate, up, down)):
            continue
        x = next((t for t in gate["tensors"] if t.get("arg") == "input"), None)
        wg = next((t for t in gate["tensors"] if t.get("arg") == "weight"), None)
        wd = next((t for t in down["tensors"] if t.get("arg") == "weight"), None)
        if not (x and wg and wd):
            continue
        shapes = [list(x["shape"]), list(wg["shape"]), list(wg["shape"]), list(wd["shape"])]
        total, pairs = 0.0, []
        for module in sorted(index.by_module):
            if module == site or (prefix and module.startswith(prefix)):
                t, p = _moved_at(index, module)
                total += t
                pairs += [(row, tt, module) for row, tt in p]
        covers = {}
        projections = {prefix + n for n in (g, u, d)}
        for row, t, module in pairs:
            # A projection's every op (its GEMM, views, copies) is "matmul"; the module's own code
            # by aten op (silu, mul), views left out of the list (their time still counted).
            op = "matmul" if module in projections else _bare(row.get("aten_op", "")).replace("aten::", "")
            if op in VIEW_OPS:
                continue
            covers[(op, module)] = covers.get((op, module), 0.0) + t
        facts = {"kind": "region", "name": "fused_mlp", "module": site,
                 "module_class": (cap.modules.get(site) or {}).get("module_class", ""),
                 "gate": gate, "up": up, "down": down, "activation": gate.get("activation")}
        key = ("fused_mlp", repr(shapes), x["dtype"])
        row = groups.get(key)
        if row is None:
            row = groups[key] = _region_row("fused_mlp", shapes, _dtype_short(x["dtype"]), facts["module_class"])
        # In the order they run: the projections, the activation, the product, anything else.
        order = {"matmul": 0, "silu": 1, "mul": 2}
        _add_site(row, site, facts["module_class"], facts, shapes, total,
                  [{"op": op, "site": m, "time_us": t}
                   for (op, m), t in sorted(covers.items(), key=lambda kv: (order.get(kv[0][0], 3), kv[0]))])


def linear_activation_regions(cap, index):
    """The activation's time moves into the linear's own matmul row (no new row)."""
    for lsite, asite in sorted(cap.activation_sites.items()):
        facts = _linear_facts(cap, lsite)
        if not facts or not facts.get("activation"):
            continue
        gemm = [(row, site) for row, site in index.by_module.get(lsite, ())
                if site.get("calls", 0) > _EPS and any(_bare(op) in GEMM_OPS for op in [row.get("aten_op", "")] + list(row.get("op_stack") or []))]
        if not gemm:
            continue
        # The GEMM's own row (aten::mm under aten::linear), not a copy or view inside the linear.
        row, site = max(gemm, key=lambda rs: (_bare(rs[0].get("aten_op", "")) in GEMM_OPS, rs[1].get("time_us", 0.0)))
        calls = max(1.0, float(site.get("calls", 1.0)))
        for arow, asite_entry in list(index.by_module.get(asite, ())):
            if _bare(arow.get("aten_op", "")) in ACTIVATION_OPS and asite_entry.get("calls", 0) > _EPS:
                t = index.take(arow, asite_entry, calls=min(calls, asite_entry["calls"]))
                site["time_us"] = site.get("time_us", 0.0) + t
                row["time_us"] += t
                cover = {"op": _bare(arow["aten_op"]).replace("aten::", ""), "site": asite, "time_us": t}
                if asite_entry.get("call"):
                    cover["call"] = asite_entry["call"]     # the swallowed call's facts stay on record
                row.setdefault("covers", []).append(cover)
                break


def apply(rows, cap):
    """rows (akprofile, per iteration, sites with time_us) -> rows with regions merged in; the total
    time is unchanged (time moves, it is never counted twice)."""
    index = _Sites(rows)
    groups = {}
    mlp_regions(cap, index, groups)
    linear_activation_regions(cap, index)
    add_norm_regions(cap, index, groups)
    out = []
    for row in rows:
        had = bool(row.get("call_sites"))
        row["call_sites"] = [s for s in row.get("call_sites") or [] if s.get("calls", 0) > _EPS]
        if row["call_sites"] or not had:            # a row whose every site a region took is gone
            out.append(row)
    for row in groups.values():
        row["call_sites"].sort(key=lambda s: s["module"])
        out.append(row)
    return out
