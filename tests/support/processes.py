"""Running real binaries under a hard wall-clock timeout, in their own process group.

Neither Codex nor Claude Code has an end-to-end timeout (a mock that hangs keeps
them waiting forever), so every child runs in a new session and the whole group
is killed when the timeout expires.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

DEFAULT_TIMEOUT_S = 30.0
REAP_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Finished:
    """Outcome of one bounded run."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float

    def json_lines(self) -> list[dict[str, Any]]:
        return parse_json_lines(self.stdout)


def parse_json_lines(text: str) -> list[dict[str, Any]]:
    """Each non-blank line parsed as a JSON object (JSONL / stream-json)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def spawn(
    args: Sequence[str | Path],
    *,
    env: Mapping[str, str],
    cwd: Path,
    stdin: Path | None = None,
) -> subprocess.Popen[str]:
    """Start `args` in a new process group; stdin from a file, else /dev/null."""
    with _open_stdin(stdin) as stdin_file:
        return subprocess.Popen(
            [str(a) for a in args],
            env=dict(env),
            cwd=cwd,
            stdin=stdin_file,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )


def run_bounded(
    args: Sequence[str | Path],
    *,
    env: Mapping[str, str],
    cwd: Path,
    stdin: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> Finished:
    """Run to completion, or kill the process group after `timeout` seconds."""
    started = time.monotonic()
    proc = spawn(args, env=env, cwd=cwd, stdin=stdin)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        stdout, stderr = kill_group(proc)
        timed_out = True
    return Finished(
        args=[str(a) for a in args],
        returncode=proc.returncode,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        seconds=time.monotonic() - started,
    )


def kill_group(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """SIGKILL the child's process group, reap the child, return its output."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=REAP_TIMEOUT_S)
    return stdout, stderr


def live_group_members(pgid: int) -> list[int]:
    """PIDs still alive (not zombies) in process group `pgid`."""
    import psutil

    members: list[int] = []
    for proc in psutil.process_iter(["status"]):
        with contextlib.suppress(OSError, psutil.Error):
            if proc.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(proc.pid) == pgid:
                members.append(proc.pid)
    return members


def wait_group_gone(pgid: int, timeout: float = REAP_TIMEOUT_S) -> list[int]:
    """Wait until no live process is left in `pgid`; return the survivors."""
    deadline = time.monotonic() + timeout
    while (survivors := live_group_members(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return survivors


def alive(pid: int) -> bool:
    """Whether process `pid` runs: one that ended and is not yet reaped (a zombie) does not."""
    import psutil

    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def wait_for(condition: Callable[[], object], timeout: float = 10, step: float = 0.05) -> None:
    """Return once `condition()` holds; fail the test when it has not within `timeout` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(step)


def marked_sleeper(mark: str, seconds: int = 30) -> subprocess.Popen[bytes]:
    """A process carrying a turn's `mark` in its environment (process.tree.marked), returned
    once it runs: between the fork and the exec that gives it the mark, a scan would see the
    environment of its parent, without one."""
    from sparring.process import tree

    proc = subprocess.Popen(
        [sys.executable, "-c", f"import time; print(flush=True); time.sleep({seconds})"],
        env=tree.marked(os.environ, mark), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        start_new_session=True)
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()
    return proc


@contextlib.contextmanager
def _open_stdin(path: Path | None) -> Iterator[int | IO[bytes]]:
    if path is None:
        yield subprocess.DEVNULL
        return
    handle: IO[bytes] = path.open("rb")
    try:
        yield handle
    finally:
        handle.close()


class KeeperStub:
    """What the runner's _start_codex needs of its Keeper (turn/keeper.py), for the tests
    that start a turn's codex without a runner."""

    mark = "a-mark"

    def note(self, **fields: Any) -> None:
        pass

    def ended(self, turn: dict[str, Any]) -> None:
        pass
