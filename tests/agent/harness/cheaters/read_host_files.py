"""Files: reads host files only root may read (/etc/shadow, root's home, the host's ssh keys). A
kernel that could would exfiltrate them; this one says in its import error what it could read."""

KERNEL_TYPE = "softmax"
_read = []
for _path in ("/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_ed25519_key", "/root/.bash_history"):
    try:
        with open(_path, "rb") as _f:
            if _f.read(16):
                _read.append(_path)
    except OSError:
        pass
raise RuntimeError("read_host_files read %r" % _read)


def kernel_fn(x):
    return x
