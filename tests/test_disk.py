"""disk.py: the one way sparring writes a file, makes a folder and takes a lock. Whole or not
at all, never through a link, private; and every writer of the package goes through it (no
other module renames a temporary file into place or takes a flock)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from sparring import disk
from support.damage import LOCK_DAMAGE, damage_lock

PACKAGE = Path(__file__).resolve().parents[1] / "scripts" / "sparring"


def test_a_write_replaces_the_file_whole_and_private(tmp_path: Path) -> None:
    tmp_path = tmp_path / "folder"
    tmp_path.mkdir()
    target = tmp_path / "state.json"
    target.write_text("old")
    os.chmod(target, 0o644)
    disk.write(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"], "no temp file left"


def test_a_fill_that_fails_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    tmp_path = tmp_path / "folder"
    tmp_path.mkdir()
    target = tmp_path / "copy"
    target.write_bytes(b"before")

    def half(out: object) -> None:
        out.write(b"half")  # type: ignore[attr-defined]
        raise RuntimeError("the source went away")

    with pytest.raises(RuntimeError):
        disk.write(target, half)
    assert target.read_bytes() == b"before"
    assert [p.name for p in tmp_path.iterdir()] == ["copy"]


def test_a_link_standing_where_the_file_goes_is_replaced_never_written_through(
        tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("the user's")
    link = tmp_path / "record"
    link.symlink_to(outside)
    disk.write(link, b"ours")
    assert outside.read_text() == "the user's"
    assert not link.is_symlink() and link.read_bytes() == b"ours"
    with pytest.raises(FileExistsError):
        disk.create(tmp_path / "record", b"again")


@pytest.mark.parametrize("write", ["write", "create", "folders", "lock"])
def test_below_under_a_folder_swapped_for_a_link_is_never_written_through(
        tmp_path: Path, write: str) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / ".sparring").mkdir(parents=True)
    elsewhere.mkdir()
    (project / ".sparring" / "sessions").symlink_to(elsewhere, target_is_directory=True)
    target = project / ".sparring" / "sessions" / "s" / "session.json"
    with pytest.raises(disk.FolderSwapped) as refused:  # naming the folder, not EBADF
        if write == "write":
            disk.write(target, b"x", under=project)
        elif write == "create":
            disk.create(target, b"x", under=project)
        elif write == "folders":
            disk.folders(target.parent, under=project)
        else:
            with disk.locked(target, under=project):
                pass
    assert refused.value.filename == str(project / ".sparring" / "sessions")
    assert list(elsewhere.iterdir()) == [], "nothing was written through the link"


@pytest.mark.parametrize("kind", LOCK_DAMAGE)
def test_a_lock_that_is_not_a_regular_file_is_refused_not_followed(
        tmp_path: Path, kind: str) -> None:
    lock, outside = tmp_path / "session.json.lock", tmp_path / "outside"
    damage_lock(lock, outside, kind)
    with pytest.raises(disk.LockDamaged), disk.locked(lock):
        pass
    assert not outside.exists(), "no file was made where the link points"


def test_folders_are_made_private_below_an_existing_one(tmp_path: Path) -> None:
    made = disk.folders(tmp_path / "a" / "b")
    assert made == tmp_path / "a" / "b" and made.is_dir()
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    assert disk.folders(made) == made, "again: taken as it is"


def test_no_other_module_writes_a_temp_file_into_place_or_takes_a_lock() -> None:
    """One implementation: write-then-rename and flock live in disk.py alone (revert's trash
    moves a file aside, and a turn's folder is set aside, by a rename of their own: no temp
    file is involved)."""
    pattern = re.compile(r"os\.replace\(|\.tmp\b|mkstemp|fcntl\.flock|O_EXCL")
    found = [f"{path.relative_to(PACKAGE)}:{n}" for path in sorted(PACKAGE.rglob("*.py"))
             if path.name != "disk.py"
             for n, line in enumerate(path.read_text().splitlines(), start=1)
             if pattern.search(line.split("#")[0]) and not line.lstrip().startswith(("\"", "'"))]
    allowed = {"store/witness.py"}  # moves of a file, not writes
    assert [f for f in found if f.split(":")[0] not in allowed] == [], found


def test_a_log_is_appended_to_privately_and_never_through_a_link_or_onto_a_fifo(
        tmp_path: Path) -> None:
    """disk.append, how a runner's and a watchdog's logs are opened: made 0600, appended
    to, and refused (at once) where a link or a FIFO stands, at the name or on the way, or
    a hard link to a file elsewhere."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for text in (b"one\n", b"two\n"):
        fd = disk.append(logs / "runner.log", under=tmp_path)
        os.write(fd, text)
        os.close(fd)
    assert (logs / "runner.log").read_bytes() == b"one\ntwo\n"
    assert stat.S_IMODE((logs / "runner.log").stat().st_mode) == 0o600
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (logs / "link.log").symlink_to(elsewhere / "planted.log")
    os.mkfifo(logs / "fifo.log")
    (elsewhere / "kept").write_bytes(b"the user's\n")
    os.link(elsewhere / "kept", logs / "hard.log")
    (tmp_path / "swapped").symlink_to(elsewhere, target_is_directory=True)
    for path in (logs / "link.log", logs / "fifo.log", logs / "hard.log"):
        with pytest.raises(OSError):
            disk.append(path, under=tmp_path)
    with pytest.raises(disk.FolderSwapped):
        disk.append(tmp_path / "swapped" / "runner.log", under=tmp_path)
    assert [p.name for p in elsewhere.iterdir()] == ["kept"]
    assert (elsewhere / "kept").read_bytes() == b"the user's\n"
