"""sparring's own state is the user's alone: every file under `.sparring/`, and under its
state folder out of the project (what each turn's codex printed, the witness copies), is 0600
and every folder 0700, whatever the umask (issue 11, case 11)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from sparring.store import locate
from support.debates import Debate, answer, cpt, pt


def modes(top: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(top.lstat().st_mode)}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(folder) / name
            found[str(path.relative_to(top))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def test_everything_under_sparring_is_private(sparring: Any, fake_codex: Any, repo: Path,
                                              scratch: Path) -> None:
    old = os.umask(0o022)  # the usual umask: what sparring does not restrict, others can read
    try:
        _run_a_debate(sparring, fake_codex, repo, scratch)
    finally:
        os.umask(old)
    found = modes(repo / ".sparring")
    for part in ("prompt.txt", "runner.log", "session.json.lock", "inputs/",
                 "guard-baseline.json", "summary.json", "sealed-claude-round-1.md"):
        assert any(part in name + "/" for name in found), (part, sorted(found))
    loose = {name: oct(mode) for name, mode in found.items()
             if mode != (0o700 if (repo / ".sparring" / name).is_dir() else 0o600)}
    assert loose == {}
    state = Path(locate.state_home())
    outputs = modes(state)
    for part in ("events.jsonl", "stderr.log", "witness/"):
        assert any(part in name + "/" for name in outputs), (part, sorted(outputs))
    loose = {name: oct(mode) for name, mode in outputs.items()
             if mode != (0o700 if (state / name).is_dir() else 0o600)}
    assert loose == {}


def _run_a_debate(sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> None:
    debate = Debate(sparring, fake_codex, scratch)
    (repo / "dirty.txt").write_text("untracked work\n")
    fake_codex.script([{"reply": answer([cpt("X-1", "agree")])},
                       {"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    inbox = repo / ".sparring" / "inbox"
    (inbox / "analysis.md").write_text("# mine\n")
    sealed = sparring("wait", debate.sid, "--seal", str(inbox / "analysis.md"), "--timeout", "30")
    assert sealed.out["status"] == "completed", sealed.raw
    decided = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement")],
                              "convergence": {"state": "continue", "reason": "r"}})
    assert decided.out["next"]["action"] == "wait", decided.raw
    debate.wait()
    assert sparring("finalize", debate.sid).exit_code == 0


def test_an_old_world_readable_state_folder_is_made_private(sparring: Any, repo: Path) -> None:
    (repo / ".sparring").mkdir(mode=0o755)
    os.chmod(repo / ".sparring", 0o755)
    assert sparring("init", "--skill", "think-about").exit_code == 0
    assert stat.S_IMODE((repo / ".sparring").stat().st_mode) == 0o700
