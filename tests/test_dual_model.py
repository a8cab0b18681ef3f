"""dual-model end to end: dispatch, parallel analysis, seal, compare, synthesis, continue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.debates import answer, cpt, pt, quoted, reading

SYNTHESIS = {"recommendations": ["Keep Postgres; add a read replica"],
             "open_questions": ["What is the p99 budget?"],
             "confidence": {"level": "high", "reason": "both read the same query plans"},
             "conclusion": "Postgres stays; the replica buys two years."}


def vars_file(step: dict[str, Any]) -> str:
    """The runner's file of the next round's variables, as its command names it."""
    return str(step["command"].split(" --vars-file ", 1)[1].split(" ", 1)[0])


def test_dual_model_synthesis_and_a_deeper_dive(sparring: Any, fake_codex: Any, repo: Path,
                                               scratch: Path) -> None:
    fake_codex.script([
        {"reply": answer([cpt("X-1", "agree", "Postgres handles the reads with a replica",
                              evidence=["db/plan.txt:4"]),
                          cpt("X-2", "agree", "Move search to OpenSearch")],
                         position="Keep Postgres, add a replica, move search out.")},
        {"reply": answer([cpt("X-2", "refine", "Search can stay in Postgres with trigram "
                              "indexes up to 10M rows", evidence=["db/search.sql:12"])],
                         position="Keep search in Postgres for now.")},
    ])
    sid = sparring("init", "--skill", "dual-model").out["session"]
    started = sparring("start", sid, "--template", "dual-model/dispatch", "--vars-file", "-",
                       input=b"QUESTION: Should we leave Postgres?\nCONTEXT: 40M rows\n")
    assert started.exit_code == 0, started.raw
    assert "Should we leave Postgres?" in fake_codex.stdin_of(0).decode()
    assert sparring("wait", sid).out["review"] is None  # not sealed yet
    sparring("seal", sid, input=b"C-1: a replica is enough.\n")
    first = sparring("wait", sid, "--full").out
    assert first["review"]["data"]["position"].startswith("Keep Postgres")

    verdict = {"position": "Keep Postgres with a replica; search stays for now.",
               "points": [pt("X-1", "agree", cls="genuine_agreement", sealed="C-1"),
                          pt("X-2", "disagree", cls="genuine_disagreement",
                             note="trigram indexes are enough at our size")],
               "convergence": {"state": "continue", "reason": "search is open"}}
    decided = sparring("verdict", sid, input=json.dumps(verdict).encode()).out
    assert decided["next"]["action"] == "report"
    deeper = decided["next"]["optional"]
    assert "dual-model/continue" in deeper["command"]

    report = sparring("report", sid, "--synthesis", "-", "--out", str(scratch / "dm.md"),
                      input=json.dumps(SYNTHESIS).encode()).out
    text = Path(report["report"]).read_text()
    for section in ("## Codex Position", "## Claude Position", "## Agreements (High Confidence)",
                    "## Points of Difference", "## Shared Conclusion"):
        assert section in text
    assert "Keep Postgres, add a replica" in text
    assert "trigram indexes are enough at our size" in text
    assert "Codex has not approved this text" in text

    resumed = sparring("resume", sid, "--template", "dual-model/continue",
                       "--vars-file", vars_file(deeper), "--var-file", "FOLLOW_UP=-",
                       input=b"How far does trigram search scale?")
    assert resumed.exit_code == 0, resumed.raw
    second = sparring("wait", sid, "--full").out
    assert second["round"] == 2 and second["thread_id"] == first["thread_id"]
    sent = fake_codex.stdin_of(-1).decode()
    assert "How far does trigram search scale?" in sent and "X-2" in sent
    assert second["review"]["data"]["points"][0]["stance"] == "refine"


def test_codex_proposes_the_conclusion_in_round_two_and_claude_approves_it_by_its_id(
        sparring: Any, fake_codex: Any, repo: Path) -> None:
    """The answer shows the summary Codex proposes with the id a verdict names it by, so
    the round where agreement is reached ends the debate: no --rejudge, no extra round (and,
    turned off here, no challenge turn though Claude made the only concession)."""
    (repo / "sparring.yaml").write_text("dual-model:\n  challenge: false\n")
    (repo / "db").mkdir()
    (repo / "db" / "search.sql").write_text("-- search\n" * 11 + "CREATE INDEX trgm_idx ON "
                                            "docs USING gin (body gin_trgm_ops);\n")
    fake_codex.script([
        {"reply": answer([cpt("X-1", "agree", "Add a read replica"),
                          cpt("X-2", "agree", "Move search to OpenSearch")])},
        {**reading("db/search.sql"), "reply": answer([cpt(
            "X-2", "refine", "Search stays in Postgres with trigram indexes",
            evidence=[quoted("db/search.sql:12", "USING gin (body gin_trgm_ops)")])],
            state="agree",
                         proposed="Postgres stays, with a replica (X-1) and a trigram index "
                                  "(X-2).")},
    ])
    sid = sparring("init", "--skill", "dual-model").out["session"]
    sparring("start", sid, "--template", "dual-model/dispatch", "--var", "QUESTION=Postgres?")
    sparring("wait", sid, "--timeout", "30")  # round one has ended: the seal is taken then
    first = sparring("wait", sid, "--seal", "-", input=b"C-1: a replica is enough.\n").out
    assert "summary_id" not in first["review"]  # Codex proposed nothing yet
    verdict = {"position": "Replica yes; search stays.",
               "points": [pt("X-1", "agree", cls="genuine_agreement", sealed="C-1"),
                          pt("X-2", "disagree", cls="genuine_disagreement")],
               "convergence": {"state": "continue", "reason": "search is open"}}
    dive = sparring("verdict", sid, input=json.dumps(verdict).encode()).out["next"]["optional"]
    sparring("resume", sid, "--template", "dual-model/continue", "--vars-file",
             vars_file(dive), "--var", "FOLLOW_UP=How far do trigram indexes go?")

    second = sparring("wait", sid).out
    assert second["review"]["summary_id"] == "S-1"
    approve = {"position": "Postgres stays.",  # persuaded by the index Codex showed
               "points": [pt("X-2", "agree", cls="genuine_agreement",
                             evidence=["db/search.sql:12"])],
               "convergence": {"state": "agree", "reason": "nothing is open"},
               "approve_summary": second["review"]["summary_id"]}
    decided = sparring("verdict", sid, input=json.dumps(approve).encode())

    assert decided.exit_code == 0, decided.raw
    assert decided.out["decision"] == "consensus" and decided.out["round"] == 2
    assert decided.out["summary"]["id"] == "S-1"
    assert decided.out["next"]["action"] == "report"
    assert "optional" not in decided.out["next"]  # agreed: no deeper dive to offer
    assert len([c for c in fake_codex.calls() if "exec" in c["argv"]]) == 2  # two rounds


def test_a_verdict_that_says_what_to_look_into_starts_the_deeper_dive(
        sparring: Any, fake_codex: Any, repo: Path) -> None:
    """Two calls a round: the verdict's `message` is the follow-up, and the dive starts on
    the same thread at once; without a message, the synthesis comes next."""
    fake_codex.script([
        {"reply": answer([cpt("X-1", "agree", "Move search to OpenSearch")])},
        {"reply": answer([cpt("X-1", "refine", "Trigram indexes hold to 10M rows"),
                          cpt("C-1", "agree")])},
    ])
    sid = sparring("init", "--skill", "dual-model").out["session"]
    sparring("start", sid, "--template", "dual-model/dispatch", "--var", "QUESTION=Search?")
    sparring("wait", sid, "--timeout", "30")  # round one has ended: the seal is taken then
    first = sparring("wait", sid, "--seal", "-", input=b"C-1: trigram indexes.\n").out
    verdict = {"position": "Search stays.",
               "points": [pt("X-1", "disagree", cls="genuine_disagreement"),
                          pt("C-1", "agree", cls="claude_only")],  # carried: its claim sealed
               "convergence": {"state": "continue", "reason": "search is open"},
               "message": "X-1 against C-1: how far do trigram indexes scale on 40M rows?"}

    decided = sparring("verdict", sid, input=json.dumps(verdict).encode()).out

    assert (decided["next"]["action"], decided["next"]["started"]) == ("wait", True)
    assert decided["next"]["round"] == 2
    sent = fake_codex.stdin_of(1).decode()  # round 2's codex, perhaps still starting
    assert "how far do trigram indexes scale on 40M rows?" in sent and "X-1" in sent
    assert "C-1** (raised by the other analyst): trigram indexes." in sent
    argv = fake_codex.turn_calls_once(2)[1]["argv"]
    assert "resume" in argv and sparring("status", sid).out["thread_id"] in argv
    assert first["status"] == "completed" and sparring("wait", sid).out["round"] == 2
