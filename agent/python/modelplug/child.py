"""The model runner of `verify`, in a sandbox (harness/isolation/sandbox.py, mode "model"): the user's model with
the run's kernels plugged in or not. The judge of the verification (verify.py) never imports a kernel:
it gets outputs back as raw bytes and times this process's requests with its own clock.

Ops (harness/ipc/wire.py messages):
  load    {model_path, device, dtype, kernels: [{name, op_type, path, sites, dtype}]}
          -> {ok, kernels: {name: "" | import error}}
  inputs  {seed}                       the model's get_inputs() under that seed
  run     {kernels: [names], dir}      one forward; outputs written to dir as raw bytes
          -> {ok, outputs: [{path, shape, dtype, file}], plug: [...]}
  prepare  {variant, kernels, compile}  an eager variant (kernels plugged when activated) or a
                                        compiled copy of the model (torch.compile
                                        max-autotune-no-cudagraphs, kernels as custom ops), warmed up
  release  {variant}                    forgets a variant (frees a compiled copy)
  activate {variant}                    plugs the variant's kernels (untimed)
  time     {variant, reps, flush}       reps forwards of the active variant (L2 flushed before each on
                                        CUDA), then a sync
"""

import os
import sys
import traceback


def _one_line(exc):
    text = str(exc).strip().splitlines()
    return "%s: %s" % (type(exc).__name__, text[0]) if text else type(exc).__name__


def leaves(value, path="output"):
    """(path, tensor) for every tensor in a model's output: tensors, tuples, lists, dicts and
    transformers' ModelOutput (a dict)."""
    import torch
    if isinstance(value, torch.Tensor):
        yield path, value
    elif isinstance(value, dict) or hasattr(value, "items"):
        for k, v in value.items():
            yield from leaves(v, "%s.%s" % (path, k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from leaves(v, "%s[%d]" % (path, i))


def write_leaves(out, directory, prefix):
    """Raw bytes of every output tensor in `directory`; their description for the judge."""
    import torch
    items = []
    for i, (path, t) in enumerate(leaves(out)):
        t = t.detach().contiguous().cpu()
        name = "%s-%d.bin" % (prefix, i)
        with open(os.path.join(directory, name), "wb") as f:
            if t.numel():
                f.write(t.reshape(-1).view(torch.uint8).numpy().data)     # no copy of a big output
        items.append({"path": path, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                      "file": name})
    return items


class State:
    def __init__(self, device):
        self.device = device
        self.model = None
        self.inputs = None
        self.kernels = {}           # name -> plug.Kernel
        self.variants = {}          # name -> callable(inputs)
        self.plugged = None         # the active eager variant's plug
        self.active = None
        self.flush = None


def _load(state, msg):
    import akprofile
    import torch
    from modelplug import plug
    os.environ["AUTOKERNEL_DEVICE"] = state.device
    path = msg["model_path"]
    module = akprofile.load_model_module(path)
    state.module = module
    dtype = getattr(torch, msg["dtype"])
    state.dtype = dtype
    torch.manual_seed(0)
    model = akprofile._call_user(path, "get_model()", module.get_model)
    state.model = model.to(device=state.device, dtype=dtype).eval()
    status = {}
    for k in msg.get("kernels", []):
        try:
            mod, ktype = plug.load_kernel(k["path"], k["name"])
            fn = getattr(mod, "kernel_fn", None)
            if not callable(fn):
                raise ValueError("defines no kernel_fn")
            state.kernels[k["name"]] = plug.Kernel(k["name"], k["op_type"], fn, k["sites"],
                                                   getattr(torch, k["dtype"]) if k.get("dtype") else None,
                                                   contract=plug.contract_of(mod), callable=k.get("callable"))
            status[k["name"]] = ""
        except BaseException as exc:  # noqa: BLE001 - the kernel's import failing is its own problem
            status[k["name"]] = "%s does not import: %s" % (os.path.basename(k["path"]), _one_line(exc))
    if state.device == "cuda":
        state.flush = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
    return {"ok": True, "kernels": status}


def _inputs(state, msg):
    import akprofile
    import torch
    torch.manual_seed(int(msg["seed"]))
    inputs = akprofile._call_user(state.module.__file__, "get_inputs()", state.module.get_inputs)
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    state.inputs = akprofile._to_device(list(inputs), state.device, state.dtype)
    return {"ok": True}


def _plug(state, names, compiled=False):
    from modelplug import plug
    chosen = []
    for n in names:
        k = state.kernels[n]
        if compiled and k.call is k.fn:
            op = plug.custom_op(n, k.op_type, k.fn, k.attrs)
            if op is not None:
                k.call = op
        if not compiled:
            k.call = k.fn
        chosen.append(k)
    return plug.Plugged(state.model, chosen)


def _forward(state):
    import torch
    with torch.no_grad():
        out = state.model(*state.inputs)
    if state.device == "cuda":
        torch.cuda.synchronize()
    return out


def _run(state, msg):
    if state.plugged is not None:
        state.plugged.restore()
        state.plugged, state.active = None, None
    plugged = _plug(state, msg.get("kernels") or [])
    try:
        plugged.reset_counts()
        out = _forward(state)
        outputs = write_leaves(out, msg["dir"], msg.get("prefix", "out"))
        return {"ok": True, "outputs": outputs, "plug": plugged.report()}
    finally:
        plugged.restore()


def _prepare(state, msg):
    """An eager variant is a set of kernels plugged into the model when it is activated; a compiled
    variant is a copy of the model, plugged for good (through custom ops), then compiled and warmed."""
    import copy
    import torch
    name, kernels = msg["variant"], msg.get("kernels") or []
    if not msg.get("compile"):
        state.variants[name] = ("eager", kernels, None)
        return {"ok": True}
    if not hasattr(torch, "compile"):
        return {"ok": False, "error": "torch %s has no torch.compile" % torch.__version__}
    import torch._dynamo
    model = copy.deepcopy(state.model)
    if kernels:
        from modelplug import plug
        api, why = plug.custom_op_api()
        if api is None:
            return {"ok": False, "error": why}
        chosen = plug.as_custom_ops([plug.Kernel(k.name, k.op_type, k.fn, k.sites, k.dtype, contract=k.contract,
                                                 callable=k.callable)
                                     for k in (state.kernels[n] for n in kernels)])
        plug.Plugged(model, chosen, frozen=True)   # stays plugged: this copy is only ever run compiled
    compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
    state.variants[name] = ("compiled", None, compiled)
    state.active = None
    _activate(state, {"variant": name})
    for _ in range(int(msg.get("warmup", 3))):
        _time(state, {"variant": name, "reps": 1, "flush": False})
    return {"ok": True}


def _release(state, msg):
    """Frees a variant (a compiled copy holds a whole model): verify under compile prepares one per
    kernel left out."""
    name = msg["variant"]
    if state.active == name:
        if state.plugged is not None:
            state.plugged.restore()
            state.plugged = None
        state.active = None
    state.variants.pop(name, None)
    return {"ok": True}


def _activate(state, msg):
    """Makes a variant the one `time` runs (untimed: plugging is not part of a forward)."""
    name = msg["variant"]
    kind, kernels, _ = state.variants[name]
    if state.plugged is not None:
        state.plugged.restore()
        state.plugged = None
    if kind == "eager" and kernels:
        state.plugged = _plug(state, kernels)
    state.active = name
    return {"ok": True}


def _time(state, msg):
    import torch
    name = msg["variant"]
    if state.active != name:
        return {"ok": False, "error": "variant %s is not active" % name}
    kind, _, compiled = state.variants[name]
    model = compiled if kind == "compiled" else state.model
    with torch.no_grad():
        for _ in range(int(msg["reps"])):
            if msg.get("flush") and state.flush is not None:
                state.flush.zero_()
            model(*state.inputs)
    if state.device == "cuda":
        torch.cuda.synchronize()
    return {"ok": True}


def serve(conn, device):
    state = State(device)
    ops = {"load": _load, "inputs": _inputs, "run": _run, "prepare": _prepare, "activate": _activate,
           "time": _time, "release": _release, "ping": lambda s, m: {"ok": True}}
    while True:
        try:
            msg, fds = conn.recv()
        except Exception:  # noqa: BLE001 - the judge went away
            return
        op = ops.get(msg.get("op"))
        try:
            reply = op(state, msg) if op else {"ok": False, "error": "unknown op %r" % msg.get("op")}
        except BaseException as exc:  # noqa: BLE001 - report, keep serving
            reply = {"ok": False, "error": _one_line(exc), "traceback": traceback.format_exc()[-4000:]}
        try:
            conn.send(reply)
        except Exception:  # noqa: BLE001
            conn.send({"ok": False, "error": "reply could not be encoded"})


if __name__ == "__main__":
    sys.exit("run by the harness's runner (mode model), not directly")
