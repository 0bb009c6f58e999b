#!/usr/bin/env python3
"""Writes the man pages autokernel(1) and autokernel-cli(1) from the programs' own --help, so a page
never lists an option the program does not have (or misses one it has). The sections no --help
carries (exit status, environment, files) are kept here, beside the generator.

    genman.py CLI GUI VERSION OUTDIR     (writes OUTDIR/autokernel-cli.1.gz and autokernel.1.gz)

Run at build time (packaging/CMakeLists.txt); QT_QPA_PLATFORM=offscreen so the window's --help
needs no display.
"""

import datetime
import gzip
import os
import re
import subprocess
import sys

# Every variable the programs or their Python children read (tests/packaging/test_man.py checks this
# list against the sources). (name, text).
ENVIRONMENT = [
    ("AUTOKERNEL_PYTHON", "The Python interpreter that has torch (and Triton for GPU kernels), when "
     "no --python and no run.json names one. Without it, python3 on PATH with torch is looked for."),
    ("AUTOKERNEL_BWRAP", "The bubblewrap binary that sandboxes each candidate kernel, or none to "
     "refuse bubblewrap (candidates then run unsandboxed and the run says so)."),
    ("AUTOKERNEL_SANDBOX_MEMORY_MB", "Memory limit of a candidate kernel's sandbox in MiB "
     "(default: a share of the machine's memory)."),
    ("AUTOKERNEL_SANDBOX_PIDS", "Most tasks (processes and threads) a candidate kernel's sandbox may "
     "hold, through its cgroup (default 64 per core, at least 1024)."),
    ("AUTOKERNEL_SANDBOX_SCRATCH_MB", "Size of the tmpfs a candidate kernel may write in, in MiB "
     "(default 1024); emptied between candidates."),
    ("AUTOKERNEL_SANDBOX_UID", "The user a candidate kernel runs as inside its sandbox when the judge "
     "runs as root (default 65534, nobody; 0 keeps root inside)."),
    ("AUTOKERNEL_CGROUP", "How the judge contains a kernel's processes: v2, v1, or none to use no "
     "cgroup (default: v2 where mounted, else v1; without one the judge is weaker and doctor says so)."),
    ("AUTOKERNEL_TUNE_MEMORY", "Where the tune agent remembers kept configurations across runs "
     "(default $XDG_CACHE_HOME/autokernel/tune-memory.json), or none to neither read nor write it."),
    ("AUTOKERNEL_EMBEDDED_PYTHONHOME", "The standard library of the embedded interpreter that checks "
     "kernel.py statically (set by the server bundle of packaging/bundle-cli.sh)."),
    ("AUTOKERNEL_SPARE_RUNNER", "0 starts the next candidate's sandbox only after the previous one "
     "ended (for side-by-side timing); default: prepared while the previous one is checked."),
    ("AUTOKERNEL_TIMING_SPIN", "0 makes the judge sleep instead of poll between timed rounds on CUDA "
     "(for side-by-side timing)."),
    ("AUTOKERNEL_TIMING_MAX_SLOTS", "Raises the number of input slots a timed round may use (default "
     "128 on CUDA, 32 on the CPU), and the memory they may take with it, so that rounds of fast "
     "kernels are longer (for side-by-side timing)."),
    ("AUTOKERNEL_TIMING_HEAP", "0 makes every side of a timed round on CUDA copy its outputs into "
     "the judge's region inside its clock, as before the heap (for side-by-side timing); default: "
     "a kernel's outputs stay in GPU memory the judge reads, and no clock holds a copy."),
    ("AUTOKERNEL_DEVICE", "Set by autokernel-cli for the model file it profiles or verifies (cpu, "
     "cuda): the bundled examples size themselves by it."),
    ("AUTOKERNEL_PROMPT_FILE", "Set for the command agent's program: the file holding the prompt."),
    ("AUTOKERNEL_WORKDIR", "Set for the command agent's program: the folder it works in."),
    ("AUTOKERNEL_KERNEL_FILE", "Set for the command agent's program: the kernel.py it rewrites."),
    ("AUTOKERNEL_SSH", "The ssh command (with its own options) the window uses for a run opened as "
     "ssh://host/path, when File > Open Remote Run... remembers none (default: ssh, with ~/.ssh/config)."),
    ("AUTOKERNEL_REMOTE_CLI", "How autokernel-cli is called on the machine of a run opened as "
     "ssh://host/path, when File > Open Remote Run... remembers nothing (default: autokernel-cli)."),
    ("XDG_CACHE_HOME", "Extracted harness files, the tune memory and the copies of remote runs live "
     "under it (default ~/.cache)."),
    ("XDG_CONFIG_HOME", "The window's settings (default ~/.config)."),
    ("API keys", "The LLM agent reads its key from the variable --api-key-env names (default "
     "OPENAI_API_KEY or ANTHROPIC_API_KEY by protocol); a key is never written to the run, its log "
     "or a commit, and never reaches a candidate kernel."),
]

EXIT_STATUS = [
    ("0", "Success."),
    ("1", "A negative result: an incorrect or failed kernel (bench), a failed check (doctor, "
     "llm-check, verify), a profile that failed."),
    ("2", "A usage or environment error: unknown command or option, a missing run directory, a "
     "run locked by another loop, no usable Python."),
]

FILES = [
    ("RUN_DIR/", "A run: run.json, profile.json, experiments.jsonl, results.tsv, the kernels' folders "
     "and a git repository in which every experiment is a commit."),
    ("$XDG_CACHE_HOME/autokernel/", "Harness files extracted for the Python children, the tune memory."),
    ("/usr/share/doc/autokernel/", "README, CHANGELOG and the program's documentation."),
]


def roff(text):
    text = text.replace("\\", "\\\\").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.M)


def helptext(argv):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    if out.returncode != 0 or not out.stdout.strip():
        sys.exit("genman: %s --help failed (%d): %s" % (" ".join(argv), out.returncode, out.stderr[-500:]))
    return out.stdout


def parse_help(text, command=None):
    """A command's --help: QCommandLineParser's (Usage, description, Options:, Arguments:) or a
    hand-written one (a usage that may wrap, paragraphs, '  --option  text' lines)."""
    usage, desc, opts, args, section = [], [], [], [], None
    for line in text.splitlines():
        if line.startswith("Usage: "):
            words = line[len("Usage: "):].split()
            words = words[1:]                                   # the program, as it was called
            if command and words and words[0] == command:
                words = words[1:]
            usage, section = [" ".join(words)], "usage"
        elif section == "usage" and line.startswith("   ") and line.strip():
            usage.append(line.strip())                          # a wrapped usage line
        elif line.strip() in ("Options:", "Arguments:"):
            section = line.strip()[:-1].lower()
        elif re.match(r"^  -", line) or (section in ("options", "arguments") and re.match(r"^  \S", line)):
            m = re.match(r"^  (\S.*?)(?:\s{2,}(.*))?$", line)
            name, text = m.group(1), m.group(2) or ""
            if not text and name.startswith("-") and " " in name:   # '--option text', one space
                name, text = name.split(" ", 1)
            (args if section == "arguments" else opts).append([name, text])
        elif section in ("options", "arguments") and line.strip():
            (args if section == "arguments" else opts)[-1][1] += " " + line.strip()
        elif line.strip():
            section = "desc"
            desc.append(line.strip())
    return " ".join(usage), " ".join(desc), opts, args


def options_roff(opts):
    out = []
    for name, text in opts:
        if name.startswith("--help-all"):
            continue
        out += [".TP", "\\fB%s\\fR" % roff(name), roff(text.strip())]
    return out


def commands(cli):
    top = helptext([cli, "--help"])
    names = re.findall(r"^  ([a-z][a-z-]+)\s{2,}(.*)$", top.split("Commands:", 1)[1].split("Options:", 1)[0], re.M)
    intro = top.split("Commands:", 1)[0].split("\n", 1)[1].strip()
    return intro, names


def cli_page(cli, version, date):
    intro, names = commands(cli)
    lines = ['.TH AUTOKERNEL\\-CLI 1 "%s" "autokernel\\-cli %s" "User Commands"' % (date, roff(version)),
             ".SH NAME", "autokernel\\-cli \\- profile a PyTorch model and optimise its GPU kernels",
             ".SH SYNOPSIS", ".B autokernel\\-cli", ".I command", ".RI [ options ]", ".SH DESCRIPTION",
             roff(" ".join(intro.split())), ".PP",
             "Every command takes \\fB\\-h\\fR/\\fB\\-\\-help\\fR. The commands and their options:",
             ".SH COMMANDS"]
    for name, summary in names:
        if name == "version":
            lines += [".SS version", roff(summary.strip() + ": the version and the git revision it was built from.")]
            continue
        usage, desc, opts, args = parse_help(helptext([cli, name, "--help"]), name)
        # Hand-written helps may leave out what the command does: the command list's line says it.
        if " ".join(summary.split()[:3]).lower() not in desc.lower():
            desc = (summary[:1].upper() + summary[1:] + ". " + desc).strip()
        lines += [".SS \"%s\"" % roff(("%s %s" % (name, usage)).strip()), roff(desc)]
        lines += options_roff(opts)
        for arg, text in args:
            lines += [".TP", "\\fI%s\\fR" % roff(arg), roff(text.strip())]
    lines += [".SH EXIT STATUS"]
    for code, text in EXIT_STATUS:
        lines += [".TP", "\\fB%s\\fR" % code, roff(text)]
    lines += [".SH ENVIRONMENT"]
    for name, text in ENVIRONMENT:
        lines += [".TP", "\\fB%s\\fR" % roff(name), roff(text)]
    lines += [".SH FILES"]
    for name, text in FILES:
        lines += [".TP", "\\fI%s\\fR" % roff(name), roff(text)]
    lines += [".SH SEE ALSO", "\\fBautokernel\\fR(1)", ""]
    return "\n".join(lines)


def gui_page(gui, version, date):
    usage, desc, opts, args = parse_help(helptext([gui, "--help"]))
    lines = ['.TH AUTOKERNEL 1 "%s" "autokernel %s" "User Commands"' % (date, roff(version)),
             ".SH NAME", "autokernel \\- the AutoKernel Studio window",
             ".SH SYNOPSIS", ".B autokernel", roff(usage), ".SH DESCRIPTION", roff(desc), ".PP",
             "The window shows a run directory: its kernels ranked by Amdahl's law, throughput against "
             "the GPU's peak, the whole model's speedup, a diff of every commit; it starts and steers the "
             "loop (pin, revert, skip, accept, reject), replays a run and presents it full screen. "
             "\\fBautokernel\\-cli\\fR(1) runs the same loop without a display.",
             ".SH OPTIONS"]
    lines += options_roff(opts)
    for arg, text in args:
        lines += [".TP", "\\fI%s\\fR" % roff(arg), roff(text.strip())]
    lines += [".SH ENVIRONMENT"]
    for name, text in ENVIRONMENT:
        if name in ("AUTOKERNEL_PYTHON", "AUTOKERNEL_BWRAP", "AUTOKERNEL_TUNE_MEMORY", "AUTOKERNEL_SSH",
                    "AUTOKERNEL_REMOTE_CLI", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "API keys"):
            lines += [".TP", "\\fB%s\\fR" % roff(name), roff(text)]
    lines += [".SH SEE ALSO", "\\fBautokernel\\-cli\\fR(1)", ""]
    return "\n".join(lines)


def write_gz(path, text):
    # mtime 0: the same input gives the same bytes (reproducible packages).
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
        f.write(text.encode("utf-8"))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    cli, gui, version, outdir = sys.argv[1:]
    stamp = os.environ.get("SOURCE_DATE_EPOCH")
    date = (datetime.datetime.fromtimestamp(int(stamp), datetime.timezone.utc) if stamp
            else datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d")
    os.makedirs(outdir, exist_ok=True)
    write_gz(os.path.join(outdir, "autokernel-cli.1.gz"), cli_page(cli, version, date))
    if gui != "-":
        write_gz(os.path.join(outdir, "autokernel.1.gz"), gui_page(gui, version, date))


if __name__ == "__main__":
    main()
