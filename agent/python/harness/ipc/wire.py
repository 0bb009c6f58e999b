"""Messages between the judge and a runner process: one JSON object per line on a Unix stream socket,
file descriptors alongside (SCM_RIGHTS). Used on both sides; imports no torch.

Everything a runner sends is untrusted: the judge reads at most MAX_LINE bytes per message, with a
deadline, and treats anything that does not parse as the candidate's failure.
"""

import array
import json
import select
import socket
import time

MAX_LINE = 1 << 20
MAX_FDS = 8


class WireError(Exception):
    """The peer closed the connection, sent garbage, or did not answer in time."""

    def __init__(self, message, kind="protocol"):
        super().__init__(message)
        self.kind = kind            # "closed" | "timeout" | "protocol"


class Connection:
    def __init__(self, sock):
        self.sock = sock
        self._buf = b""
        self._fds = []

    def fileno(self):
        return self.sock.fileno()

    def send(self, message, fds=()):
        data = (json.dumps(message, separators=(",", ":"), allow_nan=False) + "\n").encode()
        if fds:
            socket.send_fds(self.sock, [data[:1]], list(fds))
            data = data[1:]
        if data:
            self.sock.sendall(data)

    def recv(self, timeout=None, spin=0.0):
        """(message, fds); raises WireError. timeout in seconds, None = wait forever. For the first
        `spin` seconds the socket is polled without sleeping: a sleeping thread's wake-up (tens of
        microseconds, more after an idle core slept deeper) would otherwise be part of a timed
        round's clock, and vary from round to round."""
        deadline = None if timeout is None else time.monotonic() + timeout
        spin_until = time.monotonic() + spin if spin > 0 else None
        while b"\n" not in self._buf:
            if len(self._buf) > MAX_LINE:
                raise WireError("message longer than %d bytes" % MAX_LINE)
            if spin_until is not None and not select.select([self.sock], [], [], 0)[0]:
                if time.monotonic() < spin_until:
                    continue
                spin_until = None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                    raise WireError("no answer within %.1f s" % timeout, "timeout")
            try:
                chunk, fds, _flags, _addr = socket.recv_fds(self.sock, 65536, MAX_FDS)
            except OSError as e:
                raise WireError("connection failed: %s" % e, "closed")
            if not chunk:
                raise WireError("connection closed", "closed")
            self._buf += chunk
            self._fds.extend(fds)
        line, self._buf = self._buf.split(b"\n", 1)
        fds, self._fds = self._fds, []
        try:
            message = json.loads(line)
        except ValueError as e:
            _close(fds)
            raise WireError("not JSON: %s" % e)
        if not isinstance(message, dict):
            _close(fds)
            raise WireError("a message must be a JSON object")
        return message, fds

    def close(self):
        _close(self._fds)
        self._fds = []
        try:
            self.sock.close()
        except OSError:
            pass


def _close(fds):
    import os
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def pair():
    """Two connected ends (judge, runner); the runner's end is inheritable."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    b.set_inheritable(True)
    return Connection(a), b


def ints(values):
    return array.array("i", values)
