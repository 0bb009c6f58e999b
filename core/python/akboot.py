"""AutoKernel Studio worker bootstrap for a launcher (ssh, srun): `python -u -c <this file> HASH ENV`.

Nothing is assumed shared with the machine that drives the loop. The worker's Python files (worker,
harness, starters) live in $XDG_CACHE_HOME/autokernel/remote/python-HASH here, checked by content on
every start (the same SHA-256 over paths and bytes that names the directory); when they are missing
or differ, this asks for them on the protocol channel and the client sends them once:

    boot   -> {"event":"bundle","have":false,"hash":HASH}
    client -> <byte count>\n<qCompress'd JSON {relative path: base64 bytes}>

Then akworker.py takes over stdin and stdout as usual and sends its ready line. ENV is base64 JSON of
the few variables the worker needs from the coordinator (CUDA_VISIBLE_DEVICES, harness switches);
the rest of the environment is the remote side's own. Imports nothing outside the standard library.
"""
import base64
import compileall
import hashlib
import json
import os
import runpy
import shutil
import stat
import sys
import zlib


def digest(root):
    """First 16 hex digits of SHA-256 over every file's relative path and bytes (PythonScripts')."""
    if not os.path.isdir(root):
        return ""
    paths = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        paths += [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/") for f in files]
    h = hashlib.sha256()
    for rel in sorted(paths):
        with open(os.path.join(root, rel), "rb") as f:
            h.update(rel.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()[:16]


def read_exact(n):
    out = bytearray()
    while len(out) < n:
        chunk = os.read(0, min(1 << 20, n - len(out)))
        if not chunk:
            raise EOFError("the client closed the channel during the file transfer")
        out += chunk
    return bytes(out)


def read_line():
    out = bytearray()
    while not out.endswith(b"\n"):
        b = os.read(0, 1)  # byte by byte: what follows the line belongs to the worker
        if not b:
            raise EOFError("the client closed the channel before sending the files")
        out += b
    return out.decode().strip()


def remove(path):
    if not os.path.lexists(path):
        return
    for d, dirs, _ in os.walk(path):
        os.chmod(d, stat.S_IRWXU)
        for x in dirs:
            os.chmod(os.path.join(d, x), stat.S_IRWXU)
    shutil.rmtree(path, ignore_errors=True)


def fetch(final, want):
    os.write(1, (json.dumps({"event": "bundle", "have": False, "hash": want}) + "\n").encode())
    data = read_exact(int(read_line()))
    files = json.loads(zlib.decompress(data[4:]))  # qCompress: a 4-byte length, then zlib
    tmp = "%s.tmp-%d" % (final, os.getpid())
    remove(tmp)
    for rel, b64 in files.items():
        path = os.path.join(tmp, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(b64))
    if digest(tmp) != want:
        remove(tmp)
        raise RuntimeError("the worker files arrived damaged (content hash differs from %s)" % want)
    # Bytecode now, named as the final path: the directory is read-only from here on, and without it
    # every sandboxed process would compile the harness again (tens of ms per bench).
    compileall.compile_dir(tmp, ddir=final, quiet=2)
    for d, _, names in os.walk(tmp, topdown=False):  # read-only: no kernel, no __pycache__ writes
        for x in names:
            os.chmod(os.path.join(d, x), 0o444)
        os.chmod(d, 0o555)
    if digest(final) != want:
        remove(final)
    try:
        os.rename(tmp, final)
    except OSError:
        remove(tmp)  # another worker won the race; its copy is checked below
    if digest(final) != want:
        raise RuntimeError("cannot put the worker files in place at %s" % final)


def main():
    want = sys.argv[1]
    os.environ.update(json.loads(base64.b64decode(sys.argv[2]).decode()))
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    root = os.path.join(cache, "autokernel", "remote")
    os.makedirs(root, exist_ok=True)
    final = os.path.join(root, "python-" + want)
    if digest(final) != want:
        fetch(final, want)
    return final


try:
    HERE = main()
except Exception as e:  # noqa: BLE001 - the client reads stderr during start-up
    sys.stderr.write("autokernel worker bootstrap on %s: %s: %s\n" % (os.uname().nodename, type(e).__name__, e))
    sys.exit(4)
sys.argv = [os.path.join(HERE, "akworker.py")]
sys.path.insert(0, HERE)
runpy.run_path(sys.argv[0], run_name="__main__")
