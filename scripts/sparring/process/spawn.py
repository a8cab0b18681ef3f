"""Children started, fed, run and captured: the one way sparring starts a process (turn/,
guard/, codex/ and the installer alike; no other module imports subprocess).

Rules every caller gets for free: argv is a list and never goes through a shell; background
children get their own session (so their whole group can be signalled) and write to files,
never to pipes nobody reads; stdin is a file, given bytes or /dev/null, so a child that
reads stdin always reaches end-of-file. Watching and ending them is
process/__init__.py's and process/tree.py's.

Standard library only: install.py runs commands through here too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, NamedTuple

from sparring import disk, process
from sparring.disk import Where
from sparring.paths import read_own
from sparring.process import backend

TimeoutExpired = subprocess.TimeoutExpired  # what `run` raises past its timeout


class Completed(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def background(
    argv: Sequence[str],
    *,
    cwd: Where,
    stdin: Where | bytes | None,
    stdout: Where,
    stderr: Where,
    env: Mapping[str, str] | None = None,
    die_with_parent: bool = False,
    under: Where | None = None,
) -> subprocess.Popen[bytes]:
    """Start `argv` in a new session; output to files, stdin from a file (never opened
    through a link), these bytes (in a file of their own, which nothing else can reach), or
    /dev/null.

    `under`: the output files' folders are reached from there down without a link
    (disk.append), as where a Codex sandbox may write.

    `die_with_parent`: the child gets SIGTERM the moment this process dies, where the
    system can do that (the `linux` backend; elsewhere the runner's watchdog ends it). Only
    for single-threaded parents (it uses preexec_fn).
    """
    stdin_file = _stdin(stdin)
    try:
        with _append_private(stdout, under) as out, _append_private(stderr, under) as err:
            return subprocess.Popen(
                list(argv),
                cwd=cwd,
                stdin=stdin_file,
                stdout=out,
                stderr=err,
                env=dict(env) if env is not None else None,
                start_new_session=True,
                close_fds=True,
                preexec_fn=_tie(die_with_parent),
            )
    finally:
        stdin_file.close()


def program(module: str, *args: str) -> list[str]:
    """The argv that runs `module`'s main(args) with this python and this package (the
    turn's runner, its watchdog). Isolated (`-I`), as the launcher runs the CLI: they work in
    the session's folder, which Codex may write to, and `-c` alone would put that folder
    before Python's own modules on sys.path (and let PYTHON* variables steer them)."""
    package_parent = str(Path(__file__).resolve().parents[2])
    bootstrap = ("import sys; sys.path.insert(0, sys.argv[1]); "
                 f"from {module} import main; sys.exit(main(sys.argv[2:]))")
    return [sys.executable, "-I", "-c", bootstrap, package_parent, *args]


def _stdin(given: Where | bytes | None) -> BinaryIO:
    """A child's stdin: a file, never through a link (a prompt file sits where Codex may
    write: OSError instead); bytes, in an anonymous file; or /dev/null."""
    if isinstance(given, bytes):
        fd = _capture()
        os.pwrite(fd, given, 0)  # read from the start: the offset stays at 0
        return os.fdopen(fd, "rb")
    if given:
        return os.fdopen(os.open(given, os.O_RDONLY | os.O_NOFOLLOW), "rb")
    return open(os.devnull, "rb")


def _tie(die_with_parent: bool) -> Callable[[], None] | None:
    return backend.current().tie_to_parent(os.getpid()) if die_with_parent else None


def _append_private(path: Where, under: Where | None) -> BinaryIO:
    """A child's output file, readable by the user alone (it may hold what the child saw);
    never a link, nor reached through one below `under` (OSError: disk.append)."""
    return os.fdopen(disk.append(path, under=under), "ab")


def run(argv: Sequence[str], *, timeout: float | None, cwd: Where | None = None,
        output: Where | None = None, own_session: bool = True) -> Completed:
    """Run a command to its end and capture what it prints (`output`: both its streams
    appended to that file instead, as a log the user reads); on `timeout` its whole group
    is killed (TimeoutExpired). OSError when it cannot start. Without `own_session` (a long
    step of install.py, say) it stays in this process's group: Ctrl-C reaches it too."""
    log = open(output, "ab") if output is not None else None  # noqa: SIM115 - closed below
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=log or subprocess.PIPE, stderr=subprocess.STDOUT if log else subprocess.PIPE,
            start_new_session=own_session)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.signal_group(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    finally:
        if log is not None:
            log.close()
    return Completed(proc.returncode, decode(out or b""), decode(err or b""))


def piped(argv: Sequence[str], *, cwd: Where,
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


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def read_tail(path: Where, limit: int = 2000) -> str:
    """The last `limit` bytes of a child's output file, decoded leniently."""
    return decode(read_own(path, 1 << 40, tail=limit) or b"").strip()
