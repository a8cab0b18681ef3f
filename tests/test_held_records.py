"""What the turn's check does when a record cannot be put back, and what it leaves behind.

A record Codex rewrote where the check cannot put it back (a folder made unwritable, the disk
full) is held: named at every turn, never adopted as the user's edit (test_unwritable_records
shows the attack through the CLI). These tests follow what happens next:

- one record the audit cannot repair does not stop the others being checked, and the turn's
  watch stands, so the next snapshot audits again instead of adopting what the turn left;
- a held record the check renamed aside and could not write again is not taken for one the
  user removed: the next snapshot puts it back, before the next turn begins;
- between turns, a held record is read as sparring's (and put back), never as the user's;
- once it is put back, the hold ends: the user's later edit is the user's;
- a check that fails lists no file, so its hint names the turn's baseline, and `guard revert
  --session` undoes what changed since that turn's snapshot, not an earlier turn's changes,
  nor what a record Codex left where the check's would go names;
- a file the turn changed and made unreadable (git cannot hash it) is named, not a failure.

Faults are injected in-process (monkeypatch) where only the disk could cause them.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sparring import disk
from sparring.guard.files import key_of
from sparring.guard.model import Change, save_changes
from sparring.store import witness
from sparring.store.locate import BASELINE_FILE, CHANGES_FILE
from sparring.store.sessions import Session
from sparring.turn import watch
from test_unwritable_records import cli


def _done_turn(sparring: Any, session: str, repo: Path) -> Session:
    assert sparring("start", session, input=b"q").exit_code == 0
    assert sparring("wait", session).out["guard"] == {"clean": True}
    return Session(repo / ".sparring" / "sessions" / session)


def _begin(target: Session, n: int) -> watch.Watch | None:
    """The runner's snapshot of turn `n` (whose folder `start` makes)."""
    os.makedirs(target.turn_dir(n), exist_ok=True)
    return watch.snapshot(target, n)


def _kept(path: Path) -> bytes:
    copy = witness.copy_of(path)
    assert copy is not None
    return Path(copy).read_bytes()


def _forge(path: Path, extra: bytes = b" ") -> bytes:
    forged = path.read_bytes() + extra
    path.write_bytes(forged)
    return forged


def _refuse(faults: pytest.MonkeyPatch, name: str, fault: int) -> None:
    """Writing a record named `name` in its folder fails with `fault`."""
    write_in = disk.write_in

    def failing(parent: int, found: str, *args: Any, **kwargs: Any) -> Any:
        if found == name:
            raise OSError(fault, os.strerror(fault))
        return write_in(parent, found, *args, **kwargs)

    faults.setattr(disk, "write_in", failing)


def test_a_record_neither_put_back_nor_held_stops_no_other_and_keeps_the_turn_watched(
        sparring: Any, session: str, repo: Path) -> None:
    """The disk is full: the first record's put-back and its hold both fail. The audit still
    puts back the next record, the check is a violation, and the watch stands: the next
    snapshot audits (brings the first record back) rather than adopting its absence."""
    target = _done_turn(sparring, session, repo)
    begun = _begin(target, 2)
    assert begun is not None
    turn = Path(target.turn_dir(1))
    first, second = turn / "guard-baseline.json", turn / "guard-changes.json"
    own_first, own_second = _kept(first), _kept(second)
    _forge(first)
    _forge(second)
    write = witness._write

    def full(path: str, data: bytes) -> None:
        if f"{os.sep}held{os.sep}" in path:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        write(path, data)

    with pytest.MonkeyPatch.context() as faults:
        _refuse(faults, first.name, errno.ENOSPC)
        faults.setattr(witness, "_write", full)
        found = watch.check(target, 2, begun)

    assert found["violation"] is not None and found["checked"] is False, found
    assert second.read_bytes() == own_second  # checked and put back all the same
    assert not first.exists()  # set aside, not written again
    assert witness.watched(repo)  # the turn is still watched

    watch.release(_begin(target, 3))
    assert first.read_bytes() == own_first == _kept(first)


def test_a_held_record_left_missing_is_not_taken_for_the_users_removal(
        sparring: Any, session: str, repo: Path) -> None:
    target = _done_turn(sparring, session, repo)
    begun = _begin(target, 2)
    record = Path(target.turn_path(1, "guard-changes.json"))
    own = _kept(record)
    _forge(record)
    with pytest.MonkeyPatch.context() as faults:
        _refuse(faults, record.name, errno.EIO)  # set aside, then not written again
        found = watch.check(target, 2, begun)
    assert f".sparring/sessions/{session}/turns/1/guard-changes.json" in {
        c["path"] for c in found["changed"]}, found
    assert not record.exists() and not witness.watched(repo)

    later = _begin(target, 3)  # adopts what the user changed: not this, which it puts back
    assert record.read_bytes() == own == _kept(record)
    assert later is not None
    assert watch.check(target, 3, later)["clean"] is True  # before the turn: not its change


def _held_by_a_locked_folder(target: Session, record: Path) -> dict[str, Any]:
    """A turn forges `record`, and its folder cannot be opened for the put-back."""
    begun = _begin(target, 2)
    forged = json.loads(record.read_text())
    forged["forged"] = True
    record.write_text(json.dumps(forged))
    open_folder = disk.open_folder

    def locked(path: Any, **kwargs: Any) -> int:
        if os.path.abspath(path) == str(record.parent):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return open_folder(path, **kwargs)

    with pytest.MonkeyPatch.context() as faults:
        faults.setattr(disk, "open_folder", locked)
        found = dict(watch.check(target, 2, begun))
    assert found["violation"] is not None, found
    relative = record.relative_to(target.path).as_posix()
    assert "not put back, so every turn names them until their folder is put right" in \
        found["violation"]["message"]
    assert found["violation"]["message"].endswith(relative), found
    return found


def test_between_turns_a_held_record_is_read_as_sparrings_and_put_back(
        sparring: Any, session: str, repo: Path) -> None:
    """No turn is watched, but the held session.json is still Codex's: a verb that reads it
    gets sparring's bytes, and puts them back (a write that read it first, `guard accept`
    say, would otherwise keep the forgery as sparring's own)."""
    target = _done_turn(sparring, session, repo)
    record = Path(target.path) / "session.json"
    _held_by_a_locked_folder(target, record)
    assert json.loads(record.read_text()).get("forged") and not witness.watched(repo)

    assert "forged" not in target.load()
    assert "forged" not in json.loads(record.read_text())
    assert "forged" not in json.loads(_kept(record))
    assert list(record.parent.glob("session.json.foreign-*"))


def test_once_a_held_record_is_put_back_the_users_next_edit_is_the_users(
        sparring: Any, session: str, repo: Path) -> None:
    target = _done_turn(sparring, session, repo)
    record = Path(target.turn_path(1, "guard-changes.json"))
    _held_by_a_locked_folder(target, record)
    watch.release(_begin(target, 3))  # held, so not adopted; the folder opens: put back
    assert "forged" not in json.loads(record.read_text())

    mine = json.loads(record.read_text())
    mine["note"] = "the user's own"
    record.write_text(json.dumps(mine))
    watch.release(_begin(target, 4))  # between turns: the user's edit is adopted
    assert json.loads(record.read_text())["note"] == "the user's own"
    assert json.loads(_kept(record))["note"] == "the user's own"


def test_a_held_record_goes_with_its_removed_session(
        sparring: Any, session: str, repo: Path) -> None:
    target = _done_turn(sparring, session, repo)
    record = Path(target.turn_path(1, "guard-changes.json"))
    _held_by_a_locked_folder(target, record)
    relative = f"sessions/{session}/turns/1/guard-changes.json"
    assert os.path.exists(witness._held(repo, relative))
    shutil.rmtree(target.path)  # the user removes the session, between turns
    with witness.locked(repo):
        witness.adopt(repo)  # as the next snapshot does
    assert not os.path.exists(witness._held(repo, relative))
    assert witness.copy_of(record) is not None
    assert not os.path.exists(str(witness.copy_of(record)))
    with witness.locked(repo):  # so no later turn is blamed for it
        witness.watch(repo, "next", "{}")
        assert witness.audit(repo) == []
        witness.unwatch(repo, "next")


def test_a_check_that_failed_points_at_its_turns_baseline_not_an_earlier_turn(
        sparring: Any, session: str, repo: Path, tmp_path: Path) -> None:
    """It lists no changed file: the hint names `guard check --baseline` with the turn's own
    baseline, nothing Codex can write (runner.log), and `guard revert --session` undoes what
    changed since that turn's snapshot: neither an earlier turn's changes nor what a record
    Codex left where the check's would go names (here README.md alone, not app.py)."""
    target = _done_turn(sparring, session, repo)
    baseline = target.turn_path(2, BASELINE_FILE)
    watch.release(_begin(target, 2))  # turn 2's snapshot; then, during the turn:
    (repo / "app.py").write_text("print('changed')\n")
    planted = tmp_path / "planted.json"  # outside .sparring/: no copy of it is kept
    save_changes(planted, [Change("README.md", "modified", "tracked",
                                              key_of(os.lstat(repo / "README.md")))])
    shutil.copy(planted, target.turn_path(2, CHANGES_FILE))  # then the check fails
    data = json.loads((Path(target.path) / "session.json").read_text())
    data["turns"][0]["guard"] = {"checked": True, "clean": False, "changed": [
        {"path": "README.md", "change": "modified"}], "violation": {
        "code": "guard_violation", "message": "m", "hint": "h"}}  # an earlier turn's
    unknown = watch._unknown(target, 2, OSError())
    data["turns"].append({**data["turns"][0], "n": 2, "guard": {
        "checked": False, "clean": None, "changed": [], "violation": unknown}})
    (Path(target.path) / "session.json").write_text(json.dumps(data))  # as the runner would

    assert "runner.log" not in unknown["message"]
    shown = sparring("wait", session).out
    hint = shown["guard"]["violation"]["hint"]
    assert f"sparring guard check --baseline {baseline}" in hint, hint
    assert f"sparring guard revert --session {session}" in hint
    refused = sparring("resume", session, input=b"q").out["error"]
    assert refused["code"] == "guard_violation"
    assert f"--baseline {baseline}" in refused["hint"]
    listed = sparring("guard", "check", "--baseline", baseline).out
    assert listed["changed"] == [{"path": "app.py", "change": "modified"}], listed
    undone = sparring("guard", "revert", "--session", session).out
    assert (repo / "app.py").read_text() == "print('hello')\n", undone
    assert undone["turn"] == 2 and [r["path"] for r in undone["reverted"]] == ["app.py"]


def test_a_changed_file_git_cannot_hash_is_named_not_a_failed_check(
        repo: Path, scratch: Path) -> None:
    """The file's change was staged, then it changed again and lost its read bit: git status
    still lists it, but `git hash-object` cannot read it."""
    base = scratch / "base.json"
    assert "error" not in cli("guard", "snapshot", "--out", str(base), cwd=repo)
    readme = repo / "README.md"
    readme.write_text("# staged\n")
    subprocess.run(["git", "add", "README.md"], cwd=repo, check=True)
    readme.write_text("# changed again\n")
    readme.chmod(0)
    try:
        found = cli("guard", "check", "--baseline", str(base), cwd=repo)
    finally:
        readme.chmod(0o644)
    assert "error" not in found, found
    assert {"path": "README.md", "change": "modified"} in found["changed"]
