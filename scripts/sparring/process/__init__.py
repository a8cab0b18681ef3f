"""The one door to child processes.

Rules every caller gets for free: argv is a list and never goes through a
shell; background children get their own session (so their whole group can
be signalled) and write to files, never to pipes nobody reads; stdin is a
file or /dev/null, so a child that reads stdin always reaches end-of-file.
Before signalling a recorded pid we check it is still the same process
(pid plus start time), because pids are reused.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

if TYPE_CHECKING:
    import psutil

# Start times from psutil are floats derived from clock ticks; equal processes
# agree to far better than this.
_START_TIME_TOLERANCE = 0.05
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_PR_SET_CHILD_SUBREAPER = 36


# Named tuples, not dataclasses: the guard's git commands come through here, and `python -m
# sparring guard check` starts git status before anything else loads (dataclasses would
# bring inspect, ast and more ahead of it).
class Identity(NamedTuple):
    """A process as recorded on disk: pid plus start time."""

    pid: int
    started: float

    def to_dict(self) -> dict[str, float]:
        return {"pid": self.pid, "started": self.started}

    @classmethod
    def from_dict(cls, data: Mapping[str, float] | None) -> Identity | None:
        if not data:
            return None
        return cls(int(data["pid"]), float(data["started"]))


class Completed(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def identity_of(pid: int) -> Identity:
    import psutil

    return Identity(pid, psutil.Process(pid).create_time())


def spawn_background(
    argv: Sequence[str],
    *,
    cwd: Path,
    stdin: Path | None,
    stdout: Path,
    stderr: Path,
    env: Mapping[str, str] | None = None,
    die_with_parent: bool = False,
) -> subprocess.Popen[bytes]:
    """Start `argv` in a new session; output to files, stdin from a file or /dev/null.

    `die_with_parent`: the child gets SIGTERM if this process dies (Linux), so a child
    never runs on unsupervised. Only for single-threaded parents (it uses preexec_fn).
    """
    stdin_file = open(stdin, "rb") if stdin else open(os.devnull, "rb")  # noqa: SIM115
    try:
        with _append_private(stdout) as out, _append_private(stderr) as err:
            return subprocess.Popen(
                list(argv),
                cwd=cwd,
                stdin=stdin_file,
                stdout=out,
                stderr=err,
                env=dict(env) if env is not None else None,
                start_new_session=True,
                close_fds=True,
                preexec_fn=_death_signal(os.getpid()) if die_with_parent else None,
            )
    finally:
        stdin_file.close()


def _append_private(path: Path) -> BinaryIO:
    """A child's output file, readable by the user alone (it may hold what the child saw)."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab")


def _death_signal(parent: int) -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def arm() -> None:  # runs in the child between fork and exec
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before we armed it
            os._exit(1)

    return arm


def become_subreaper() -> bool:
    """Adopt every orphaned descendant (Linux): a process that detaches from codex (setsid and
    a double fork) becomes our child instead of init's, so it can be found and ended."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def end_descendants(keep: int | None = None, grace: float = 2.0) -> list[int]:
    """End every process below this one but `keep` (a child whose exit status is still
    wanted): TERM, a wait, then KILL; reap those that are (or became) our children.

    Returns the pids that were running. Called by the turn's runner, a subreaper, so this
    also reaches what detached from codex."""
    import psutil

    found = [p for p in _descendants() if p.pid != keep]
    targets = found
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for proc in targets:
            with contextlib.suppress(psutil.Error):
                proc.send_signal(sig)
        targets = _await_end(targets, grace)
        if not targets:
            break
    return [p.pid for p in found]


def _descendants() -> list[psutil.Process]:
    import psutil

    found = []
    for proc in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
    return found


def _await_end(procs: list[psutil.Process], grace: float) -> list[psutil.Process]:
    """Wait up to `grace` seconds for `procs` to end, reaping those that are our children;
    returns the ones still running."""
    import time

    import psutil

    deadline = time.monotonic() + grace
    while True:
        left = []
        for proc in procs:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(proc.pid, os.WNOHANG)  # ours (adopted or not): reap it
            with contextlib.suppress(psutil.Error):
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    left.append(proc)
        if not left or time.monotonic() >= deadline:
            return left
        procs = left
        time.sleep(0.05)


def has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether our child exited, without reaping it: its pid stays ours (a zombie) until
    `wait`, so its process group can still be swept safely."""
    try:
        found = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return found is not None


def sweep_group(leader: int, grace: float = 2.0) -> None:
    """End what an exited (not yet reaped) leader left running in its process group."""
    import psutil

    def members() -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["pid", "status"]):
            with contextlib.suppress(psutil.Error):
                if (proc.pid != leader and proc.info["status"] != psutil.STATUS_ZOMBIE
                        and os.getpgid(proc.pid) == leader):
                    found.append(proc)
        return found

    left = members()
    if not left:
        return
    _signal_group(leader, signal.SIGTERM)
    _, alive = psutil.wait_procs(left, timeout=grace)
    if alive:
        _signal_group(leader, signal.SIGKILL)


def run(argv: Sequence[str], *, timeout: float, cwd: Path | None = None) -> Completed:
    """Run a short command to completion; on timeout its whole group is killed."""
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _signal_group(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise
    return Completed(proc.returncode, _decode(out), _decode(err))


def start_piped(argv: Sequence[str], *, cwd: Path,
                env: Mapping[str, str]) -> Callable[[], tuple[int, bytes, bytes]]:
    """Start a short command whose output we want, now; the call returned waits for it and
    gives (exit status, stdout, stderr). Its output goes to files in memory, not pipes, so
    it runs to its end unhindered while the caller does other work (a pipe would stop it
    at 64 KB until read). OSError when it cannot start."""
    out, err = _capture(), _capture()
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err, env=dict(env))
    except BaseException:
        os.close(out)
        os.close(err)
        raise

    def finish() -> tuple[int, bytes, bytes]:
        code = proc.wait()
        return code, _drain(out), _drain(err)

    return finish


def _capture() -> int:
    """A file descriptor of an anonymous file: in memory on Linux, else an unlinked
    temporary file."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("sparring-output")
    import tempfile

    with tempfile.TemporaryFile() as file:  # unlinked already; the duplicate keeps it
        return os.dup(file.fileno())


def _drain(fd: int) -> bytes:
    """Everything written to `fd` (a _capture), which is closed."""
    try:
        parts, offset = [], 0
        while part := os.pread(fd, max(os.fstat(fd).st_size - offset, 1 << 16), offset):
            parts.append(part)
            offset += len(part)
        return b"".join(parts)
    finally:
        os.close(fd)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def find_live(identity: Identity | None) -> psutil.Process | None:
    """The recorded process if it still runs and is the same one; zombies count as gone."""
    if identity is None:
        return None
    import psutil

    try:
        proc = psutil.Process(identity.pid)
        if abs(proc.create_time() - identity.started) > _START_TIME_TOLERANCE:
            return None  # the pid was reused by another process
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def is_alive(identity: Identity | None) -> bool:
    return find_live(identity) is not None


def stop_tree(identity: Identity | None, grace: float = 3.0) -> bool:
    """Stop the recorded process, its group and every descendant: TERM, wait, then KILL.

    Returns False when there was nothing of ours left to stop.
    """
    import psutil

    root = find_live(identity)
    if root is None:
        return False
    try:
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        tree = [root]
    _signal_all(root.pid, tree, signal.SIGTERM)
    _, alive = psutil.wait_procs(tree, timeout=grace)
    if alive:
        _signal_all(root.pid, alive, signal.SIGKILL)
        psutil.wait_procs(alive, timeout=grace)
    return True


def _signal_all(leader: int, procs: Sequence[psutil.Process], sig: signal.Signals) -> None:
    import psutil

    _signal_group(leader, sig)
    for proc in procs:  # descendants that left the group (setsid) still get the signal
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.send_signal(sig)


def _signal_group(leader: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(leader) == leader:  # only a group we created by start_new_session
            os.killpg(leader, sig)


def read_tail(path: Path, limit: int = 2000) -> str:
    """The last `limit` bytes of a child's output file, decoded leniently."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return _decode(f.read()).strip()
    except FileNotFoundError:
        return ""
