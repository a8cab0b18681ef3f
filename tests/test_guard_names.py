"""File names that are not UTF-8 (issue 21, item 8): reported with one spelling per file, so a
byte 0xFF and a file really named `\\xff` never print alike, and revert still acts on them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sparring.guard.files import spelled

BYTE = b"caf\xff.txt"  # not UTF-8
LOOKALIKE = "caf\\xff.txt"  # the four characters \, x, f, f: a real, valid name


def make(root: Path, name: bytes | str, text: str) -> None:
    with open(os.path.join(os.fsencode(root), os.fsencode(name)), "w") as f:
        f.write(text)


def test_the_two_spellings_differ_and_each_names_its_file() -> None:
    assert spelled(os.fsdecode(BYTE)) == "caf\\xff.txt"
    assert spelled(LOOKALIKE) == "caf\\\\xff.txt"
    assert spelled("plain/name.py") == "plain/name.py"
    assert spelled("naïve/東京.md") == "naïve/東京.md"


def test_check_lists_a_byte_name_and_its_lookalike_apart_and_revert_removes_both(
        repo: Path, sparring: Any, scratch: Path) -> None:
    baseline = scratch / "b.json"  # inside the project, out of git and the guard's sight
    assert sparring("guard", "snapshot", "--out", str(baseline)).exit_code == 0
    make(repo, BYTE, "added by the turn\n")
    make(repo, LOOKALIKE, "added too\n")
    check = sparring("guard", "check", "--baseline", str(baseline)).out
    paths = [c["path"] for c in check["changed"]]
    assert sorted(paths) == ["caf\\\\xff.txt", "caf\\xff.txt"]
    assert len(set(paths)) == 2

    reverted = sparring("guard", "revert", "--baseline", str(baseline)).out
    assert reverted["clean_after"] is True, reverted
    assert sorted(r["path"] for r in reverted["reverted"]) == sorted(paths)
    assert os.fsdecode(BYTE) not in os.listdir(repo)
    assert not (repo / LOOKALIKE).exists()
    kept = {r["path"]: r["kept"] for r in reverted["reverted"]}
    assert kept["caf\\xff.txt"].endswith("/caf\\xff.txt")
    trashed = Path(reverted["trash"])
    assert sorted(os.listdir(os.fsencode(trashed))) == sorted([BYTE, LOOKALIKE.encode()])


def test_a_byte_name_a_turn_wrote_is_a_violation_and_revert_session_undoes_it(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    """Through the runner: the turn's record (session.json, the changes file) holds the name,
    and `guard revert --session` acts on it."""
    make(repo, BYTE, "the user's notes\n")
    make(repo, LOOKALIKE, "the lookalike, untouched\n")
    fake_codex.mode("shell", shell="printf 'codex was here\\n' > \"$(printf 'caf\\377.txt')\"")
    assert sparring("start", session, input=b"q").exit_code == 0
    out = sparring("wait", session).out
    assert out["status"] == "completed", out
    assert out["guard"]["changed"] == [{"path": "caf\\xff.txt", "change": "modified"}]
    reverted = sparring("guard", "revert", "--session", session).out
    assert reverted["clean_after"] is True, reverted
    assert [r["path"] for r in reverted["reverted"]] == ["caf\\xff.txt"]
    with open(os.path.join(os.fsencode(repo), BYTE)) as f:
        assert f.read() == "the user's notes\n"
    assert (repo / LOOKALIKE).read_text() == "the lookalike, untouched\n"
