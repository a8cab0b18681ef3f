"""The one door to child processes (process.py): a short command started early runs to its
end while nobody reads its output, and gives all of it back."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import psutil
import pytest

from sparring import process
from sparring.process import spawn

# More than a pipe holds (64 KB on Linux): a child writing to a pipe would stop here.
CHILD = """
import sys, pathlib
sys.stdout.buffer.write(b"o" * 1_000_000)
sys.stderr.buffer.write(b"e" * 200_000)
sys.stdout.flush(); sys.stderr.flush()
pathlib.Path(sys.argv[1]).write_text("done")
sys.exit(3)
"""


def open_fds() -> int:
    return int(psutil.Process().num_fds())


@pytest.mark.parametrize("memory", [True, False], ids=["memfd", "temporary-file"])
def test_a_started_command_runs_to_its_end_unread(tmp_path: Path, memory: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if not memory:  # as on a system without memfd_create (macOS)
        monkeypatch.delattr(os, "memfd_create", raising=False)
    marker = tmp_path / "marker"
    before = open_fds()
    finish = spawn.piped([sys.executable, "-c", CHILD, str(marker)], cwd=tmp_path,
                                 env=os.environ)
    deadline = time.monotonic() + 30
    while not marker.exists():  # with a pipe, the child would block before writing it
        assert time.monotonic() < deadline, "the child stopped: its output was not taken"
        time.sleep(0.01)
    assert finish() == (3, b"o" * 1_000_000, b"e" * 200_000)
    assert open_fds() == before


def test_a_command_that_cannot_start_leaves_nothing_open(tmp_path: Path) -> None:
    before = open_fds()
    with pytest.raises(OSError):
        spawn.piped([str(tmp_path / "no-such-program")], cwd=tmp_path, env=os.environ)
    assert open_fds() == before


def test_a_processs_identity_is_the_one_psutil_reads(tmp_path: Path) -> None:
    """The start time recorded for a process (read from /proc on Linux, without psutil) is
    the one every later check reads through psutil: else a runner or codex would look like
    another process, and stop would spare it."""
    child = spawn.background([sys.executable, "-c", "import time; time.sleep(30)"],
                                     cwd=tmp_path, stdin=None, stdout=tmp_path / "out",
                                     stderr=tmp_path / "err")
    try:
        for pid in (os.getpid(), child.pid):
            found = process.identity_of(pid)
            assert found == process.Identity(pid, psutil.Process(pid).create_time())
            assert process.is_alive(found)
    finally:
        child.kill()
        child.wait()
    with pytest.raises(psutil.NoSuchProcess):
        process.identity_of(child.pid)  # gone: psutil says so, as before


def test_alive_and_exited_are_read_as_psutil_reads_them(tmp_path: Path) -> None:
    """is_alive (from /proc on Linux) and has_exited (waitid) answer as psutil would: a
    running child is alive and has not exited; once it exited and is not yet reaped (a
    zombie) it has exited and is not alive, and its pid stays ours; an identity with another
    start time is not the same process; a reaped child has exited."""
    go = tmp_path / "go"
    child = spawn.background(
        [sys.executable, "-c", "import os, sys, time\n"
         "while not os.path.exists(sys.argv[1]): time.sleep(0.01)", str(go)],
        cwd=tmp_path, stdin=None, stdout=tmp_path / "out", stderr=tmp_path / "err")
    found = process.identity_of(child.pid)
    assert process.is_alive(found) and not process.has_exited(child)
    assert not process.is_alive(process.Identity(found.pid, found.started - 100))
    go.touch()
    deadline = time.monotonic() + 30
    while psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert process.has_exited(child) and not process.is_alive(found)
    assert process.has_exited(child), "asking again does not reap it"
    assert child.wait() == 0
    assert process.has_exited(child) and not process.is_alive(found)


def test_a_child_given_bytes_reads_them_whole_then_the_end(tmp_path: Path) -> None:
    """A prompt given as bytes (the runner's, checked against its digest) reaches the child
    whole, from a file of its own nothing else can reach; then end-of-file."""
    given = bytes(range(256)) * 5000  # more than a pipe holds
    child = spawn.background(
        [sys.executable, "-c", "import sys; data = sys.stdin.buffer.read(); "
         "sys.stdout.buffer.write(len(data).to_bytes(8, 'big') + data[:256])"],
        cwd=tmp_path, stdin=given, stdout=tmp_path / "out", stderr=tmp_path / "err")
    assert child.wait(timeout=30) == 0
    out = (tmp_path / "out").read_bytes()
    assert int.from_bytes(out[:8], "big") == len(given) and out[8:] == given[:256]


def test_a_childs_output_file_is_never_opened_through_a_link(tmp_path: Path) -> None:
    """A link planted where a turn's process writes its output (the session's folder is in
    Codex's reach) is refused, never written through."""
    target = tmp_path / "elsewhere"
    target.write_text("untouched\n")
    (tmp_path / "out").symlink_to(target)
    with pytest.raises(OSError):
        spawn.background([sys.executable, "-c", "print('x')"], cwd=tmp_path,
                                 stdin=None, stdout=tmp_path / "out", stderr=tmp_path / "err")
    assert target.read_text() == "untouched\n"


def test_a_childs_stdin_file_is_never_opened_through_a_link(tmp_path: Path) -> None:
    """A link put in place of a prompt file is refused, never read to the child."""
    secret = tmp_path / "secret"
    secret.write_text("never read\n")
    (tmp_path / "prompt").symlink_to(secret)
    with pytest.raises(OSError):
        spawn.background([sys.executable, "-c", "import sys; print(sys.stdin.read())"],
                                 cwd=tmp_path, stdin=tmp_path / "prompt",
                                 stdout=tmp_path / "out", stderr=tmp_path / "err")
    assert not (tmp_path / "out").exists() or "never read" not in (tmp_path / "out").read_text()
