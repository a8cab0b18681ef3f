"""The guard's store of copies (issue 21, item 7): revert trusts a copy only once it hashed to
its name again, and leaves the file where it is when the copy was changed or removed; the
store is pruned when a session ends, keeping what a revert may still want."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from sparring.guard.snapshot import take
from sparring.guard.undo import revert

MIB = 1 << 20


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def store_bytes(store: Path) -> int:
    return sum(p.stat().st_size for p in store.iterdir() if p.is_file())


@pytest.fixture
def notes(repo: Path) -> Path:
    path = repo / "notes.txt"
    path.write_text("the user's only copy of these notes\n")
    return path


@pytest.mark.parametrize("damage", ["overwritten", "removed"])
def test_a_copy_changed_since_the_snapshot_leaves_the_file_in_place(
        notes: Path, tmp_path: Path, damage: str) -> None:
    store = tmp_path / "store"
    base = take(notes.parent, store=store)
    copy = store / sha(notes.read_bytes())
    notes.write_text("codex's version\n")
    if damage == "overwritten":
        copy.write_text("codex's version\n")
    else:
        copy.unlink()
    result = revert(base)
    assert result.reverted == []
    [left] = result.not_reverted
    assert left["path"] == "notes.txt"
    assert str(copy) in left["reason"] and "left as it is" in left["reason"]
    assert ("lost" if damage == "overwritten" else "no longer kept") in left["reason"]
    assert notes.read_text() == "codex's version\n"  # left where it is, not moved away
    assert result.trash is None  # nothing was taken from the tree
    assert result.clean_after is False


def test_a_file_moved_away_whose_copy_was_damaged_is_not_removed(notes: Path,
                                                                 tmp_path: Path) -> None:
    """The moved file is the only copy of the user's version left: it stays."""
    store = tmp_path / "store"
    base = take(notes.parent, store=store)
    original = notes.read_bytes()
    notes.rename(notes.with_name("moved.txt"))
    (store / sha(original)).write_text("damaged\n")
    result = revert(base)
    reasons = {r["path"]: r["reason"] for r in result.not_reverted}
    assert set(reasons) == {"moved.txt", "notes.txt"}
    assert "cannot put back" in reasons["moved.txt"]
    assert notes.with_name("moved.txt").read_bytes() == original


def test_a_good_copy_is_still_restored_beside_a_damaged_one(repo: Path,
                                                            tmp_path: Path) -> None:
    (repo / "a.txt").write_text("a, the user's\n")
    (repo / "b.txt").write_text("b, the user's\n")
    store = tmp_path / "store"
    base = take(repo, store=store)
    (store / sha(b"b, the user's\n")).write_text("damaged\n")
    (repo / "a.txt").write_text("codex\n")
    (repo / "b.txt").write_text("codex\n")
    result = revert(base)
    assert [(r["path"], r["action"]) for r in result.reverted] == [
        ("a.txt", "restored_from_copy")]
    assert [r["path"] for r in result.not_reverted] == ["b.txt"]
    assert (repo / "a.txt").read_text() == "a, the user's\n"
    assert (repo / "b.txt").read_text() == "codex\n"


def test_codex_overwriting_a_file_and_its_copy_in_a_turn(sparring: Any, session: str,
                                                         fake_codex: Any, notes: Path,
                                                         repo: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's case, through the runner: revert removed the file from the tree, restored
    nothing and named no place; now it leaves the file and says what happened."""
    fake_codex.mode("shell", shell=(
        "d=$(sha256sum notes.txt | cut -d' ' -f1); "
        "echo forged > .sparring/guard-store/$d; echo codex > notes.txt"))
    monkeypatch.setenv("SPARRING_SANDBOX", "workspace-write")  # the user allows it
    assert sparring("start", session, "--sandbox", "workspace-write",
                    input=b"q").exit_code == 0
    out = sparring("wait", session).out
    assert out["guard"]["changed"] == [{"path": "notes.txt", "change": "modified"}]
    reverted = sparring("guard", "revert", "--session", session).out
    assert reverted["reverted"] == []
    [left] = reverted["not_reverted"]
    assert left["path"] == "notes.txt" and "changed since the snapshot" in \
        left["reason"]
    assert notes.read_text() == "codex\n"
    assert reverted["trash"] is None
    assert not (repo / ".sparring" / "guard-trash").exists()


def _turn(sparring: Any, session: str, first: bool) -> dict[str, Any]:
    verb = "start" if first else "resume"
    assert sparring(verb, session, input=b"next").exit_code == 0
    out = sparring("wait", session).out
    assert out["status"] == "completed", out
    return out


def test_eight_turns_over_a_changing_file_leave_at_most_two_copies(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    """8 turns over one 3 MiB untracked file the user edits between turns left 24 MiB (one
    version per turn). After `stop` the store keeps what the latest turn may need (within 2x
    the live copy), a revert of that turn still works, and once the session is finalized and
    every change decided, no copy is left."""
    big = repo / "big.bin"
    store = repo / ".sparring" / "guard-store"
    for n in range(8):
        big.write_bytes(os.urandom(3 * MIB))
        _turn(sparring, session, n == 0)
    assert store_bytes(store) >= 8 * 3 * MIB  # one version per turn, before any prune

    user = os.urandom(3 * MIB)
    big.write_bytes(user)
    fake_codex.mode("writes_file", write_path="big.bin", write_content="codex\n")
    out = _turn(sparring, session, False)
    assert out["guard"]["changed"] == [{"path": "big.bin", "change": "modified"}]
    sparring("stop", session)
    assert store_bytes(store) <= 2 * 3 * MIB
    reverted = sparring("guard", "revert", "--session", session).out
    assert [r["action"] for r in reverted["reverted"]] == ["restored_from_copy"]
    assert big.read_bytes() == user

    assert sparring("guard", "accept", session).exit_code == 0
    assert sparring("finalize", session).exit_code == 0
    assert store_bytes(store) < MIB  # no copy left: nothing can want one now


def test_a_turn_after_a_prune_snapshots_as_before(sparring: Any, session: str,
                                                 fake_codex: Any, repo: Path) -> None:
    """A session finalized (its copies pruned) and then carried on: the next snapshot does not
    lean on the pruned baseline, and still keeps what its revert needs."""
    notes = repo / "notes.txt"
    notes.write_text("v1\n")
    _turn(sparring, session, True)
    sparring("finalize", session)
    fake_codex.mode("writes_file", write_path="notes.txt", write_content="codex\n")
    out = _turn(sparring, session, False)
    assert out["guard"]["checked"] is True
    assert sparring("guard", "revert", "--session", session).out["clean_after"] is True
    assert notes.read_text() == "v1\n"


def test_an_older_turns_revert_after_a_prune_leaves_its_files(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    """Copies the store let go mean a revert has nothing to restore from: it says so and
    takes nothing away."""
    notes = repo / "notes.txt"
    notes.write_text("v1\n")
    fake_codex.mode("writes_file", write_path="notes.txt", write_content="codex\n")
    _turn(sparring, session, True)
    sparring("guard", "accept", session)  # the user kept Codex's edit
    fake_codex.mode("ok")
    _turn(sparring, session, False)
    sparring("finalize", session)
    result = sparring("guard", "revert", "--session", session, "--turn", "1").out
    [left] = result["not_reverted"]
    assert left["path"] == "notes.txt" and "no longer kept" in left["reason"]
    assert notes.read_text() == "codex\n"
    assert result["trash"] is None


def test_a_snapshot_keeps_the_copies_the_store_has_and_heals_a_damaged_one(
        repo: Path, tmp_path: Path) -> None:
    """Issue 24: a first snapshot into a store that holds the copies already (the project's
    store, a new session) reads each file but writes only what is missing or damaged."""
    store = tmp_path / "store"
    files = {repo / f"notes-{n}.txt": f"the user's notes {n}\n".encode() for n in range(3)}
    for path, data in files.items():
        path.write_bytes(data)
    take(repo, store=store)
    copies = {path: store / sha(data) for path, data in files.items()}
    kept = {path: copy.stat() for path, copy in copies.items()}
    forged = copies[repo / "notes-1.txt"]
    forged.write_bytes(b"F" * (forged.stat().st_size - 1) + b"\n")  # same size, other bytes
    (repo / "notes-3.txt").write_text("new since\n")
    base = take(repo, store=store)
    for path in (repo / "notes-0.txt", repo / "notes-2.txt"):
        now = copies[path].stat()
        assert (now.st_ino, now.st_mtime_ns) == (kept[path].st_ino, kept[path].st_mtime_ns)
    assert forged.read_bytes() == files[repo / "notes-1.txt"]  # healed
    assert (store / sha(b"new since\n")).read_bytes() == b"new since\n"
    assert all(base.entries[p.name].copied for p in files)
