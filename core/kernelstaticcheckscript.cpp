// The Python half of kernelstaticcheck.cpp, kept in its own file so it reads as Python. It runs in
// the embedded interpreter, uses only the standard library (ast, json) and never executes the source.
namespace ak::detail {

extern const char kStaticCheckScript[];
const char kStaticCheckScript[] = R"PY(
import ast
import json
import math
import re

_CONTRACT = {"KERNEL_TYPE", "TEST_SIZES", "TOLERANCES", "TEST_DTYPES", "TUNE_SPACE"}
_UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")


def _number(node):
    """(value, is_int) for an int/float literal, optionally signed; None otherwise."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return sign * node.value, type(node.value) is int
    return None


def _targets(stmt):
    if isinstance(stmt, ast.Assign):
        return stmt.targets, stmt.value
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return [stmt.target], stmt.value
    if isinstance(stmt, ast.AugAssign):
        return [stmt.target], None
    return [], None


def _bound_names(tree):
    """How many times each name is bound at module level (assignments, defs, imports)."""
    counts = {}
    for stmt in tree.body:
        names = []
        targets, _ = _targets(stmt)
        for t in targets:
            names += [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(stmt.name)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in stmt.names]
        for n in names:
            counts[n] = counts.get(n, 0) + 1
    return counts


def _scan(source):
    """Parse and collect (tree, constants{name: (value, is_int, node)}, assigned{name: value_node})."""
    tree = ast.parse(source, mode="exec")
    counts = _bound_names(tree)
    constants, assigned = {}, {}
    for stmt in tree.body:
        targets, value = _targets(stmt)
        if value is None or len(targets) != 1 or not isinstance(targets[0], ast.Name):
            continue
        name = targets[0].id
        assigned[name] = value
        num = _number(value)
        # A name bound twice is left alone: changing one binding would not be the value that runs.
        if num is not None and _UPPER.match(name) and name not in _CONTRACT and counts.get(name) == 1:
            constants[name] = (num[0], num[1], value)
    return tree, constants, assigned


def _fail(info, message, line=0):
    info["ok"] = False
    info["error"] = message
    info["error_line"] = line
    return json.dumps(info)


def analyze(source, filename):
    info = {"ok": False, "error": "", "error_line": 0, "kernel_type": "", "kernel_fn_args": [], "constants": [],
            "contract": ""}
    try:
        tree, constants, assigned = _scan(source)
    except SyntaxError as e:
        line = e.lineno or 0
        return _fail(info, "%s:%d: %s" % (filename, line, e.msg), line)
    except (ValueError, MemoryError, RecursionError) as e:  # null bytes, absurd nesting
        return _fail(info, "%s: cannot parse: %s" % (filename, e))

    fns = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "kernel_fn"]
    if fns:
        a = fns[-1].args
        args = [p.arg for p in a.posonlyargs + a.args]
        if a.vararg:
            args.append("*" + a.vararg.arg)
        args += [p.arg for p in a.kwonlyargs]
        if a.kwarg:
            args.append("**" + a.kwarg.arg)
        info["kernel_fn_args"] = args

    space = {}
    for name, (value, is_int, node) in sorted(constants.items(), key=lambda kv: kv[1][2].lineno):
        space_entry = {"name": name, "value": value, "is_integer": is_int, "line": node.lineno, "candidates": []}
        info["constants"].append(space_entry)
        space[name] = space_entry

    # The harness's accuracy bar and sizes: compared as syntax trees, so reformatting is not a change.
    info["contract"] = "\n".join("%s=%s" % (n, ast.dump(assigned[n]))
                                 for n in ("TEST_SIZES", "TOLERANCES", "TEST_DTYPES") if n in assigned)

    kt = assigned.get("KERNEL_TYPE")
    if kt is None:
        return _fail(info, "%s: KERNEL_TYPE is missing" % filename)
    if not (isinstance(kt, ast.Constant) and isinstance(kt.value, str) and kt.value.strip()):
        return _fail(info, "%s:%d: KERNEL_TYPE must be a non-empty string literal" % (filename, kt.lineno), kt.lineno)
    info["kernel_type"] = kt.value
    if not fns:
        if "kernel_fn" in assigned:
            line = assigned["kernel_fn"].lineno
            return _fail(info, "%s:%d: kernel_fn must be defined with def" % (filename, line), line)
        return _fail(info, "%s: kernel_fn is missing" % filename)

    ts = assigned.get("TUNE_SPACE")
    if ts is not None:
        bad = "%s:%d: TUNE_SPACE must be a dict literal of constant name -> list of numbers" % (filename, ts.lineno)
        try:
            value = ast.literal_eval(ts)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return _fail(info, bad, ts.lineno)
        if not isinstance(value, dict):
            return _fail(info, bad, ts.lineno)
        for key, cands in value.items():
            if not isinstance(key, str) or not isinstance(cands, (list, tuple)) or not cands or \
                    any(type(c) not in (int, float) for c in cands):
                return _fail(info, bad, ts.lineno)
            if key not in space:
                return _fail(info, "%s:%d: TUNE_SPACE names %s, which is not a tunable constant "
                             "(an UPPER_CASE name bound once to a number literal)" % (filename, ts.lineno, key),
                             ts.lineno)
            if space[key]["is_integer"] and any(float(c) != int(c) for c in cands):
                return _fail(info, "%s:%d: TUNE_SPACE[%r] lists a non-integer for an integer constant"
                             % (filename, ts.lineno, key), ts.lineno)
            space[key]["candidates"] = [float(c) for c in cands]

    info["ok"] = True
    return json.dumps(info)


def _literal(value, is_int, name):
    if not math.isfinite(value):
        raise ValueError("%s: %r is not a finite number" % (name, value))
    if is_int:
        if value != int(value):
            raise ValueError("%s is an integer constant; %r is not an integer" % (name, value))
        return str(int(value))
    return repr(float(value))


def rewrite(source, values):
    """JSON [[start, end, text], ...] byte spans (descending) for the caller to splice, or {"error"}."""
    try:
        _, constants, _ = _scan(source)
    except SyntaxError as e:
        return json.dumps({"error": "line %d: %s" % (e.lineno or 0, e.msg)})
    except (ValueError, MemoryError, RecursionError) as e:
        return json.dumps({"error": "cannot parse: %s" % e})
    # ast columns are UTF-8 byte offsets within a line; lines end at \n, \r\n or \r like the tokenizer's.
    starts, pos = [], 0
    for line in source.splitlines(keepends=True):
        starts.append(pos)
        pos += len(line)
    starts.append(pos)
    bom = 3 if source.startswith(b"\xef\xbb\xbf") else 0
    spans = []
    for name, value in values.items():
        if name not in constants:
            return json.dumps({"error": "%s is not a tunable constant" % name})
        _, is_int, node = constants[name]
        try:
            text = _literal(value, is_int, name)
        except ValueError as e:
            return json.dumps({"error": str(e)})

        def offset(line, col):
            return starts[line - 1] + col + (bom if line == 1 else 0)
        spans.append([offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset), text])
    spans.sort(key=lambda s: -s[0])
    return json.dumps({"spans": spans})
)PY";

} // namespace ak::detail
