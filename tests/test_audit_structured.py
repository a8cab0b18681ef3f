"""How the agreement was reached, in think-about and dual-model (each scenario runs in
both): scripted debates through the CLI against the fake codex, each asserting the report's
`agreement_audit` and its section. The runner computes it from the record: the sealed
analysis as round 0, Codex's answers, Claude's verdicts, the commands Codex ran, and the
project's files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from support.debates import SYNTHESIS, Debate, answer, cpt, pt

SECTION = "## How the agreement was reached"


@pytest.fixture(params=["think-about", "dual-model"])
def debate(request: pytest.FixtureRequest, sparring: Any, fake_codex: Any, scratch: Path,
           repo: Path) -> Debate:
    """Both structured workflows, each scenario: the same engine, the same audit."""
    (repo / "src").mkdir()
    (repo / "src" / "store.py").write_text("import sqlite3\nDB = 'sessions.db'\n")
    (repo / "src" / "load.py").write_text("# measured\nWRITES = 200\nPEAK = 450\n")
    return Debate(sparring, fake_codex, scratch, request.param)


def run(debate: Debate, script: list[Any], sealed: str, verdicts: list[dict[str, Any]]
        ) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """Play the debate as SKILL.md says; return the audit, the report and the last verdict."""
    debate.fake.script(script)
    debate.start()
    assert debate.seal(sealed).exit_code == 0
    debate.wait()
    last: dict[str, Any] = {}
    for n, body in enumerate(verdicts, start=1):
        result = debate.verdict(body)
        assert result.exit_code == 0, result.raw
        last = result.out
        if n < len(verdicts):
            assert debate.next_round(last)["status"] == "completed"
    out, text = debate.report(SYNTHESIS)
    return json.loads(Path(out["json"]).read_text())["agreement_audit"], text, last


def agree(proposed: str | None = None, approve: str | None = None) -> dict[str, Any]:
    return {"convergence": {"state": "agree", "reason": "settled"},
            "proposed_summary": proposed, "approve_summary": approve}


GOON = {"convergence": {"state": "continue", "reason": "open"}}


def stance(round_no: int, side: str, value: str, evidence: list[str], source: str
           ) -> dict[str, Any]:
    return {"round": round_no, "side": side, "stance": value, "evidence": evidence,
            "source": source}


ANSWER, VERDICT = "Codex's answer", "Claude's verdict"


def row(pid: str, claim: str, outcome: str, stances: list[dict[str, Any]], *,
        raised_in: int = 1, independent: bool = False, sealed_as: str | None = None,
        why: str = "") -> dict[str, Any]:
    return {"id": pid, "claim": claim, "raised_by": "codex" if pid[0] == "X" else "claude",
            "raised_in": raised_in, "outcome": outcome, "why": why,
            "independent": independent, "sealed_as": sealed_as, "stances": stances}


def top_line(text: str) -> str:
    """The report's summary line: the first line after the title."""
    return next(line for line in text.splitlines()[1:] if line.strip())


def test_both_sides_agree_independently(debate: Debate) -> None:
    audit, text, last = run(debate, [{"reply": answer(
        [cpt("X-1", "agree", "SQLite handles 200 writes/s", evidence=["src/load.py:2"]),
         cpt("X-2", "agree", "Expired sessions need a sweep", evidence=[])],
        "agree", proposed="SQLite with a sweep job.")}],
        "# Analysis\n\n- C-1: SQLite is enough for our load.\n- C-2: A sweep job expires "
        "sessions.\n",
        [{"points": [pt("X-1", "agree", cls="genuine_agreement", evidence=[], sealed="C-1"),
                     pt("X-2", "agree", cls="genuine_agreement", evidence=[], sealed="C-2")],
          **agree(approve="S-1")}])
    assert last["decision"] == "consensus"
    assert audit["points"] == [
        row("X-1", "SQLite handles 200 writes/s", "agreed", [
            stance(0, "claude", "agree", [], "sealed analysis (C-1)"),
            stance(1, "codex", "agree", ["src/load.py:2"], ANSWER),
            stance(1, "claude", "agree", [], VERDICT)], independent=True, sealed_as="C-1"),
        row("X-2", "Expired sessions need a sweep", "agreed", [
            stance(0, "claude", "agree", [], "sealed analysis (C-2)"),
            stance(1, "codex", "agree", [], ANSWER),
            stance(1, "claude", "agree", [], VERDICT)], independent=True, sealed_as="C-2")]
    assert audit["counts"] == {"points": 2, "independent": 2, "agreed_on_first_reading": 0,
                               "with_new_evidence": 0, "without_new_evidence": 0,
                               "open": 0, "dropped": 0}
    assert audit["concessions"] == [] and audit["unchallenged"] is True
    assert audit["independence"]["state"] == "checked" and audit["notes"] == []
    assert audit["independence"]["seen"] == []
    assert "Independence checked: Claude sealed its analysis after Codex's round one" in text
    summary = ("Agreement: 2 points independent, 0 agreed on first reading, 0 reached with new "
               "evidence, 0 conceded without new evidence, 0 still open, 0 dropped. "
               "Unchallenged: nobody disagreed with any point.")
    assert audit["summary"] == summary and top_line(text) == f"_{summary}_"
    section = text.split(SECTION, 1)[1]
    assert "**independent** were reached by both sides on their own" in section
    assert "the strongest kind of\nagreement" in section
    assert "| **X-1** SQLite handles 200 writes/s _(sealed as C-1)_ | agreed, **independent** |"\
        " 0: agree · 1: agree | 1: agree (src/load.py:2) |" in section
    assert "**Unchallenged**" in section and "weak evidence of correctness" in section


def test_everything_agreed_in_round_one_is_unchallenged(debate: Debate) -> None:
    audit, text, _ = run(debate, [{"reply": answer(
        [cpt("X-1", "agree", "SQLite is enough"), cpt("X-2", "agree", "No Redis")],
        "agree", proposed="SQLite.")}],
        "# Analysis\n\nSQLite, probably; nothing numbered.\n",
        [{"points": [pt("X-1", "agree", cls="codex_only", evidence=[]),
                     pt("X-2", "agree", cls="codex_only", evidence=[])],
          **agree(approve="S-1")}])
    assert [(p["id"], p["outcome"], p["independent"]) for p in audit["points"]] == [
        ("X-1", "agreed", False), ("X-2", "agreed", False)]
    assert audit["unchallenged"] is True and audit["moved"]["sentence"] is None
    assert audit["summary"] == (
        "Agreement: 0 points independent, 2 agreed on first reading, 0 reached with new "
        "evidence, 0 conceded without new evidence, 0 still open, 0 dropped. Unchallenged: "
        "nobody disagreed with any point.")
    assert "**Unchallenged**: both sides agreed on every point the first time they could" in text
    assert "were reached by both sides on their own" not in text


def conceding(debate: Debate, evidence: list[str]) -> tuple[dict[str, Any], str]:
    """Claude disagrees with X-1 in round one, then agrees citing `evidence`."""
    audit, text, last = run(debate, [
        {"reply": answer([cpt("X-1", "agree", "Peak load stays under 500 writes/s",
                              evidence=["src/store.py:2"])])},
        {"reply": answer([cpt("X-1", "agree", "Peak load stays under 500 writes/s",
                              evidence=["src/store.py:2"])], "agree",
                         proposed="SQLite holds the peak.")}],
        "# Analysis\n\nNo numbered points.\n",
        [{"points": [pt("X-1", "disagree", cls="genuine_disagreement", evidence=[])], **GOON},
         {"points": [pt("X-1", "agree", cls="genuine_agreement", evidence=evidence)],
          **agree(approve="S-1")}])
    assert last["decision"] == "consensus"
    return audit, text


def test_claude_concedes_with_new_evidence_that_exists(debate: Debate) -> None:
    audit, text = conceding(debate, ["src/load.py:3"])
    assert audit["points"] == [row("X-1", "Peak load stays under 500 writes/s",
                                   "conceded_by_claude", [
        stance(1, "codex", "agree", ["src/store.py:2"], ANSWER),
        stance(1, "claude", "disagree", [], VERDICT),
        stance(2, "codex", "agree", ["src/store.py:2"], ANSWER),
        stance(2, "claude", "agree", ["src/load.py:3"], VERDICT)])]
    assert audit["concessions"] == [{
        "point": "X-1", "side": "claude", "round": 2, "from": "disagree", "to": "agree",
        "evidence": [{"cited": "src/load.py:3", "kind": "path_line", "checked": True,
                      "new": True, "counts": True, "why": ""}],
        "new_evidence": True, "flag": None}]
    assert audit["moved"] == {
        "claude": {"concessions": 1, "directions": {"disagree -> agree": 1}},
        "codex": {"concessions": 0, "directions": {}},
        "sentence": "Claude made every concession (1); Codex never moved from a position it "
                    "held."}
    assert audit["unchallenged"] is False
    assert audit["summary"] == (
        "Agreement: 0 points independent, 0 agreed on first reading, 1 reached with new "
        "evidence, 0 conceded without new evidence, 0 still open, 0 dropped.")
    section = text.split(SECTION, 1)[1]
    assert section.lstrip().startswith("**Claude made every concession (1); Codex never moved")
    assert ("- **X-1**, Claude, round 2: disagree → agree — with new evidence: "
            "`src/load.py:3` (checked, new)") in section
    assert "Who moved: Claude 1 (1× disagree → agree), Codex 0." in section


def test_claude_concedes_without_evidence(debate: Debate) -> None:
    audit, text = conceding(debate, [])
    assert audit["concessions"] == [{
        "point": "X-1", "side": "claude", "round": 2, "from": "disagree", "to": "agree",
        "evidence": [], "new_evidence": False, "flag": "conceded_without_new_evidence"}]
    summary = ("Agreement: 0 points independent, 0 agreed on first reading, 0 reached with new "
               "evidence, 1 conceded without new evidence (Claude, X-1), 0 still open, "
               "0 dropped.")
    assert audit["summary"] == summary and top_line(text) == f"_{summary}_"
    assert ("- **X-1**, Claude, round 2: disagree → agree — **conceded without new "
            "evidence**: nothing cited") in text


def test_claude_concedes_with_evidence_that_fails_its_check(debate: Debate, repo: Path,
                                                           tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("a\nb\nc\n")
    os.symlink(tmp_path / "outside.txt", repo / "src" / "linked.py")
    audit, text = conceding(debate, ["src/load.py:99", "src/store.py:2", "src/linked.py:1",
                                     "../outside.txt:1", "src/gone.py:1",
                                     "https://sqlite.org/wal.html", "pytest tests/load"])
    (concession,) = audit["concessions"]
    assert concession["flag"] == "conceded_without_new_evidence"
    assert [(e["cited"], e["kind"], e["checked"], e["new"], e["why"])
            for e in concession["evidence"]] == [
        ("src/load.py:99", "path_line", False, True, "src/load.py has 3 lines, not 99"),
        ("src/store.py:2", "path_line", True, False,
         "not new: Codex cited it on X-1 in round 1"),
        ("src/linked.py:1", "path_line", False, True, "src/linked.py: path is link"),
        ("../outside.txt:1", "path_line", False, True,
         "../outside.txt: path outside project"),
        ("src/gone.py:1", "path_line", False, True, "src/gone.py: file not found"),
        ("https://sqlite.org/wal.html", "url", False, True,
         "a URL is not checkable by the runner"),
        ("pytest tests/load", "command", False, True,
         "not in round 2's recorded activity: no command Codex ran, nor the text handed in")]
    assert "1 conceded without new evidence (Claude, X-1)" in audit["summary"]
    assert "`src/store.py:2` (not new: Codex cited it on X-1 in round 1)" in text


def test_codex_concedes_with_a_command_it_ran(debate: Debate) -> None:
    audit, text, last = run(debate, [
        {"reply": answer([cpt("X-1", "agree", "SQLite is enough", evidence=[])])},
        {"reply": answer([cpt("C-1", "disagree", "Sessions need TTL expiry",
                              evidence=["src/store.py:1"])])},
        {"mode": "commands", "command": "/bin/bash -lc 'pytest tests/test_ttl.py -q'",
         "reply": json.dumps(answer([cpt("C-1", "agree", "Sessions need TTL expiry",
                                         evidence=["pytest tests/test_ttl.py"]),
                                     cpt("C-2", "agree", "Vacuum weekly", evidence=[])],
                                    "agree", proposed="SQLite with TTL expiry."))}],
        "# Analysis\n\n- C-1: Sessions need TTL expiry.\n",
        [{"points": [pt("X-1", "agree", cls="codex_only", evidence=[]),
                     pt("C-1", "agree", "Sessions need TTL expiry", cls="claude_only",
                        evidence=[])], **GOON},
         {"points": [pt("C-1", "agree", cls="claude_only", evidence=[]),
                     pt("C-2", "agree", "Vacuum weekly", cls="claude_only", evidence=[])],
          **GOON},
         {"points": [pt("C-1", "agree", cls="claude_only", evidence=[]),
                     pt("C-2", "agree", cls="claude_only", evidence=[])],
          **agree(approve="S-1")}])
    assert last["decision"] == "consensus"
    assert audit["concessions"] == [{
        "point": "C-1", "side": "codex", "round": 3, "from": "disagree", "to": "agree",
        "evidence": [{"cited": "pytest tests/test_ttl.py", "kind": "command", "checked": True,
                      "new": True, "counts": True, "why": ""}],
        "new_evidence": True, "flag": None}]
    outcomes = {p["id"]: p["outcome"] for p in audit["points"]}
    assert outcomes == {"X-1": "agreed", "C-1": "conceded_by_codex", "C-2": "agreed"}
    assert [(s["round"], s["side"], s["stance"]) for s in audit["points"][1]["stances"]] == [
        (0, "claude", "agree"), (1, "claude", "agree"), (2, "codex", "disagree"),
        (2, "claude", "agree"), (3, "codex", "agree"), (3, "claude", "agree")]
    assert audit["moved"]["sentence"] == ("Codex made every concession (1); Claude never "
                                          "moved from a position it held.")
    assert audit["summary"] == (
        "Agreement: 0 points independent, 2 agreed on first reading, 1 reached with new "
        "evidence, 0 conceded without new evidence, 0 still open, 0 dropped.")
    assert "- **C-1**, Codex, round 3: disagree → agree — with new evidence" in text


def test_a_sealed_point_that_vanishes_is_dropped(debate: Debate) -> None:
    audit, text, _ = run(debate, [{"reply": answer(
        [cpt("X-1", "agree", "SQLite is enough", evidence=[])], "agree", proposed="SQLite.")}],
        "# Analysis\n\nC-1: SQLite is enough.\nC-2: Sessions must be encrypted at rest.\n",
        [{"points": [pt("X-1", "agree", cls="genuine_agreement", evidence=[], sealed="C-1")],
          **agree(approve="S-1")}])
    assert audit["points"][1] == row(
        "C-2", "Sessions must be encrypted at rest.", "dropped",
        [stance(0, "claude", "agree", [], "sealed analysis")], raised_in=0,
        why="Codex never answered it")
    assert audit["unchallenged"] is False
    assert audit["summary"] == (
        "Agreement: 1 point independent, 0 agreed on first reading, 0 reached with new "
        "evidence, 0 conceded without new evidence, 0 still open, 1 dropped.")
    assert ("| **C-2** Sessions must be encrypted at rest. | dropped (Codex never answered "
            "it) | 0: agree | — |") in text


def test_a_link_to_the_sealed_analysis_is_checked(debate: Debate) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree", "SQLite")])},
                        {"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    debate.seal("C-1: SQLite.\n")
    debate.wait()
    wrong = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement",
                                          sealed="C-1")], **GOON})
    assert wrong.out["error"]["code"] == "verdict_invalid"
    assert wrong.out["error"]["problems"] == [
        "X-1: a point you reached on your own (sealed C-1) cannot be one you disagree with"]
    missing = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                            sealed="C-4")], **GOON})
    assert missing.out["error"]["problems"] == [
        "X-1: your sealed analysis has no C-4 (it has C-1)"]
    ok = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")], **GOON})
    assert ok.exit_code == 0
    debate.next_round(ok.out)
    late = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                         sealed="C-1")], **GOON})
    assert late.out["error"]["problems"] == [
        "X-1: sealed links a point to your sealed analysis only in the verdict on round one"]


def test_dual_model_reports_the_same_audit(sparring: Any, fake_codex: Any, scratch: Path,
                                          repo: Path) -> None:
    sid = sparring("init", "--skill", "dual-model").out["session"]
    fake_codex.script([{"reply": answer([cpt("X-1", "agree", "SQLite is enough"),
                                         cpt("X-2", "agree", "Add an index on expiry")],
                                        "agree", proposed="SQLite, indexed.")}])
    assert sparring("start", sid, "--template", "dual-model/dispatch", "--var",
                    "QUESTION=Redis or SQLite?").exit_code == 0
    (scratch / "analysis.md").write_text("- C-1: SQLite is enough.\n- C-2: Encrypt at rest.\n")
    assert sparring("wait", sid, "--timeout", "30", "--seal",
                    str(scratch / "analysis.md")).out["status"] == "completed"
    (scratch / "v.json").write_text(json.dumps({
        "points": [pt("X-1", "agree", cls="genuine_agreement", sealed="C-1"),
                   pt("X-2", "agree", cls="codex_only")], **agree(approve="S-1")}))
    assert sparring("verdict", sid, "--file", str(scratch / "v.json")).exit_code == 0
    out = sparring("report", sid, "--out", str(repo / "dual.md")).out
    audit = json.loads(Path(out["json"]).read_text())["agreement_audit"]
    assert [(p["id"], p["outcome"], p["independent"]) for p in audit["points"]] == [
        ("X-1", "agreed", True), ("X-2", "agreed", False), ("C-2", "dropped", False)]
    summary = ("Agreement: 1 point independent, 1 agreed on first reading, 0 reached with new "
               "evidence, 0 conceded without new evidence, 0 still open, 1 dropped.")
    text = Path(out["report"]).read_text()
    assert audit["summary"] == summary and top_line(text) == f"_{summary}_"
    assert SECTION in text
