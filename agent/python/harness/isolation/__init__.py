"""How a candidate kernel is contained: the bubblewrap sandbox its runner process lives in, or a plain
child process that says so (sandbox), the control group that freezes, kills and limits everything it
starts (cgroup), and the rule that text from a kernel is data (textsafe). Stands on ipc/ (the runner's
socket) and nothing else of the harness."""
