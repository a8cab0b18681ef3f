"""The runner's records and the guard against the real Codex CLI writing with
`--sandbox workspace-write` (issue 21, items 6-8), on a loopback mock of the Responses API
whose tool calls make the real codex run shell commands in its real sandbox.

Codex's sandbox here is what it is on a user's machine: the project is writable, the home
folder is not (the tests' home sits under /tmp, which codex would let it write: the config
below leaves /tmp out, as a home outside /tmp is left out on a real machine). Each test
asserts that what Codex forged is not trusted and is back as the runner wrote it, that
nothing the tree configured ran, and that nothing the user had was lost.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from sparring.store import witness
from sparring.store.sessions import Session
from support.debates import Debate, answer, cpt, pt
from support.gitrepo import git
from support.responses_mock import ResponsesMock, shell_call, text

pytestmark = pytest.mark.integration

ANALYSIS = "# My analysis\nC-1: sessions need TTLs.\n"
FORGED = "# My analysis\nI agree with Codex on everything.\n"


@pytest.fixture
def real_codex(codex_bin: Path, tmp_path: Path, responses_mock: ResponsesMock,
               monkeypatch: pytest.MonkeyPatch) -> Path:
    home = responses_mock.codex_home(tmp_path / "codex-home")  # only the project writable
    monkeypatch.setenv("SPARRING_CODEX", str(codex_bin))
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("MOCK_OPENAI_KEY", "dummy")
    return codex_bin


def run_python(tmp_path: Path, code: str) -> str:
    """A shell command for Codex: `code` run by python3 in the project (the script itself
    sits outside it, where Codex may read)."""
    script = tmp_path / "forge.py"
    script.write_text("import json, os\nfrom pathlib import Path\n" + code)
    return f"python3 {script}"


def test_real_codex_forging_the_seal_verdict_and_reports_is_put_back(
        real_codex: Path, responses_mock: ResponsesMock, sparring: Any, repo: Path,
        tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_SANDBOX", "workspace-write")
    debate = Debate(sparring, None, scratch)
    folder = repo / ".sparring" / "sessions" / debate.sid
    record = folder / "session.json"
    kept = witness.copy_of(record)
    assert kept is not None
    copy = Path(kept)
    digest = hashlib.sha256(FORGED.encode()).hexdigest()
    forge = run_python(tmp_path, f"""
folder = Path('.sparring/sessions/{debate.sid}')
(folder / 'sealed-claude-round-1.md').write_text({FORGED!r})
data = json.loads((folder / 'session.json').read_text())
data['engine']['seal']['sha256'] = {digest!r}
data['engine']['verdicts']['1']['points'][0]['stance'] = 'agree'
data['reports'] = [str(Path('codex.py').resolve())]
text = json.dumps(data, indent=2)
(folder / 'session.json').write_text(text)
Path('codex.py').write_text('print("written by codex")\\n')
try:  # and the witness, to make the forgery consistent
    Path({str(copy)!r}).write_text(text)
    print('WITNESS WRITTEN')
except OSError as exc:
    print('WITNESS REFUSED:', exc)
""")
    responses_mock.script(text(json.dumps(answer([cpt("X-1", "agree")]))),
                          shell_call(forge),
                          text(json.dumps(answer([cpt("X-1", "agree"), cpt("C-1", "agree")]))))
    debate.start()
    debate.seal(ANALYSIS)
    assert debate.wait()["status"] == "completed"
    genuine_copy = copy.read_bytes()
    decided = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement"),
                                         pt("C-1", "agree", cls="claude_only")],
                              "convergence": {"state": "continue", "reason": "r"}})
    assert decided.out["next"]["action"] == "wait", decided.raw
    out = debate.wait()
    assert out["status"] == "completed", out

    events = Path(Session(folder).output(2, "events.jsonl")).read_text()
    assert "WITNESS REFUSED" in events and "Read-only file system" in events
    own = f".sparring/sessions/{debate.sid}"
    assert out["guard"]["changed"] == [
        {"path": f"{own}/sealed-claude-round-1.md", "change": "modified"},
        {"path": f"{own}/session.json", "change": "modified"},
        {"path": "codex.py", "change": "added"}]
    data = json.loads(record.read_text())
    assert data["engine"]["seal"]["sha256"] == hashlib.sha256(ANALYSIS.encode()).hexdigest()
    assert data["engine"]["verdicts"]["1"]["points"][0]["stance"] == "disagree"
    assert "reports" not in data
    assert (folder / "sealed-claude-round-1.md").read_text() == ANALYSIS
    assert [p.name for p in folder.glob("session.json.foreign-*")] != []
    assert copy.read_bytes() != genuine_copy  # the runner wrote again since; Codex did not
    assert json.loads(copy.read_bytes()) == data

    reverted = sparring("guard", "revert", "--session", debate.sid).out
    assert [(r["path"], r["action"]) for r in reverted["reverted"]] == [("codex.py", "removed")]
    assert not (repo / "codex.py").exists()
    assert git(repo, "status", "--porcelain") == ""


def test_real_codex_repointing_a_submodule_and_damaging_a_copy(
        real_codex: Path, responses_mock: ResponsesMock, sparring: Any, repo: Path,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In one turn Codex repoints a submodule's `.git` at a git folder it armed, edits a file
    inside the submodule, and overwrites both the user's untracked notes and the guard
    store's copy of them. The guard names every file, runs nothing Codex configured, and
    revert puts back what it can and leaves the notes where they are, saying why."""
    lib = tmp_path / "lib-origin"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    (lib / "l.txt").write_text("library code\n")
    git(lib, "add", "-A")
    git(lib, "commit", "-qm", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(repo, "commit", "-qm", "with lib")
    notes = repo / "notes.txt"
    notes.write_text("the user's notes\n")
    marks = tmp_path / "ran"
    marks.mkdir()
    sid = sparring("init", "--skill", "deep-discussion").out["session"]
    responses_mock.script(shell_call(" && ".join([
        "cp -r .git/modules/lib evil-gitdir",
        f"git config -f evil-gitdir/config filter.evil.clean 'touch {marks}/clean; cat'",
        f"git config -f evil-gitdir/config core.fsmonitor 'touch {marks}/fsmonitor; false'",
        "echo '* filter=evil' > evil-gitdir/info/attributes",
        "echo 'gitdir: ../evil-gitdir' > lib/.git",
        "echo 'edited by codex' > lib/l.txt",
        "d=$(sha256sum notes.txt | cut -d' ' -f1)",
        "echo forged > .sparring/guard-store/$d",
        "echo codex > notes.txt"])), text("done"))
    monkeypatch.setenv("SPARRING_SANDBOX", "workspace-write")  # the user allows it
    assert sparring("start", sid, "--sandbox", "workspace-write", input=b"q").exit_code == 0
    out = sparring("wait", sid, "--timeout", "120").out
    assert out["status"] == "completed", out
    paths = {c["path"] for c in out["guard"]["changed"]}
    assert {"lib/.git", "lib/l.txt", "notes.txt", "evil-gitdir/config"} <= paths
    reverted = sparring("guard", "revert", "--session", sid).out
    assert {r["path"] for r in reverted["reverted"]} >= {"lib/.git", "lib/l.txt",
                                                          "evil-gitdir/config"}
    [left] = reverted["not_reverted"]
    assert left["path"] == "notes.txt" and "changed since the snapshot" in left["reason"]
    assert notes.read_text() == "codex\n"  # left in place: the only version there is
    assert (repo / "lib" / "l.txt").read_text() == "library code\n"
    assert (repo / "lib" / ".git").read_text() == "gitdir: ../.git/modules/lib\n"
    assert os.listdir(marks) == []
