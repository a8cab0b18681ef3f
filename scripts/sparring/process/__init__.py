"""The one door to child processes.

Rules every caller gets for free: argv is a list and never goes through a
shell; background children get their own session (so their whole group can
be signalled) and write to files, never to pipes nobody reads; stdin is a
file or /dev/null, so a child that reads stdin always reaches end-of-file.
Before signalling a recorded pid we check it is still the same process
(pid plus start time), because pids are reused.

What differs between systems (tying a child to its parent, adopting orphans, noticing a
parent's death) is behind process/backend.py, chosen once; finding and ending all of a
turn's processes is process/tree.py.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from sparring.process import backend, tree
from sparring.process.identity import _START_TIME_TOLERANCE
from sparring.process.identity import Identity as Identity  # callers name it process.Identity

if TYPE_CHECKING:
    import signal  # signal and subprocess load where a process is started or ended:
    import subprocess  # `status` and `poll` of an ended turn never do
    from typing import Protocol

    import psutil

    class Child(Protocol):
        """A child of this process: subprocess.Popen, or one forked (process/standby.py)."""

        pid: int

# Named tuples, not dataclasses: the guard's git commands come through here, and `python -m
# sparring guard check` starts git status before anything else loads (dataclasses would
# bring inspect, ast and more ahead of it).
class Completed(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def identity_of(pid: int) -> Identity:
    """`pid` with its start time as psutil reckons it. On Linux read from /proc without
    psutil, whose import costs a runner about 10 ms before it can start codex; elsewhere, or
    when /proc has no such process, psutil's (which then says why)."""
    found = _from_proc(pid) if sys.platform.startswith("linux") else None
    if found is None:
        import psutil

        return Identity(pid, psutil.Process(pid).create_time())
    return Identity(pid, found[1])


def _from_proc(pid: int) -> tuple[bytes, float] | None:
    """(state, start time) from /proc on Linux, the start as psutil sums it: clock ticks
    since boot (the 22nd field of /proc/PID/stat, the 20th after the command name) plus the
    boot time (`btime`); state `Z` is a zombie. None when /proc cannot tell (psutil then
    says why)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat, open("/proc/stat", "rb") as system:
            fields = stat.read().rpartition(b")")[2].split()
            boot = next(line for line in system if line.startswith(b"btime "))
        return fields[0], int(fields[19]) / os.sysconf("SC_CLK_TCK") + float(boot.split()[1])
    except (OSError, StopIteration, IndexError, ValueError):
        return None


def spawn_background(
    argv: Sequence[str],
    *,
    cwd: Path,
    stdin: Path | None,
    stdout: Path,
    stderr: Path,
    env: Mapping[str, str] | None = None,
    die_with_parent: bool = False,
    stdin_pipe: bool = False,
) -> subprocess.Popen[bytes]:
    """Start `argv` in a new session; output to files, stdin from a file or /dev/null (no
    file opened through a link), or (`stdin_pipe`) a pipe only this process writes to
    (feed): end-of-file comes when it is fed, or when this process ends.

    `die_with_parent`: the child gets SIGTERM the moment this process dies, where the
    system can do that (the `linux` backend; elsewhere the runner's watchdog ends it). Only
    for single-threaded parents (it uses preexec_fn).
    """
    import subprocess

    # Never through a link (a prompt file sits where Codex may write): OSError instead.
    stdin_file = os.fdopen(os.open(stdin, os.O_RDONLY | os.O_NOFOLLOW), "rb") if stdin \
        else open(os.devnull, "rb")  # noqa: SIM115
    try:
        with _append_private(stdout) as out, _append_private(stderr) as err:
            return subprocess.Popen(
                list(argv),
                cwd=cwd,
                stdin=subprocess.PIPE if stdin_pipe else stdin_file,
                stdout=out,
                stderr=err,
                env=dict(env) if env is not None else None,
                start_new_session=True,
                close_fds=True,
                preexec_fn=_tie(die_with_parent),
            )
    finally:
        stdin_file.close()


def feed(proc: subprocess.Popen[bytes], data: bytes, within: float) -> bool:
    """Write `data` to the stdin pipe of `proc` (spawn_background's `stdin_pipe`), then
    close it: end-of-file. False, with the pipe closed, when the child exited first or read
    nothing for `within` seconds (it is then the caller's to end)."""
    import select

    assert proc.stdin is not None
    fd = proc.stdin.fileno()
    os.set_blocking(fd, False)
    view, idle_since = memoryview(data), time.monotonic()
    try:
        while view:
            if not select.select([], [fd], [], 0.1)[1]:
                if has_exited(proc) or time.monotonic() - idle_since > within:
                    return False
                continue
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                return False
            idle_since = time.monotonic()
        return True
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()


def program(module: str, *args: str) -> list[str]:
    """The argv that runs `module`'s main(args) with this python and this package (the
    turn's runner, its watchdog). Isolated (`-I`), as the launcher runs the CLI: they work in
    the session's folder, which Codex may write to, and `-c` alone would put that folder
    before Python's own modules on sys.path (and let PYTHON* variables steer them)."""
    package_parent = str(Path(__file__).resolve().parents[2])
    bootstrap = ("import sys; sys.path.insert(0, sys.argv[1]); "
                 f"from {module} import main; sys.exit(main(sys.argv[2:]))")
    return [sys.executable, "-I", "-c", bootstrap, package_parent, *args]


def _tie(die_with_parent: bool) -> Callable[[], None] | None:
    return backend.current().tie_to_parent(os.getpid()) if die_with_parent else None


def _append_private(path: Path) -> BinaryIO:
    """A child's output file, readable by the user alone (it may hold what the child saw);
    never a link (one planted there is refused: OSError)."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW,
                             0o600), "ab")


def mechanism() -> tuple[str, str]:
    """The process backend in force (process/backend.py), and how it works in a sentence;
    config_invalid when SPARRING_PROCESS_BACKEND names one this system does not have."""
    chosen = backend.current()
    return chosen.name, chosen.how


def adopt_orphans() -> bool:
    """Make this process adopt every orphan among its descendants (a process that detaches
    from codex by setsid and a double fork stays below it), where the system can."""
    return backend.current().adopt_orphans()


def await_parent_exit(parent: int) -> None:
    """Return once `parent`, this process's parent, has exited (the watchdog's wait)."""
    backend.current().await_parent_exit(parent)


def has_exited(proc: Child) -> bool:
    """Whether our child exited, without reaping it: its pid stays ours (a zombie) until
    `wait`, so its process group and session cannot be taken over meanwhile."""
    if hasattr(os, "waitid"):  # the system's own answer, without loading psutil
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) \
                is not None
        except ChildProcessError:  # reaped already
            return True
    import psutil

    try:
        return psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # reaped already (or a zombie psutil would not describe)
        return True


def end(scope: tree.Scope, grace: float = tree.GRACE_S) -> list[int]:
    """End every process of a turn (process/tree.py says how they are found): TERM, a
    grace, then freeze and KILL, until none is left. Returns the pids that were running."""
    return tree.end(scope, grace)


def run(argv: Sequence[str], *, timeout: float, cwd: Path | None = None) -> Completed:
    """Run a short command to completion; on timeout its whole group is killed."""
    import signal
    import subprocess

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
    import subprocess

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


def identities(procs: Sequence[psutil.Process]) -> frozenset[Identity]:
    """The identities of `procs`, leaving out any that ended meanwhile."""
    import psutil

    found = set()
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            found.add(Identity(proc.pid, proc.create_time()))
    return frozenset(found)


def send(identity: Identity | None, sig: signal.Signals) -> bool:
    """Send `sig` to the recorded process if it still runs and is the same one."""
    import psutil

    proc = find_live(identity)
    if proc is None:
        return False
    try:
        proc.send_signal(sig)
    except psutil.Error:
        return False
    return True


def is_alive(identity: Identity | None) -> bool:
    """Whether the recorded process still runs and is the same one (zombies count as gone);
    on Linux read from /proc, as psutil would, without loading it."""
    if identity is not None and sys.platform.startswith("linux"):
        found = _from_proc(identity.pid)
        if found is not None:
            return found[0] != b"Z" and abs(found[1] - identity.started) <= \
                _START_TIME_TOLERANCE
        if os.path.isdir("/proc/self") and not os.path.exists(f"/proc/{identity.pid}"):
            return False  # /proc is there, and this process is not
    return find_live(identity) is not None


def _signal_group(leader: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(leader) == leader:  # only a group we created by start_new_session
            os.killpg(leader, sig)


def read_tail(path: Path, limit: int = 2000) -> str:
    """The last `limit` bytes of a child's output file, decoded leniently."""
    from sparring.paths import read_own  # no link, FIFO or device: see read_own

    return _decode(read_own(path, 1 << 40, tail=limit) or b"").strip()
