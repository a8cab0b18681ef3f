"""A child forked to wait for its orders: the turn's runner, made ready while `start` is
still preparing the turn (turn/runner.py's prepared), and the runner's watchdog, forked from
the runner before codex gets its prompt (turn/watchdog.py).

Forking saves each a whole interpreter's start and its imports (tens of milliseconds before
codex may start, or taken from codex's own start). It is done only where it is as safe as
starting a new interpreter: this process runs isolated (`python -I`, as the skills'
launcher runs it), so no folder of the project is on sys.path for what the child imports
later, and it runs one thread alone (a fork copies only the thread that forks, with
whatever locks the others held); and on Linux (see may_fork). Elsewhere `fork` returns
None, and the caller starts a new interpreter as before.

The child gets a session of its own, /dev/null for its standard streams and no other
descriptor of this process but the read end of its orders: it never holds the pipe a
caller reads this process's output from. It runs `work` and exits with its status, and it
never returns into this process's code.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable

from sparring import disk


class Standby:
    """The parent's side of a forked child (with the pipe of its orders, if it takes any);
    signalled and waited for as a subprocess.Popen is."""

    def __init__(self, pid: int, orders: int) -> None:
        self.pid, self._orders = pid, orders

    def send_signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)  # our own child, not reaped: its pid is not reused

    def wait(self) -> int:
        """Its exit status, once it exited (reaped here)."""
        try:
            return os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        except ChildProcessError:
            return 0

    def tell(self, text: bytes) -> bool:
        """Give the child part of its orders (the pipe stays open); False when it is gone."""
        if self._orders < 0:
            return False
        try:
            os.write(self._orders, text)
        except OSError:
            self.dismiss()
            return False
        return True

    def order(self, text: bytes) -> bool:
        """Give the child the rest of its orders (then end-of-file); False when it is gone."""
        if not self.tell(text):
            return False
        self._close()
        return True

    def dismiss(self, wait_s: float = 5.0) -> None:
        """No orders: the child sees end-of-file and exits; reap it (kill it if it lingers)."""
        self._close()
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if _reaped(self.pid):
                return
            time.sleep(0.002)
        with contextlib.suppress(OSError):
            os.kill(self.pid, 9)  # our own unreaped child: its pid cannot have been reused
            os.waitpid(self.pid, 0)

    def _close(self) -> None:
        if self._orders >= 0:
            with contextlib.suppress(OSError):
                os.close(self._orders)
            self._orders = -1


def _reaped(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return True


def may_fork() -> bool:
    """Whether a child forked here is as safe as a new isolated interpreter (see above).
    Linux only: on macOS a fork without exec is unsafe once system frameworks are loaded
    (psutil loads some), and Python's own multiprocessing stopped forking there."""
    threading = sys.modules.get("threading")
    return (sys.platform.startswith("linux") and hasattr(os, "fork")
            and bool(sys.flags.isolated)
            and (threading is None or threading.active_count() == 1))


def fork(work: Callable[[int], int], orders: bool = True) -> Standby | None:
    """Fork a child that runs `work(fd)`, `fd` the read end of the pipe its orders come
    through (-1 without `orders`); None where forking is not safe here (may_fork). The
    child starts with SIGTERM's default action, as a new interpreter does."""
    if not may_fork():
        return None
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is printed twice
        with contextlib.suppress(Exception):
            stream.flush()
    read_end, write_end = os.pipe() if orders else (-1, -1)
    pid = os.fork()
    if pid:
        if orders:
            os.close(read_end)
        return Standby(pid, write_end)
    status = 1
    try:
        import signal

        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if orders:
            os.close(write_end)
        os.setsid()
        _only(read_end)
        status = work(read_end)
    except BaseException:  # reported in the child's log; never raised into the parent's code
        with contextlib.suppress(BaseException):
            import traceback

            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(status)


def _only(keep: int) -> None:
    """/dev/null for 0, 1 and 2, and no other descriptor open but `keep`."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if null > 2:
        os.close(null)
    for fd in _open_descriptors():
        if fd > 2 and fd != keep:
            with contextlib.suppress(OSError):  # the listing's own, closed already
                os.close(fd)


def _open_descriptors() -> list[int]:
    """This process's open descriptors, as the system lists them (Linux, macOS); else every
    number up to the limit."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return [int(name) for name in os.listdir(listing)]
    return list(range(min(os.sysconf("SC_OPEN_MAX"), 1 << 16)))


def read_orders(fd: int) -> bytes:
    """Everything the parent wrote, once it closed its end (b"" when it gave none)."""
    parts = []
    while part := os.read(fd, 1 << 16):
        parts.append(part)
    os.close(fd)
    return b"".join(parts)


class Lines:
    """The child's side of its orders, one line at a time: each as the parent wrote it,
    b"" once the parent closed its end without finishing one."""

    def __init__(self, fd: int) -> None:
        self.fd, self._held = fd, b""

    def next(self) -> bytes:
        while b"\n" not in self._held:
            part = os.read(self.fd, 1 << 16) if self.fd >= 0 else b""
            if not part:
                return b""
            self._held += part
        line, _, self._held = self._held.partition(b"\n")
        return line


def write_output_to(path: str | os.PathLike[str], under: str | None) -> None:
    """From now on standard output and error go to the file at `path` (appended to, and
    readable by the user alone, never a link nor reached through one below `under`, as the
    output files of spawn.background: disk.append)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    fd = disk.append(path, under=under)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
