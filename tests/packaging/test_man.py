#!/usr/bin/env python3
"""The man pages the package installs (packaging/man/genman.py), checked against the programs:

- every command `autokernel-cli --help` lists has its section, and every option of its --help is in it;
- every AUTOKERNEL_* variable the sources read or set for a child is in ENVIRONMENT;
- man(1) renders both pages without a warning.

    test_man.py CLI GUI SOURCE_DIR
"""

import gzip
import os
import re
import subprocess
import sys
import tempfile
import unittest

CLI, GUI, SOURCE = sys.argv[1:4] if len(sys.argv) >= 4 else (None, None, None)
# Compile-time definitions, not variables anyone sets.
NOT_ENVIRONMENT = {"AUTOKERNEL_VERSION", "AUTOKERNEL_GIT_REVISION", "AUTOKERNEL_PYTHON_EXECUTABLE",
                   "AUTOKERNEL_SOURCE_DIR", "AUTOKERNEL_WERROR", "AUTOKERNEL_BUILD_UI",
                   "AUTOKERNEL_BUILD_TESTS", "AUTOKERNEL_PCH"}
# How a variable is read or handed to a child: C++ (Qt, the locator's environment) and Python.
READS = re.compile(r'(?:qEnvironmentVariable\w*|qgetenv|m_env\.value|env\.insert|environ(?:\.get)?|getenv)'
                   r'\s*[\(\[]\s*(?:QStringLiteral\()?"(AUTOKERNEL_[A-Z0-9_]+)"')


def env():
    return dict(os.environ, QT_QPA_PLATFORM="offscreen", MANWIDTH="100", LC_ALL="C.UTF-8")


class ManPages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ak-man-")
        subprocess.run([sys.executable, os.path.join(SOURCE, "packaging", "man", "genman.py"), CLI, GUI, "0.0-test",
                        cls.dir], check=True, env=env())
        cls.cli = gzip.open(os.path.join(cls.dir, "autokernel-cli.1.gz"), "rt").read()
        cls.gui = gzip.open(os.path.join(cls.dir, "autokernel.1.gz"), "rt").read()

    def help(self, *args):
        return subprocess.run([CLI, *args], capture_output=True, text=True, env=env(), timeout=60).stdout

    def test_every_command_and_option(self):
        top = self.help("--help")
        names = re.findall(r"^  ([a-z][a-z-]+)\s{2,}", top.split("Commands:", 1)[1].split("Options:", 1)[0], re.M)
        self.assertGreater(len(names), 15)
        sections = {k.replace("\\-", "-"): v for k, v in
                    re.findall(r'^\.SS "?([a-z\\-]+)[^\n]*\n(.*?)(?=^\.SS |^\.SH )', self.cli, re.M | re.S)}
        for name in names:
            self.assertIn(name, sections, "no section for the command %s" % name)
            if name == "version":
                continue
            for opt in re.findall(r"^  (?:-\w, )?(--[a-z][a-z0-9-]*)", self.help(name, "--help"), re.M):
                if opt != "--help-all":
                    self.assertIn(opt.replace("-", "\\-"), sections[name], "%s %s is not in the man page" % (name, opt))

    def test_gui_options(self):
        out = subprocess.run([GUI, "--help"], capture_output=True, text=True, env=env(), timeout=60).stdout
        for opt in re.findall(r"^  (?:-\w, )?(--[a-z][a-z0-9-]*)", out, re.M):
            if opt != "--help-all":
                self.assertIn(opt.replace("-", "\\-"), self.gui)

    def test_environment_documented(self):
        seen = set()
        for top in ("core", "agent", "profiler", "app", "ui"):
            for root, _, files in os.walk(os.path.join(SOURCE, top)):
                for f in files:
                    if f.endswith((".cpp", ".h", ".py")):
                        with open(os.path.join(root, f), encoding="utf-8") as fh:
                            seen.update(READS.findall(fh.read()))
        self.assertIn("AUTOKERNEL_PYTHON", seen)   # the pattern finds reads at all
        env_section = self.cli.split(".SH ENVIRONMENT", 1)[1].split(".SH ", 1)[0].replace("\\-", "-")
        for name in sorted(seen - NOT_ENVIRONMENT):
            self.assertIn(name, env_section, "%s is read by the program but not in autokernel-cli(1)" % name)

    def test_renders_without_warnings(self):
        for page in ("autokernel-cli.1.gz", "autokernel.1.gz"):
            r = subprocess.run(["man", "--warnings", "-l", os.path.join(self.dir, page)], capture_output=True,
                               text=True, env=env(), timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            warnings = [l for l in r.stderr.splitlines() if "XDG_RUNTIME_DIR" not in l]
            self.assertEqual(warnings, [], "%s: %s" % (page, warnings))
            self.assertIn("autokernel", r.stdout)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
