"""A guard baseline sparring did not write is this project's, or it is refused (issue 21).

`guard check --baseline FILE` and `guard revert --baseline FILE` confine FILE to the project,
and a session's turn baseline lies in it; but the baseline itself says which tree it watches
(`root`), where its copies are (`store`) and which git folder git runs in (`git_dir`). One
handed into the inbox, or committed in a clone with a session, named them elsewhere: `check`
read and listed another folder, `revert` moved its files away, and git ran with the
configuration of a folder someone planted (its filter, trusted because the baseline said so).
Each is now `state_corrupt`, and nothing outside the project is read, moved or run.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from support.gitrepo import git, logged_git


@pytest.fixture
def real(sparring: Any, repo: Path, scratch: Path) -> dict[str, Any]:
    out = sparring("guard", "snapshot", "--out", str(scratch / "real.json"))
    assert out.exit_code == 0, out.raw
    data: dict[str, Any] = json.loads((scratch / "real.json").read_text())
    return data


def forged(scratch: Path, data: dict[str, Any], **fields: Any) -> Path:
    path = scratch / "forged.json"
    path.write_text(json.dumps({**data, **fields}))
    return path


@pytest.mark.parametrize("verb", ["check", "revert"])
def test_a_baseline_watching_another_folder_reads_and_moves_nothing_there(
        verb: str, sparring: Any, repo: Path, scratch: Path, tmp_path: Path,
        real: dict[str, Any]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "victim.txt").write_text("the user's\n")
    path = forged(scratch, real, root=str(elsewhere), mode="walk", git_dir=None, store=None,
                  entries={}, index={}, entries_digest="")
    refused = sparring("guard", verb, "--baseline", str(path))
    assert refused.error_code == "state_corrupt", refused.raw
    assert "victim" not in refused.raw
    assert sorted(p.name for p in elsewhere.iterdir()) == ["victim.txt"]
    assert (elsewhere / "victim.txt").read_text() == "the user's\n"


def test_a_baseline_keeping_its_copies_elsewhere_is_refused(
        sparring: Any, repo: Path, scratch: Path, tmp_path: Path, real: dict[str, Any]) -> None:
    path = forged(scratch, real, store=str(tmp_path / "store"))
    for verb in ("check", "revert"):
        assert sparring("guard", verb, "--baseline", str(path)).error_code == "state_corrupt"
    assert not (tmp_path / "store").exists()


def test_a_baseline_naming_a_planted_git_folder_runs_nothing(
        sparring: Any, repo: Path, scratch: Path, tmp_path: Path, real: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A git folder anyone may write in the inbox, whose filter the forged baseline calls
    the user's own. No git starts in it at all, not even before the baseline is judged
    (`guard check` starts git as early as it can): through the CLI and through the
    launcher's entry (the `sparring` fixture asks both), git is only ever run on a
    baseline already found to be this project's."""
    planted = scratch / "g"
    pwned = tmp_path / "PWNED"
    git(repo, "init", "-q", "--bare", str(planted))
    git(repo, f"--git-dir={planted}", f"--work-tree={repo}", "add", "app.py")
    command = f"touch {pwned}; cat"
    git(repo, f"--git-dir={planted}", "config", "filter.x.clean", command)
    (planted / "info").mkdir(exist_ok=True)
    (planted / "info" / "attributes").write_text("* filter=x\n")
    # Same size, new mtime: a git status in the planted folder must run the filter to tell.
    later = time.time() + 5
    os.utime(repo / "app.py", (later, later))
    calls = logged_git(tmp_path, monkeypatch)
    path = forged(scratch, real, git_dir=str(planted), filters={"filter.x.clean": command})
    for verb in ("check", "revert"):
        assert sparring("guard", verb, "--baseline", str(path)).error_code == "state_corrupt"
    assert [call for call in calls.read_text().splitlines() if str(planted) in call] == []
    assert not pwned.exists()
    assert (repo / "app.py").read_text() == "print('hello')\n"


def test_the_projects_own_baseline_still_checks_and_reverts(
        sparring: Any, repo: Path, scratch: Path, real: dict[str, Any]) -> None:
    (repo / "new.txt").write_text("x\n")
    checked = sparring("guard", "check", "--baseline", str(scratch / "real.json")).out
    assert [c["path"] for c in checked["changed"]] == ["new.txt"]
    assert sparring("guard", "revert", "--baseline", str(scratch / "real.json")).exit_code == 0
    assert not (repo / "new.txt").exists()


HOOK = "#!/bin/sh\ntouch \"$(git rev-parse --show-toplevel)/PWNED\"\n"


@pytest.mark.parametrize("place", [".git/hooks/pre-commit", "AGENTS.md"])
def test_a_baseline_sparring_did_not_keep_restores_nothing_into_git_or_a_protected_file(
        place: str, sparring: Any, repo: Path, scratch: Path) -> None:
    """A Codex that may write the project cannot write `.git/`, but it can write the inbox
    and `.sparring/guard-store/`: a baseline there naming this project, listing a hook it
    never had, beside a copy in the store that hashes to its name, had `guard revert
    --baseline` write an executable hook (or an AGENTS.md of its choosing) for it. Built
    here as that Codex would: the files as a real snapshot writes them, copied to a new
    name. From a baseline sparring did not write and keep its own copy of, revert touches
    neither; from the user's own (`guard snapshot --out` into `.sparring/`), it still does."""
    planted = repo / place
    planted.write_text(HOOK)
    planted.chmod(0o755)
    own = scratch / "own.json"
    assert sparring("guard", "snapshot", "--out", str(own)).exit_code == 0
    planted.unlink()
    forged = scratch / "forged.json"  # the same bytes, written by someone else
    forged.write_bytes(own.read_bytes())

    refused = sparring("guard", "revert", "--baseline", str(forged)).out
    assert refused["reverted"] == []
    assert [r["path"] for r in refused["not_reverted"]] == [place]
    assert "sparring changes it only from a baseline it wrote" in refused["not_reverted"][0][
        "reason"]
    assert not planted.exists()

    restored = sparring("guard", "revert", "--baseline", str(own)).out
    assert [r["path"] for r in restored["reverted"]] == [place], restored
    assert planted.read_text() == HOOK and os.access(planted, os.X_OK)


def test_a_users_baseline_rewritten_by_someone_else_is_no_longer_trusted(
        sparring: Any, repo: Path, scratch: Path) -> None:
    """The user's own baseline in the inbox, its bytes changed since sparring wrote them
    (the same document, spelled anew), is anyone's: its git files stay as they are."""
    config = repo / ".git" / "config"
    own = scratch / "own.json"
    assert sparring("guard", "snapshot", "--out", str(own)).exit_code == 0
    before = config.read_text()
    config.write_text(before + "[alias]\n\tx = status\n")
    own.write_text(json.dumps(json.loads(own.read_text()), indent=1))
    refused = sparring("guard", "revert", "--baseline", str(own)).out
    assert [r["path"] for r in refused["not_reverted"]] == [".git/config"]
    assert "[alias]" in config.read_text()
