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
    finish = process.start_piped([sys.executable, "-c", CHILD, str(marker)], cwd=tmp_path,
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
        process.start_piped([str(tmp_path / "no-such-program")], cwd=tmp_path, env=os.environ)
    assert open_fds() == before


def test_a_processs_identity_is_the_one_psutil_reads(tmp_path: Path) -> None:
    """The start time recorded for a process (read from /proc on Linux, without psutil) is
    the one every later check reads through psutil: else a runner or codex would look like
    another process, and stop would spare it."""
    child = process.spawn_background([sys.executable, "-c", "import time; time.sleep(30)"],
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
