"""The inbox: how the skills hand text to the runner without a shell ever seeing it.

Claude writes a file into `.sparring/inbox/` of the directory Claude Code runs in and names
it with `--file`; the runner reads it byte for byte, takes it into the session once the verb
succeeded, and leaves it in place when the verb failed. Commands the runner prints for the
caller are spelled with the launcher's full path, the only shape Claude Code approves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparring import output
from sparring.errors import Hint
from support.debates import answer, cpt, round_one_ended
from support.gitrepo import git

HOSTILE = ('{"ttl": 30} and {\'a\': 1}, it\'s `$(rm -rf ~)` ${HOME} {{ x }} {% if %}\n'
           "naïve — 東京 \\n \r\nend without newline")


def inbox(repo: Path) -> Path:
    path = repo / ".sparring" / "inbox"
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_init_prints_the_inbox_which_git_never_sees(sparring: Any, repo: Path) -> None:
    out = sparring("init", "--skill", "think-about").out
    assert out["inbox"] == str(repo / ".sparring" / "inbox")
    (Path(out["inbox"]) / "analysis.md").write_text("mine")
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_handed_in_file_reaches_the_runner_byte_for_byte_and_is_taken(
        sparring: Any, repo: Path, fake_codex: Any) -> None:
    sid = sparring("init", "--skill", "think-about").out["session"]
    round_one_ended(sparring, sid)
    note = inbox(repo) / "analysis.md"
    note.write_bytes(HOSTILE.encode())

    sealed = sparring("seal", sid, "--file", str(note))

    assert sealed.exit_code == 0, sealed.raw
    assert Path(sealed.out["file"]).read_bytes() == HOSTILE.encode()
    assert not note.exists(), "taken out of the inbox"
    [kept] = (Path(sealed.out["file"]).parent / "inputs").iterdir()
    assert kept.name.endswith("-analysis.md") and kept.read_bytes() == HOSTILE.encode()


def test_a_failed_verb_leaves_the_file_to_be_fixed(sparring: Any, fake_codex: Any,
                                                   repo: Path) -> None:
    sid = sparring("init", "--skill", "think-about").out["session"]
    verdict = inbox(repo) / "verdict.json"
    verdict.write_text('{"points": []}')

    refused = sparring("verdict", sid, "--file", str(verdict))

    assert refused.exit_code == 1
    assert verdict.read_text() == '{"points": []}'


def test_a_file_outside_the_inbox_is_never_moved(sparring: Any, repo: Path,
                                                 fake_codex: Any) -> None:
    sid = sparring("init", "--skill", "think-about").out["session"]
    round_one_ended(sparring, sid)
    mine = repo / "notes" / "analysis.md"  # in the project, not in the inbox
    mine.parent.mkdir()
    mine.write_text("my analysis")
    assert sparring("seal", sid, "--file", str(mine)).exit_code == 0
    assert mine.read_text() == "my analysis"


def test_the_verdict_may_be_yaml(sparring: Any, fake_codex: Any, repo: Path) -> None:
    fake_codex.script([{"reply": answer([cpt("X-1", "agree", "c", evidence=["a.py:1"])])}])
    sid = sparring("init", "--skill", "think-about").out["session"]
    assert round_one_ended(sparring, sid)["status"] == "completed"
    sparring("seal", sid, input=b"mine")
    assert sparring("wait", sid).out["review"] is not None
    verdict = inbox(repo) / "verdict.yaml"
    verdict.write_text("points:\n  - id: X-1\n    class: genuine_agreement\n    stance: agree\n"
                       "    note: |\n" + "".join(f"      {line}\n" for line in
                                               HOSTILE.splitlines()) +
                       "convergence:\n  state: continue\n  reason: |\n    {\"x\": 'y'} open\n"
                       "message: |\n" + "".join(f"  X-1: {line}\n" for line in
                                                HOSTILE.splitlines()))

    judged = sparring("verdict", sid, "--file", str(verdict))

    assert judged.exit_code == 0, judged.raw
    stored = json.loads((repo / ".sparring" / "sessions" / sid / "session.json").read_text())
    assert stored["engine"]["verdicts"]["1"]["convergence"]["reason"] == "{\"x\": 'y'} open\n"


def test_from_a_subfolder_the_inbox_is_there_and_claudes_writes_are_no_violation(
        sparring: Any, fake_codex: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code started in a subfolder may write only below it: the inbox follows."""
    sub = repo / "services" / "api"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    out = sparring("init", "--skill", "deep-discussion").out
    assert out["inbox"] == str(sub / ".sparring" / "inbox")
    assert out["root"] == str(repo)
    fake_codex.mode("slow", delay="4", reply="answer")
    started = sparring("start", out["session"], "--prompt-file", "-", input=b"q")
    assert started.out.get("status") == "running", started.raw
    (Path(out["inbox"]) / "analysis.md").write_text("written while Codex works")
    fake_codex.release()

    done = sparring("wait", out["session"], "--timeout", "30").out

    assert done["status"] == "completed", done
    assert done["guard"]["clean"] is True, done["guard"]
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_commands_for_the_caller_name_the_launcher_by_its_full_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    launcher = "/home/u/proj/.claude/skills/think-about/sparring"
    monkeypatch.setenv("SPARRING_LAUNCHER", launcher)
    said = "Codex said: run `sparring wait S` yourself"
    obj = {"review": {"text": said},
           "next": {"action": "resume", "command": output.command("resume", "S", "--vars-file",
                                                                  "f")},
           "error": {"code": "session_busy", "hint": Hint("wait with `sparring wait S`")}}

    spelled = output.spell_commands(obj, output.program())

    assert spelled["next"]["command"] == f"{launcher} resume S --vars-file f"
    assert spelled["error"]["hint"] == f"wait with `{launcher} wait S`"
    assert spelled["review"]["text"] == said, "what Codex wrote is passed on as written"


def test_a_launcher_path_with_a_space_is_quoted(monkeypatch: pytest.MonkeyPatch) -> None:
    """In double quotes, the one quoting Claude Code's permission rules can match."""
    monkeypatch.setenv("SPARRING_LAUNCHER", "/home/u/my proj/sparring")
    assert output.program() == '"/home/u/my proj/sparring"'
    monkeypatch.setenv("SPARRING_LAUNCHER", "/home/u/$HOME proj/sparring")  # not in "": '…'
    assert output.program() == "'/home/u/$HOME proj/sparring'"
    monkeypatch.setenv("SPARRING_LAUNCHER", "sparring")  # not a full path: left as it is
    assert output.program() == "sparring"


@pytest.fixture
def spaced_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "my proj" / "app"
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# demo\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    monkeypatch.chdir(path)
    return path


def commands_in(text: str) -> list[list[str]]:
    """Each `sparring …` command quoted in a next step or hint, as a shell would split it."""
    import re
    import shlex

    return [shlex.split(found) for found in re.findall(r"`(sparring [^`]*)`", text)]


def test_paths_with_a_space_are_whole_words_in_double_quotes(sparring: Any,
                                                             spaced_repo: Path) -> None:
    """Every path in a command the runner prints survives a shell as one word, and is in
    double quotes, the one quoting Claude Code approves; a file below where the command runs
    is named from there."""
    box = ".sparring/inbox"
    args = inbox(spaced_repo) / "args.txt"
    args.write_text("high CODEX a topic")
    discussion = sparring("discuss", "new", "--file", str(args)).out
    protocol = inbox(spaced_repo) / "protocol.yaml"
    protocol.write_text("question: Redis or SQLite?\n")
    debate = sparring("debate", "new", str(spaced_repo / "debate" / "my store"), "--file",
                      str(protocol)).out
    nexts = [discussion["next"], debate["next"]]
    assert [c[-1] for c in commands_in(" ".join(nexts))] == [f"{box}/frame.yaml",
                                                             f"{box}/round.md"]
    assert commands_in(debate["next"])[0][3] == "debate/my store"
    assert '"debate/my store"' in debate["next"] and "'" not in " ".join(nexts)
    # Where Claude writes is named whole: its Write tool takes an absolute path.
    assert f"(round 0) to {spaced_repo}/.sparring/inbox/round.md, then" in debate["next"]
