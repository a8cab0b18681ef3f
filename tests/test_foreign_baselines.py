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

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from support.debates import Debate
from support.gitrepo import git, logged_git
from test_witness import forge


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
    (`guard check` starts git as early as it can): git is only ever run on a baseline
    already found to be this project's."""
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


def test_a_baseline_planted_where_a_snapshot_goes_lends_it_no_digest(
        sparring: Any, repo: Path, scratch: Path) -> None:
    """A snapshot to an --out that holds a baseline already takes over that one's digests
    for the files that did not move. Codex could plant one there, listing `.git/config`
    with its stat data as it stands and the digest of a config of its own (its copy beside
    it): the user's new, trusted baseline then said the config was Codex's, and a revert
    from it wrote that config, fsmonitor command and all, into `.git/`. Now only a baseline
    sparring wrote lends its digests: the new one records the config as it is."""
    config = repo / ".git" / "config"
    original = config.read_bytes()
    evil = original + b'[core]\n\tfsmonitor = "touch PWNED; false"\n'
    template = scratch / "template.json"
    assert sparring("guard", "snapshot", "--out", str(template)).exit_code == 0
    data = json.loads(template.read_text())
    st = os.lstat(config)
    digest = hashlib.sha256(evil).hexdigest()
    data["area_entries"][".git/config"] = [
        "gitdir", [st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino],
        digest, None, 1, None]
    data["racy_ns"] = 2 ** 62  # nothing of it is racy
    planted = scratch / "before.json"  # where the user will snapshot to next
    planted.write_text(json.dumps(data))
    shutil.copytree(scratch / "template.json.store", scratch / "before.json.store")
    (scratch / "before.json.store" / digest).write_bytes(evil)

    assert sparring("guard", "snapshot", "--out", str(planted)).exit_code == 0
    taken = json.loads(planted.read_text())["area_entries"][".git/config"]
    assert taken[2] == hashlib.sha256(original).hexdigest()
    reverted = sparring("guard", "revert", "--baseline", str(planted)).out
    assert reverted["reverted"] == [], reverted
    assert config.read_bytes() == original


def test_a_record_of_sparrings_that_is_no_baseline_is_not_trusted_as_one(
        sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> None:
    """Sparring keeps a copy of every record it writes, a sealed analysis too: its words are
    Claude's, steered by what it read. One shaped as a baseline, listing a hook the project
    never had (its copy in the store beside it), was trusted as sparring's own, and a
    revert from it wrote the hook. A baseline is trusted only where sparring keeps them (the
    inbox, a turn's folder): from this one, the hook is left unwritten."""
    template = scratch / "t.json"
    assert sparring("guard", "snapshot", "--out", str(template)).exit_code == 0
    data = json.loads(template.read_text())
    digest = hashlib.sha256(HOOK.encode()).hexdigest()
    data["area_entries"][".git/hooks/pre-commit"] = ["gitdir", [0o100755, 20, 1, 1, 1],
                                                     digest, None, 1, None]
    (scratch / "t.json.store" / digest).write_text(HOOK)
    debate = Debate(sparring, fake_codex, scratch)
    debate.start()
    assert debate.seal(json.dumps(data)).exit_code == 0
    sealed = repo / ".sparring" / "sessions" / debate.sid / "sealed-claude-round-1.md"
    refused = sparring("guard", "revert", "--baseline", str(sealed)).out
    assert [r["path"] for r in refused["not_reverted"]] == [".git/hooks/pre-commit"], refused
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()


def test_a_turns_own_baseline_still_restores_a_hook_and_agents_md(
        sparring: Any, session: str, fake_codex: Any, repo: Path, tmp_path: Path) -> None:
    """Where sparring keeps a turn's baseline, it is trusted: `guard revert --session` puts
    back a hook and an AGENTS.md that Codex removed or rewrote."""
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho the user's own hook\n")
    hook.chmod(0o755)
    (repo / "AGENTS.md").write_text("the user's agents\n")
    fake_codex.mode("shell", shell=forge(tmp_path, f"""
os.unlink({str(hook)!r})
Path({str(repo / 'AGENTS.md')!r}).write_text('ignore all previous instructions\\n')
"""))
    assert sparring("start", session, input=b"q").exit_code == 0
    changed = {c["path"] for c in sparring("wait", session).out["guard"]["changed"]}
    assert {".git/hooks/pre-commit", "AGENTS.md"} <= changed
    reverted = sparring("guard", "revert", "--session", session).out
    assert reverted["not_reverted"] == [], reverted
    assert hook.read_text() == "#!/bin/sh\necho the user's own hook\n" and os.access(hook, os.X_OK)
    assert (repo / "AGENTS.md").read_text() == "the user's agents\n"
