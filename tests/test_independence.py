"""Independent by mechanism, and checked (turn/barrier.py, turn/independence.py), in
think-about and dual-model against the fake codex, whose shell mode runs a real command as
Codex's tool call:

- the runner takes no seal while Codex's round one can run, and starts no round-one turn
  once sealed;
- nothing of Codex's answer lies in the project before the seal (its events are out of it,
  session.json holds no word of it);
- what Codex did in round one is checked when the seal is taken: a copy of the analysis it
  found anywhere, or sparring's records it read, voids independence in the report and its
  JSON, naming the command; reading the project's own files does not.

tests/integration/test_independence_real_codex.py runs the same cases with the real codex.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.debates import SYNTHESIS, Debate, answer, cpt, pt

# Claude's analysis: its point C-1 quotes a line of the project's code (which Codex may well
# print) and says something of its own (which Codex can only have from a copy).
CODE = "def expire(rows): return [row for row in rows if row.expires_at > now()]"
ANALYSIS = (f"# My analysis\n\n- C-1: expiry needs a sweep job; today it runs `{CODE}` "
            "on every read, which the nightly batch window cannot absorb at peak load.\n")
OWN_WORDS = "the nightly batch window cannot absorb at peak load"
ANSWER_TEXT = "SQLite in WAL mode holds the write rate, measured twice"


@pytest.fixture(params=["think-about", "dual-model"])
def debate(request: pytest.FixtureRequest, sparring: Any, fake_codex: Any, scratch: Path,
           repo: Path) -> Debate:
    (repo / "src").mkdir()
    (repo / "src" / "expiry.py").write_text(f"import time\n\n{CODE}\n")
    return Debate(sparring, fake_codex, scratch, request.param)


def codex_runs(debate: Debate, command: str) -> None:
    """Codex's round one runs `command` (as its exec_command would), then answers."""
    debate.fake.script([{"mode": "shell", "shell": command, "reply": answer(
        [cpt("X-1", "agree", "Expiry needs a sweep job")], position=ANSWER_TEXT)}])


def sealed(debate: Debate) -> dict[str, Any]:
    debate.start()
    out = debate.wait()
    assert out["status"] == "completed" and out["review"] is None, out
    result = debate.sparring("wait", debate.sid, "--seal", debate.file("analysis.md", ANALYSIS))
    assert result.exit_code == 0 and result.out["sealed"] is True, result.raw
    return dict(result.out)


def reported(debate: Debate) -> tuple[dict[str, Any], str]:
    verdict = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                            sealed="C-1")],
                              "convergence": {"state": "agree", "reason": "settled"}})
    assert verdict.exit_code == 0, verdict.raw
    out, text = debate.report(SYNTHESIS)
    return json.loads(Path(out["json"]).read_text())["agreement_audit"], text


def test_a_copy_found_outside_the_project_voids_independence_naming_the_command(
        debate: Debate, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "draft.md").write_text(ANALYSIS)  # the user's own draft, in the temp folder
    command = f"grep -rI 'batch window' {notes}"
    codex_runs(debate, command)
    out = sealed(debate)
    assert out["independence"]["state"] == "void"
    assert command in out["independence"]["why"]
    audit, text = reported(debate)
    assert audit["counts"]["independent"] == 0
    assert audit["independence"]["state"] == "void"
    assert [s["saw"] for s in audit["independence"]["seen"]] == ["analysis"]
    assert command in audit["independence"]["seen"][0]["command"]
    assert audit["summary"].startswith("Agreement: independence void (in round one Codex's "
                                       f"command `/bin/sh -c \"{command}\"`")
    assert f"_{audit['summary']}_" in text, "the report's agreement line says why"
    assert "**Independence void**" in text and command in text.split(
        "## How the agreement was reached")[1]


def test_reading_the_projects_own_files_keeps_a_point_independent(debate: Debate) -> None:
    """Codex prints the file Claude's analysis quotes: eight words in common, and the
    project's own, so no copy."""
    codex_runs(debate, "cat src/expiry.py && git log --oneline")
    out = sealed(debate)
    assert out["independence"] == {"state": "checked"}
    audit, text = reported(debate)
    assert audit["counts"]["independent"] == 1 and audit["independence"]["state"] == "checked"
    assert "1 command and 1 output" in audit["independence"]["why"]
    assert "Independence checked: Claude sealed its analysis after Codex's round one had " \
           "ended" in text


@pytest.mark.parametrize("where", ["another session", "the state folder", "this session"])
def test_a_read_of_sparrings_records_voids_independence(
        debate: Debate, sparring: Any, repo: Path, where: str) -> None:
    """Another session's records, or sparring's copies out of the project, may hold Claude's
    text: a command that reads them voids independence. This session's own folder holds
    nothing Codex was not sent."""
    other = sparring("init", "--skill", "think-about").out["session"]
    command = {"another session": f"cat .sparring/sessions/{other}/session.json",
               "the state folder": "ls -R ~/.local/state/sparring >/dev/null",
               "this session": f"cat .sparring/sessions/{debate.sid}/turns/1/prompt.txt"}[where]
    codex_runs(debate, command)
    out = sealed(debate)
    if where == "this session":
        assert out["independence"] == {"state": "checked"}
        return
    assert out["independence"]["state"] == "void", out
    assert "sparring's own records" in out["independence"]["why"]


def test_nothing_of_codexs_answer_lies_in_the_project_before_the_seal(
        debate: Debate, repo: Path) -> None:
    codex_runs(debate, "true")
    debate.start()
    waited = debate.wait()
    assert waited["status"] == "completed" and waited["review"] is None
    assert "--seal" in waited["review_withheld"]

    def holding() -> list[str]:
        return [str(p.relative_to(repo)) for p in repo.rglob("*")
                if p.is_file() and ANSWER_TEXT.encode() in p.read_bytes()]

    assert holding() == [], "Codex's answer lies in the project before the seal"
    full = debate.sparring("poll", debate.sid, "--full").out
    assert set(full["files"]) == {"prompt"}, "where its events are is not shown either"
    debate.sparring("wait", debate.sid, "--seal", debate.file("analysis.md", ANALYSIS))
    assert holding() == [f".sparring/sessions/{debate.sid}/session.json"]
    shown = debate.wait()
    assert shown["review"]["data"]["position"] == ANSWER_TEXT


def test_the_seal_waits_for_the_end_of_codexs_round_one(
        debate: Debate, sparring: Any, scratch: Path) -> None:
    analysis = debate.file("analysis.md", ANALYSIS)
    early = sparring("seal", debate.sid, "--file", analysis)
    assert early.error_code == "seal_too_early", early.raw
    debate.fake.script([{"mode": "slow", "delay": "4", "reply": answer([])}])
    debate.start()
    running = sparring("wait", debate.sid, "--seal", analysis)
    assert running.error_code == "seal_too_early", running.raw
    assert "still running" in running.out["error"]["message"]
    assert (scratch / "analysis.md").is_file(), "a refused seal leaves the file in the inbox"
    debate.fake.release()
    assert debate.wait()["status"] == "completed"
    assert sparring("wait", debate.sid, "--seal", analysis).exit_code == 0


def test_no_round_one_turn_starts_once_the_analysis_is_sealed(
        debate: Debate, sparring: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex's round one fails; Claude seals; asking round one again would let Codex read the
    sealed analysis, so the runner refuses it, recovery included."""
    # Codex fails at once; the start window must outlast a busy machine's start of the fake.
    monkeypatch.setenv("SPARRING_STARTSECS", "10")
    debate.fake.script([{"mode": "rate_limited"}])
    first = {"think-about": "think-about/round1", "dual-model": "dual-model/dispatch"}
    started = sparring("start", debate.sid, "--template", first[debate.skill],
                       "--var", "QUESTION=Redis or SQLite?")
    assert started.error_code == "rate_limited", started.raw  # failed within its start
    assert debate.wait()["status"] == "failed"
    assert debate.seal(ANALYSIS).exit_code == 0
    for argv in (["resume", debate.sid, "--recover"],
                 ["resume", debate.sid, "--prompt-file", debate.file("again.md", "again")]):
        refused = sparring(*argv)
        assert refused.error_code == "invalid_transition", refused.raw
        assert "round one is not asked again" in refused.out["error"]["message"]


@pytest.mark.parametrize("value", [ANSWER_TEXT * 3, {"id": "X-1", "claim": ANSWER_TEXT},
                                   [ANSWER_TEXT], ANSWER_TEXT[:30]])
def test_a_schema_problem_never_quotes_the_answer(value: Any) -> None:
    """A turn's error is on record, shown, and sent on in the re-ask while Codex's answer is
    withheld: a problem says where and which rule, never the value (text, object, list)."""
    from sparring import answers

    found = answers.problems("codex-answer", {
        "position": "p", "points": value, "proposed_summary": None,
        "approve_summary": None, "convergence": {"state": "maybe", "reason": "r"},
        "extra": ANSWER_TEXT})
    assert any(problem.startswith("points") and "is not of type" in problem
               for problem in found), found
    assert "convergence.state: is not one of ['continue', 'agree', 'stalemate']" in found
    assert "(top level): holds properties the schema does not allow" in found
    assert not any(word in problem for problem in found for word in ("WAL", "maybe"))


def test_an_analysis_sealed_from_a_file_in_the_project_excuses_no_copy(
        debate: Debate, tmp_path: Path, repo: Path) -> None:
    """Codex found the user's draft outside; Claude then sealed a copy kept in the project.
    A file written after round one began is not the project's own text: the copy still
    voids independence."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "draft.md").write_text(ANALYSIS)
    codex_runs(debate, f"grep -rI 'batch window' {notes}")
    debate.start()
    assert debate.wait()["status"] == "completed"
    (repo / "analysis.md").write_text(ANALYSIS)  # in the project, written after round one
    out = debate.sparring("wait", debate.sid, "--seal", str(repo / "analysis.md")).out
    assert out["independence"]["state"] == "void", out


@pytest.mark.parametrize("command", [
    "rg -n sweep -g '!.sparring/**' .", "find . -not -path './.sparring/*' -name '*.py'",
    "grep -rn --exclude-dir=.sparring sweep .", "ls -aR .sparring >/dev/null; ls -aR ."])
def test_leaving_sparrings_records_out_or_listing_them_reads_nothing(
        debate: Debate, sparring: Any, command: str) -> None:
    sparring("init", "--skill", "think-about")  # another session's records are there
    codex_runs(debate, command)
    if command.startswith("ls"):  # a listing's headings name folders: no content read
        codex_runs(debate, "ls -aR .")
    assert sealed(debate)["independence"] == {"state": "checked"}


def test_a_line_quoted_from_the_repositorys_history_is_the_projects_own(
        debate: Debate, repo: Path) -> None:
    """Claude quotes a commit message Codex read in `git log`, and a line `git diff` shows
    removed: both are the repository's, not a copy."""
    from support.gitrepo import git

    message = "expiry needs a sweep job because the nightly batch window cannot absorb it"
    (repo / "old.py").write_text("# the sweep runs at midnight over every row of the table\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    (repo / "old.py").write_text("# changed\n")
    quoting = (f"# Mine\n\n- C-1: as the log says, {message}; and the old comment said the "
               "sweep runs at midnight over every row of the table.\n")
    codex_runs(debate, "git log -n 3 && git diff")
    debate.start()
    assert debate.wait()["status"] == "completed"
    out = debate.sparring("wait", debate.sid, "--seal", debate.file("a.md", quoting)).out
    assert out["independence"] == {"state": "checked"}, out


def test_a_session_made_before_the_outputs_left_the_project_keeps_them_in_its_folder(
        debate: Debate, repo: Path) -> None:
    """A session.json without an outputs token (made by an earlier sparring) keeps what its
    turns' codex print in its own folder, as it did, and its guard stays clean."""
    import json as jsonlib

    record = repo / ".sparring" / "sessions" / debate.sid / "session.json"
    data = jsonlib.loads(record.read_text())
    del data["outputs"]
    record.write_text(jsonlib.dumps(data))
    codex_runs(debate, "true")
    debate.start()
    out = debate.wait("--full")
    assert out["status"] == "completed" and out["guard"]["clean"], out
    assert (record.parent / "turns" / "1" / "events.jsonl").is_file()
