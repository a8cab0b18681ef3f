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

from support.debates import SYNTHESIS, Debate, answer, cpt, pt, quoted, reading
from support.debates import body as report_body

SECTION = "## How the agreement was reached"


@pytest.fixture(params=["think-about", "dual-model"])
def debate(request: pytest.FixtureRequest, sparring: Any, fake_codex: Any, scratch: Path,
           repo: Path) -> Debate:
    """Both structured workflows, each scenario: the same engine, the same audit."""
    (repo / "src").mkdir()
    (repo / "src" / "store.py").write_text("import sqlite3\nDB = 'sessions.db'\n")
    (repo / "src" / "load.py").write_text("# measured\nWRITES = 200\nPEAK = 450\n")
    # The audit is what these tests look at; the challenge turn has tests of its own.
    (repo / "sparring.yaml").write_text(f"{request.param}:\n  challenge: false\n")
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
        if result.out["decision"] == "reconsider":  # sent back once: the same, it stands
            result = debate.verdict(body)
        last = result.out
        if n < len(verdicts):
            assert debate.next_round(last)["status"] == "completed"
    out, text = debate.report(SYNTHESIS)
    return json.loads(Path(out["json"]).read_text())["agreement_audit"], text, last


def agree(proposed: str | None = None, approve: str | None = None) -> dict[str, Any]:
    return {"convergence": {"state": "agree", "reason": "settled"},
            "proposed_summary": proposed, "approve_summary": approve}


GOON = {"convergence": {"state": "continue", "reason": "open"}}


def stance(round_no: int, side: str, value: str, cited: list[tuple[str, str]], source: str
           ) -> tuple[int, str, str, list[tuple[str, str]], str]:
    """A stance as the audit's row lists it: its round, side, stance, each citation with its
    mark, and where it was said."""
    return round_no, side, value, cited, source


def stances(row: dict[str, Any]) -> list[tuple[int, str, str, list[tuple[str, str]], str]]:
    return [(s["round"], s["side"], s["stance"], [(e["cited"], e["mark"]) for e in s["evidence"]],
             s["source"]) for s in row["stances"]]


ANSWER, VERDICT = "Codex's answer", "Claude's verdict"


def outcome(row: dict[str, Any]) -> tuple[str, str, str | None, bool, str]:
    return row["id"], row["outcome"], row["conceded_by"], row["independent"], row["why"]


def top_line(text: str) -> str:
    """The report's summary line: the first line after the title."""
    return next(line for line in report_body(text).splitlines()[1:] if line.strip())


def test_both_sides_agree_independently(debate: Debate) -> None:
    audit, text, last = run(debate, [{**reading("src/load.py"), "reply": answer(
        [cpt("X-1", "agree", "SQLite handles 200 writes/s",
             evidence=[quoted("src/load.py:2", "WRITES = 200")]),
         cpt("X-2", "agree", "Expired sessions need a sweep", evidence=[])],
        "agree", proposed="SQLite (X-1) with a sweep job (X-2).")}],
        "# Analysis\n\n- C-1: SQLite is enough for our load.\n- C-2: A sweep job expires "
        "sessions.\n",
        [{"points": [pt("X-1", "agree", cls="genuine_agreement", evidence=[], sealed="C-1"),
                     pt("X-2", "agree", cls="genuine_agreement", evidence=[], sealed="C-2")],
          **agree(approve="S-1")}])
    assert last["decision"] == "unchallenged"  # the challenge turn is off here
    x1, x2 = audit["points"]
    assert outcome(x1) == ("X-1", "agreed", None, True, "")
    assert stances(x1) == [
        stance(0, "claude", "agree", [], "sealed analysis (C-1)"),
        stance(1, "codex", "agree", [('src/load.py:2 "WRITES = 200"', "verified")], ANSWER),
        stance(1, "claude", "agree", [], VERDICT)]
    assert (x1["sealed_as"], x2["sealed_as"], x2["independent"]) == ("C-1", "C-2", True)
    assert audit["counts"] == {"points": 2, "independent": 2, "agreed_on_first_reading": 0,
                               "with_new_evidence": 0, "without_new_evidence": 0,
                               "rejected": 0, "open": 0, "dropped": 0}
    assert audit["concessions"] == [] and audit["unchallenged"] is True
    assert audit["independence"]["state"] == "checked" and audit["notes"] == []
    assert audit["independence"]["seen"] == []
    assert "Independence checked: Claude sealed its analysis after Codex's round one" in text
    summary = ("Agreement: 2 points independent, 0 agreed on first reading, 0 reached with new "
               "evidence, 0 conceded without new evidence, 0 rejected by both, 0 still open, "
               "0 dropped. Unchallenged: no point was ever disputed.")
    assert audit["summary"] == summary and top_line(text) == f"_{summary}_"
    assert "**Outcome: UNCHALLENGED** — no open point remains" in text
    section = text.split(SECTION, 1)[1]
    assert "**independent** were reached by both sides on their own" in section
    assert "the strongest kind of\nagreement" in section
    assert ("| **X-1** SQLite handles 200 writes/s _(sealed as C-1)_ | agreed, **independent** |"
            " 0: agree · 1: agree | 1: agree (`src/load.py:2 \"WRITES = 200\"` [verified]) |"
            ) in section
    assert "**Unchallenged**" in section and "no claim was tested" in section


def test_everything_agreed_in_round_one_is_unchallenged(debate: Debate) -> None:
    audit, text, last = run(debate, [{"reply": answer(
        [cpt("X-1", "agree", "SQLite is enough"), cpt("X-2", "agree", "No Redis")],
        "agree", proposed="SQLite (X-1), no Redis (X-2).")}],
        "# Analysis\n\nSQLite, probably; nothing numbered.\n",
        [{"points": [pt("X-1", "agree", cls="codex_only", evidence=[]),
                     pt("X-2", "agree", cls="codex_only", evidence=[])],
          **agree(approve="S-1")}])
    assert [(p["id"], p["outcome"], p["independent"]) for p in audit["points"]] == [
        ("X-1", "agreed", False), ("X-2", "agreed", False)]
    assert audit["unchallenged"] is True and audit["moved"]["sentence"] is None
    assert audit["summary"] == (
        "Agreement: 0 points independent, 2 agreed on first reading, 0 reached with new "
        "evidence, 0 conceded without new evidence, 0 rejected by both, 0 still open, "
        "0 dropped. Unchallenged: no point was ever disputed.")
    assert last["decision"] == "unchallenged"
    assert "**Unchallenged**: no point was ever disputed" in text
    assert "were reached by both sides on their own" not in text


def conceding(debate: Debate, evidence: list[Any], then: str = "consensus"
              ) -> tuple[dict[str, Any], str]:
    """Claude disagrees with X-1 in round one, then agrees citing `evidence`."""
    audit, text, last = run(debate, [
        {**reading("src/store.py"), "reply": answer([cpt(
            "X-1", "agree", "Peak load stays under 500 writes/s",
            evidence=[quoted("src/store.py:2", "DB = 'sessions.db'")])])},
        {**reading("src/store.py"), "reply": answer([cpt(
            "X-1", "agree", "Peak load stays under 500 writes/s",
            evidence=[quoted("src/store.py:2", "DB = 'sessions.db'")])], "agree",
            proposed="SQLite holds the peak (X-1).")}],
        "# Analysis\n\nNo numbered points.\n",
        [{"points": [pt("X-1", "disagree", cls="genuine_disagreement", evidence=[],
                        note="the peak is higher than that")], **GOON},
         {"points": [pt("X-1", "agree", cls="genuine_agreement", evidence=evidence)],
          **agree(approve="S-1")}])
    assert last["decision"] == then, last
    return audit, text


def test_claude_concedes_with_new_evidence_that_exists(debate: Debate) -> None:
    audit, text = conceding(debate, [quoted("src/load.py:3", "PEAK = 450")])
    (x1,) = audit["points"]
    assert outcome(x1) == ("X-1", "agreed", "claude", False, "")
    assert stances(x1) == [
        stance(1, "codex", "agree", [("src/store.py:2 \"DB = 'sessions.db'\"", "verified")],
               ANSWER),
        stance(1, "claude", "disagree", [], VERDICT),
        stance(2, "codex", "agree", [("src/store.py:2 \"DB = 'sessions.db'\"", "verified")],
               ANSWER),
        stance(2, "claude", "agree", [('src/load.py:3 "PEAK = 450"', "verified")], VERDICT)]
    (concession,) = audit["concessions"]
    assert {k: concession[k] for k in ("point", "side", "round", "from", "to", "flag")} == {
        "point": "X-1", "side": "claude", "round": 2, "from": "disagree", "to": "agree",
        "flag": None}
    assert [(e["cited"], e["mark"], e["new"], e["counts"]) for e in concession["evidence"]] == [
        ('src/load.py:3 "PEAK = 450"', "verified", True, True)]
    assert audit["moved"]["sentence"] == ("Claude made every concession (1); Codex never moved "
                                          "from a position it held.")
    assert audit["unchallenged"] is False
    assert audit["summary"] == (
        "Agreement: 0 points independent, 0 agreed on first reading, 1 reached with new "
        "evidence, 0 conceded without new evidence, 0 rejected by both, 0 still open, "
        "0 dropped.")
    section = text.split(SECTION, 1)[1]
    assert section.lstrip().startswith("**Claude made every concession (1); Codex never moved")
    assert ("- **X-1**, Claude, round 2: disagree → agree — with new evidence: "
            '`src/load.py:3 "PEAK = 450"` [verified] (new)') in section
    assert "Who moved: Claude 1 (1× disagree → agree), Codex 0." in section
    assert ('- **X-1**, Claude (disagree → agree, round 2): "the peak is higher than that"'
            in section)


def test_claude_concedes_without_evidence(debate: Debate) -> None:
    audit, text = conceding(debate, [], then="contested")
    (concession,) = audit["concessions"]
    assert (concession["evidence"], concession["new_evidence"], concession["flag"]) == (
        [], False, "conceded_without_new_evidence")
    summary = ("Agreement: 0 points independent, 0 agreed on first reading, 0 reached with new "
               "evidence, 1 conceded without new evidence (Claude, X-1), 0 rejected by both, "
               "0 still open, 0 dropped.")
    assert audit["summary"] == summary and top_line(text) == f"_{summary}_"
    assert ("- **X-1**, Claude, round 2: disagree → agree — **conceded without new "
            "evidence**: nothing cited") in text
    assert ("**Outcome: CONTESTED** — no open point remains and both sides approved S-1 "
            "(proposed by Codex in round 2); contested: X-1 (settled by Claude's concession "
            "without new evidence)") in text
    assert audit["contested"] == [{"point": "X-1", "why": "settled by Claude's concession "
                                   "without new evidence"}]


def test_claude_concedes_with_evidence_that_fails_its_check(debate: Debate, repo: Path,
                                                           tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("a\nb\nc\n")
    os.symlink(tmp_path / "outside.txt", repo / "src" / "linked.py")
    audit, text = conceding(debate, [
        quoted("src/load.py:99", "PEAK"), "src/store.py:2", quoted("src/linked.py:1", "a"),
        quoted("../outside.txt:1", "a b c"), quoted("src/gone.py:1", "gone"),
        quoted("src/load.py:1", "PEAK = 9000"), "src/load.py:2",
        "https://sqlite.org/wal.html", "pytest tests/load"], then="contested")
    (concession,) = audit["concessions"]
    assert concession["flag"] == "conceded_without_new_evidence"
    assert [(e["cited"], e["mark"], e["new"], e["why"]) for e in concession["evidence"]] == [
        ('src/load.py:99 "PEAK"', "not_matching", True, "src/load.py has 3 lines, not 99"),
        ("src/store.py:2", "verified", False,
         "not new: it was on the record for this point before the move"),
        ('src/linked.py:1 "a"', "not_matching", True, "src/linked.py: path is link"),
        ('../outside.txt:1 "a b c"', "not_matching", True,
         "../outside.txt: path outside project"),
        ('src/gone.py:1 "gone"', "not_matching", True, "src/gone.py: file not found"),
        ('src/load.py:1 "PEAK = 9000"', "not_matching", True,
         "the quote is not within 2 lines of src/load.py:1"),
        ("src/load.py:2", "unquoted", True, "no quote of the line (or one too short to check)"),
        ("https://sqlite.org/wal.html", "unchecked", True,
         "not in round 2's recorded activity (no command or search of Codex's, nor the text "
         "handed in)"),
        ("pytest tests/load", "unchecked", True,
         "not in round 2's recorded activity (no command or search of Codex's, nor the text "
         "handed in)")]
    assert "1 conceded without new evidence (Claude, X-1)" in audit["summary"]
    assert ("`src/store.py:2` [verified] (not new: it was on the record for this point before "
            "the move)") in text
    assert "`src/load.py:1 \"PEAK = 9000\"` [quote does not match]" in text


def test_codex_concedes_with_a_command_it_ran(debate: Debate) -> None:
    audit, text, last = run(debate, [
        {"reply": answer([cpt("X-1", "agree", "SQLite is enough", evidence=[])])},
        {**reading("src/store.py"), "reply": answer([cpt(
            "C-1", "disagree", "Sessions need TTL expiry",
            evidence=[quoted("src/store.py:1", "import sqlite3")])])},
        {"mode": "commands", "command": "/bin/bash -lc 'pytest tests/test_ttl.py -q'",
         "reply": json.dumps(answer([cpt("C-1", "agree", "Sessions need TTL expiry",
                                         evidence=["pytest tests/test_ttl.py"]),
                                     cpt("C-2", "agree", "Vacuum weekly", evidence=[])],
                                    "agree", proposed="SQLite (X-1) with TTL expiry (C-1)."))}],
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
    (concession,) = audit["concessions"]
    assert {k: concession[k] for k in ("point", "side", "round", "from", "to", "flag")} == {
        "point": "C-1", "side": "codex", "round": 3, "from": "disagree", "to": "agree",
        "flag": None}
    assert [(e["cited"], e["mark"], e["seen"], e["counts"]) for e in concession["evidence"]] == [
        ("pytest tests/test_ttl.py", "unchecked", True, True)]
    assert [outcome(p)[:3] for p in audit["points"]] == [
        ("X-1", "agreed", None), ("C-1", "agreed", "codex"), ("C-2", "agreed", None)]
    assert [(s[0], s[1], s[2]) for s in stances(audit["points"][1])] == [
        (0, "claude", "agree"), (1, "claude", "agree"), (2, "codex", "disagree"),
        (2, "claude", "agree"), (3, "codex", "agree"), (3, "claude", "agree")]
    assert audit["moved"]["sentence"] == ("Codex made every concession (1); Claude never "
                                          "moved from a position it held.")
    assert audit["summary"] == (
        "Agreement: 0 points independent, 2 agreed on first reading, 1 reached with new "
        "evidence, 0 conceded without new evidence, 0 rejected by both, 0 still open, "
        "0 dropped.")
    assert "- **C-1**, Codex, round 3: disagree → agree — with new evidence" in text
    assert not any(c["purpose"] == "reconsider" for c in debate.sparring(
        "status", debate.sid, "--full").out.get("turns", []))


def test_every_sealed_point_is_answered_in_round_one(debate: Debate, repo: Path) -> None:
    debate.fake.script([{"reply": answer(
        [cpt("X-1", "agree", "SQLite is enough", evidence=[])], "agree",
        proposed="SQLite (X-1).")}])
    debate.start()
    assert debate.seal("# Analysis\n\nC-1: SQLite is enough.\nC-2: Sessions must be "
                       "encrypted at rest.\n").exit_code == 0
    debate.wait()
    before = (repo / ".sparring" / "sessions" / debate.sid / "session.json").read_bytes()
    left_out = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                             evidence=[], sealed="C-1")],
                               **agree(approve="S-1")})
    assert left_out.error_code == "sealed_point_unanswered"
    assert left_out.out["error"]["points"] == ["C-2"]
    assert "C-2" in left_out.out["error"]["message"]
    assert (repo / ".sparring" / "sessions" / debate.sid / "session.json").read_bytes() == \
        before, "nothing recorded"
    withdrawn = debate.verdict({"points": [
        pt("X-1", "agree", cls="genuine_agreement", evidence=[], sealed="C-1"),
        pt("C-2", "withdraw", cls="claude_only", evidence=[],
           note="out of scope: the question is the store, not its encryption")],
        **agree(approve="S-1")})
    assert withdrawn.exit_code == 0, withdrawn.raw
    out, text = debate.report(SYNTHESIS)
    audit = json.loads(Path(out["json"]).read_text())["agreement_audit"]
    c2 = audit["points"][1]
    assert (c2["id"], c2["claim"], c2["outcome"]) == (
        "C-2", "Sessions must be encrypted at rest.", "withdrawn")
    assert audit["counts"]["rejected"] == 1 and audit["contested"] == []
    assert "~~Sessions must be encrypted at rest.~~" in text


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
        "X-1: a point you reached on your own (sealed C-1) cannot be one you reject"]
    missing = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                            sealed="C-4")], **GOON})
    assert missing.error_code == "sealed_point_unanswered"  # and C-1 is answered by none
    missing = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                            sealed="C-4"),
                                         pt("C-1", "agree", cls="claude_only")], **GOON})
    assert missing.out["error"]["problems"] == [
        "X-1: your sealed analysis has no C-4 (it has C-1)"]
    ok = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                       sealed="C-1")], **GOON})
    assert ok.exit_code == 0
    debate.next_round(ok.out)
    late = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                         sealed="C-1")], **GOON})
    assert late.out["error"]["problems"] == [
        "X-1: sealed links a point to your sealed analysis only in the verdict on round one"]


def test_dual_model_reports_the_same_audit(sparring: Any, fake_codex: Any, scratch: Path,
                                          repo: Path) -> None:
    (repo / "sparring.yaml").write_text("dual-model:\n  challenge: false\n")
    sid = sparring("init", "--skill", "dual-model").out["session"]
    fake_codex.script([{"reply": answer([cpt("X-1", "agree", "SQLite is enough"),
                                         cpt("X-2", "agree", "Add an index on expiry")],
                                        "agree", proposed="SQLite (X-1), indexed (X-2).")}])
    assert sparring("start", sid, "--template", "dual-model/dispatch", "--var",
                    "QUESTION=Redis or SQLite?").exit_code == 0
    assert sparring("wait", sid, "--timeout", "30").out["review_withheld"]  # round one ended
    (scratch / "analysis.md").write_text("- C-1: SQLite is enough.\n- C-2: Encrypt at rest.\n")
    assert sparring("wait", sid, "--timeout", "30", "--seal",
                    str(scratch / "analysis.md")).out["status"] == "completed"
    (scratch / "v.json").write_text(json.dumps({
        "points": [pt("X-1", "agree", cls="genuine_agreement", sealed="C-1"),
                   pt("X-2", "agree", cls="codex_only"),
                   pt("C-2", "withdraw", cls="claude_only", note="not what was asked")],
        **agree(approve="S-1")}))
    assert sparring("verdict", sid, "--file", str(scratch / "v.json")).exit_code == 0
    out = sparring("report", sid, "--out", str(repo / "dual.md")).out
    audit = json.loads(Path(out["json"]).read_text())["agreement_audit"]
    assert [(p["id"], p["outcome"], p["independent"]) for p in audit["points"]] == [
        ("X-1", "agreed", True), ("X-2", "agreed", False), ("C-2", "withdrawn", False)]
    summary = ("Agreement: 1 point independent, 1 agreed on first reading, 0 reached with new "
               "evidence, 0 conceded without new evidence, 1 rejected by both, 0 still open, "
               "0 dropped. Unchallenged: no point was ever disputed.")
    text = Path(out["report"]).read_text()
    assert audit["summary"] == summary and top_line(text) == f"_{summary}_"
    assert SECTION in text and "**Outcome: UNCHALLENGED**" in text
