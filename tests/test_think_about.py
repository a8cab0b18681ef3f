"""think-about end to end through the CLI, against the fake codex scripted with answers:
sealed independence, verdicts, the decision computed by the runner, and the report."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from support.debates import (
    QUESTION,
    SYNTHESIS,
    Debate,
    answer,
    body,
    cpt,
    pt,
    quoted,
    reading,
)


@pytest.fixture
def debate(sparring: Any, fake_codex: Any, scratch: Path) -> Debate:
    return Debate(sparring, fake_codex, scratch)


REDIS_TF = 'resource "redis_cluster" "sessions" {\n  nodes = 3\n}\n'


def test_consensus_reached_honestly(debate: Debate, repo: Path) -> None:
    (repo / "infra").mkdir()
    (repo / "infra" / "redis.tf").write_text(REDIS_TF)
    (repo / "sparring.yaml").write_text("think-about:\n  challenge: false\n")
    debate.fake.script([
        {"reply": answer([cpt("X-1", "agree", "SQLite handles our 200 writes/s"),
                          cpt("X-2", "agree", "Redis adds an operational dependency")])},
        {**reading("infra/redis.tf"), "reply": answer(
            [cpt("X-1", "agree"), cpt("C-1", "agree", evidence=["docs/ttl.md:3"]),
             cpt("X-2", "agree", evidence=[quoted("infra/redis.tf:1", 'resource "redis_cluster"')],
                 note="it is a cluster of three we would run ourselves")],
            "agree", proposed="Use SQLite (X-1) with a TTL sweep (C-1); revisit at 2k writes/s.")},
    ])
    debate.start()
    withheld = debate.wait()
    assert withheld["status"] == "completed"
    assert withheld["review"] is None and "--seal" in withheld["review_withheld"]
    assert debate.verdict({"points": [], "convergence": {"state": "continue", "reason": "r"}}
                          ).out["error"]["code"] == "seal_required"
    assert debate.seal().exit_code == 0
    revealed = debate.wait()
    assert revealed["review"]["data"]["points"][0]["id"] == "X-1"

    first = debate.verdict({
        "position": "SQLite, with expiry handled",
        "points": [pt("X-1", "agree", cls="genuine_agreement"),
                   pt("X-2", "disagree", cls="genuine_disagreement", note="we run Redis already"),
                   pt("C-1", "agree", "Sessions need TTL expiry", cls="claude_only")],
        "convergence": {"state": "continue", "reason": "X-2 open"},
        "message": "X-2: is Redis really a new dependency?"})
    assert first.exit_code == 0, first.raw
    assert first.out["decision"] == "continue"
    assert {p["id"] for p in first.out["open_points"]} == {"X-2", "C-1"}
    prompt_vars = json.loads(Path(".sparring", "sessions", debate.sid,
                                  "round-2-vars.json").read_text())
    assert "C-1" in prompt_vars["NEW_PERSPECTIVES"] and "X-2" in prompt_vars["DISAGREED_POINTS"]

    second = debate.next_round(first.out)
    assert second["status"] == "completed" and second["round"] == 2, second
    sent = debate.fake.stdin_of(-1).decode()
    assert "is Redis really a new dependency?" in sent and "Sessions need TTL expiry" in sent
    assert "Should sessions live" not in sent, "round two carries the new state, not round one"

    # Claude concedes X-2, citing the line Codex brought in round two: new since Claude
    # disagreed, and it checks out (Codex opened the file; the quote is there).
    final = debate.verdict({
        "points": [pt("X-1", "agree", cls="genuine_agreement"),
                   pt("C-1", "agree", cls="genuine_agreement"),
                   pt("X-2", "agree", cls="genuine_agreement", evidence=["infra/redis.tf:1"])],
        "convergence": {"state": "agree", "reason": "settled"}, "approve_summary": "S-1"})
    assert final.out["decision"] == "consensus", json.dumps(final.out)
    assert final.out["summary"]["text"].startswith("Use SQLite (X-1) with a TTL sweep")
    assert final.out["next"]["action"] == "report"

    out, text = debate.report(SYNTHESIS)
    assert out["outcome"] == "consensus" and out["degraded"] is False
    assert "DEGRADED" not in text
    for section in ("## Consensus Points", "## Rejected by Both", "## Remaining Disagreements",
                    "## Recommendations", "## Consolidated Sources", "## Open Questions",
                    "## Confidence"):
        assert section in text
    assert "Use SQLite with WAL" in text
    assert '`infra/redis.tf:1 "resource \\"redis_cluster\\""`' not in text  # never escaped
    assert 'infra/redis.tf:1 "resource "redis_cluster""` [verified]' in text
    assert "with new evidence: `infra/redis.tf:1" in text
    sources = text.split("## Consolidated Sources", 1)[1].split("\n## ", 1)[0].strip()
    assert len(sources.splitlines()) > 1, sources
    assert all(line.startswith("- `") and line.count("`") == 2
               for line in sources.splitlines()), "one source a line, each with its marks"
    assert "Seal before reveal: yes" in text
    assert QUESTION in body(text).splitlines()[0]
    data = json.loads(Path(out["json"]).read_text())
    assert [r["round"] for r in data["rounds"]] == [1, 2]
    assert all(r["input_tokens"] > 0 for r in data["rounds"])
    (concession,) = data["agreement_audit"]["concessions"]
    assert (concession["side"], concession["point"], concession["flag"]) == ("claude", "X-2", None)
    assert data["agreement_audit"]["minority"][0]["argument"] == "we run Redis already"


def test_one_sided_agreement_is_refused(debate: Debate) -> None:
    debate.fake.script([
        {"reply": answer([cpt("X-1", "agree", "SQLite handles the load")])},
        {"reply": answer([cpt("X-1", "withdraw", note="the write load is too high",
                              evidence=["load/report.md:12"])],
                         position="On reflection the write load is too high")},
        {"reply": answer([cpt("X-1", "withdraw", note="the write load is too high",
                              evidence=["load/report.md:12"])])}])
    debate.start()
    debate.seal()
    debate.wait()
    forged = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                             "convergence": {"state": "agree", "reason": "r"},
                             "approve_summary": "S-9"})
    assert forged.out["error"]["code"] == "verdict_invalid"
    assert "S-9 is not a proposed summary" in forged.out["error"]["message"]
    claimed = debate.verdict({
        "points": [pt("X-1", "agree", cls="genuine_agreement")],
        "convergence": {"state": "agree", "reason": "we agree"},
        "proposed_summary": "We agree on SQLite (X-1)."})
    assert claimed.out["decision"] == "continue"  # Claude alone cannot end it
    assert claimed.out["kind"] == "confirmation"
    assert claimed.out["next"]["kind"] == "confirmation"
    confirmation = debate.next_round(claimed.out)
    asked = debate.fake.stdin_of(-1).decode()
    assert "CONSENSUS CHECK" in asked and "1. [X-1] We agree on SQLite (X-1)." in asked
    assert confirmation["status"] == "completed"
    # Codex gave its own point up: Claude still holds it, so the sides differ and X-1 is
    # open; Claude alone approving the summary ends nothing.
    lone = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                           "convergence": {"state": "agree", "reason": "r"},
                           "approve_summary": "S-1"})
    assert lone.out["decision"] != "consensus"
    assert [p["id"] for p in lone.out["open_points"]] == ["X-1"]


def test_same_disagreements_twice_is_a_stalemate_with_a_decision_table(
        debate: Debate) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree", "Redis for pub/sub")])},
                        {"reply": answer([cpt("X-1", "agree", evidence=["bus.py:4"])])}])
    debate.start()
    debate.seal()
    debate.wait()
    verdict = {"points": [pt("X-1", "disagree", cls="genuine_disagreement",
                             note="pub/sub is not needed")],
               "convergence": {"state": "continue", "reason": "r"}}
    first = debate.verdict(verdict)
    debate.next_round(first.out)
    verdict["points"][0]["evidence"] = ["events.py:7"]
    second = debate.verdict(verdict)
    assert second.out["decision"] == "stalemate"
    assert "two rounds running" in second.out["reasons"][0]
    out, text = debate.report(SYNTHESIS)
    assert out["outcome"] == "stalemate"
    assert "| Point | Claude | Codex |" in text and "pub/sub is not needed" in text


def test_the_round_cap_ends_in_stalemate(debate: Debate, repo: Path) -> None:
    (repo / "sparring.yaml").write_text("think-about:\n  max_rounds: 2\n")
    (repo / "load.md").write_text("peak: 200 writes/s\np99: 40 ms\nreplicas: 3\n")
    debate.fake.script([
        {**reading("load.md"), "reply": answer([cpt(
            "X-1", "agree", evidence=[quoted("load.md:1", "peak: 200 writes/s")])])},
        {**reading("load.md"), "reply": answer([
            cpt("X-1", "agree", evidence=[quoted("load.md:2", "p99: 40 ms")]),
            cpt("X-2", "agree")])}])
    debate.start()
    debate.seal()
    debate.wait()
    first = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement",
                                          evidence=[quoted("load.md:3", "replicas: 3")])],
                            "convergence": {"state": "continue", "reason": "r"}})
    debate.next_round(first.out)
    # new evidence that checks out each round, and the open points changed: only the cap
    second = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement"),
                                        pt("X-2", "disagree", cls="genuine_disagreement")],
                             "convergence": {"state": "continue", "reason": "r"}})
    assert second.out["decision"] == "stalemate"
    assert "round cap (2)" in second.out["reasons"][0]


def test_invalid_answer_is_asked_again_once_then_the_round_fails(debate: Debate) -> None:
    debate.fake.script(["I think SQLite is fine.", {"reply": {"position": "no points field"}}])
    debate.start()
    debate.seal()
    out = debate.wait()
    assert out["status"] == "failed" and out["purpose"] == "reask"
    assert out["error"]["code"] == "invalid_answer"
    assert out["review"] is None
    calls = debate.fake.turn_calls()
    assert len(calls) == 2 and "resume" in calls[1]["argv"]
    assert "--output-schema" in calls[0]["argv"] and "--output-schema" in calls[1]["argv"]
    assert "does not match the JSON schema" in debate.fake.stdin_of(-1).decode()
    refused = debate.verdict({"points": [], "convergence": {"state": "agree", "reason": "r"}})
    assert refused.out["error"]["code"] == "invalid_transition"
    report, text = debate.report()
    assert report["degraded"] is True and report["outcome"].startswith("incomplete")
    assert "invalid_answer" in text


def test_a_reask_that_succeeds_completes_the_round(debate: Debate) -> None:
    debate.fake.script(["```\nnot json\n```", {"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    debate.seal()
    out = debate.wait()
    assert out["status"] == "completed" and out["purpose"] == "reask" and out["round"] == 1
    assert out["review"]["data"]["points"][0]["id"] == "X-1"


def test_codex_failing_mid_debate_gives_a_degraded_report(
        debate: Debate, monkeypatch: pytest.MonkeyPatch) -> None:
    # Codex fails at once; the start window must outlast a busy machine's start of the fake.
    monkeypatch.setenv("SPARRING_STARTSECS", "10")
    debate.fake.script([{"reply": answer([cpt("X-1", "agree", "claim")])},
                        {"mode": "rate_limited"}])
    debate.start()
    debate.seal()
    debate.wait()
    first = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement")],
                            "convergence": {"state": "continue", "reason": "r"}})
    assert first.exit_code == 0, "the verdict stands even if the next round cannot start"
    step = first.out["next"]
    assert step["action"] == "resume" and step["started"] is False
    assert step["error"]["code"] == "rate_limited" and "--vars-file" in step["command"]
    assert debate.wait()["status"] == "failed"
    out, text = debate.report(SYNTHESIS)
    assert out["degraded"] is True
    assert body(text).splitlines()[2].startswith("> **DEGRADED**")
    assert "rate_limited" in text and "round 2" in text


def test_verdict_must_classify_every_codex_point(debate: Debate) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree"), cpt("X-2", "agree")])}])
    debate.start()
    debate.seal()
    debate.wait()
    partial = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                              "convergence": {"state": "continue", "reason": "r"}})
    assert partial.out["error"]["code"] == "verdict_invalid"
    assert "X-2 are not classified" in partial.out["error"]["message"]
    incoherent = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_agreement"),
                                            pt("X-2", "agree", cls="codex_only"),
                                            pt("C-1", "agree", cls="claude_only")],
                                 "convergence": {"state": "continue", "reason": "r"}})
    problems = incoherent.out["error"]["problems"]
    assert any("X-1: class genuine_agreement needs stance agree" in p for p in problems)
    assert any("C-1: a new point needs its claim" in p for p in problems)
    not_json = debate.sparring("verdict", debate.sid, input=b"{oops")
    assert not_json.out["error"]["code"] == "verdict_invalid"


def test_a_seal_is_final_and_must_come_before_the_reveal(debate: Debate) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    assert debate.wait()["review"] is None
    assert debate.seal("first").exit_code == 0
    again = debate.seal("first")
    assert again.exit_code == 0 and again.out["already_sealed"] is True
    assert debate.seal("second").out["error"]["code"] == "already_sealed"
    assert debate.seal(" ").out["error"]["code"] == "input_empty"
    debate.wait()
    _, text = debate.report()
    assert "Seal before reveal: yes" in text


def test_the_reveal_is_recorded_by_the_verb_that_shows_the_answer(
        debate: Debate, repo: Path) -> None:
    # Codex's turn ends on its own, then Claude seals: start, stop and the seal never show
    # the answer, so they record no reveal (the verdict needs one); the first wait does.
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")])}])
    started = debate.start()
    assert started.get("review") is None
    record = repo / ".sparring" / "sessions" / debate.sid / "session.json"
    deadline = time.monotonic() + 30
    while json.loads(record.read_text())["turns"][-1]["status"] != "completed":
        assert time.monotonic() < deadline, "the turn did not end"
        time.sleep(0.05)
    assert debate.sparring("stop", debate.sid).exit_code == 0
    assert debate.sparring("seal", debate.sid, "--file", debate.file(
        "analysis.md", "# Mine\nC-1: sessions need TTLs.\n")).exit_code == 0
    assert json.loads(record.read_text())["engine"]["revealed_at"] is None
    early = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                            "convergence": {"state": "agree", "reason": "r"}})
    assert early.out["error"]["code"] == "not_revealed"
    shown = debate.wait()
    assert shown["review"]["data"]["position"] == "SQLite is enough."
    assert json.loads(record.read_text())["engine"]["revealed_at"] is not None


def test_reasoning_is_withheld_until_the_seal(debate: Debate) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")]),
                         "reasoning": "**Leaning** towards SQLite"}])
    debate.start()
    out = debate.wait("--full")
    texts = [a.get("text", "") for a in out["activities"] if a["kind"] == "reasoning"]
    assert texts and all("Leaning" not in t for t in texts)
    debate.seal()
    shown = debate.wait("--full")
    assert any("Leaning" in a.get("text", "") for a in shown["activities"])


def test_a_guard_violation_stops_the_loop(debate: Debate, repo: Path) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")]), "mode": "writes_file",
                         "write_path": "app.py", "write_content": "print('changed')\n"}])
    debate.start()
    debate.seal()
    out = debate.wait()
    assert out["status"] == "completed"  # the turn's own status stays truthful
    assert out["guard"]["clean"] is False
    assert out["guard"]["changed"] == [{"path": "app.py", "change": "modified"}]
    assert out["guard"]["violation"]["code"] == "guard_violation"
    decided = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement")],
                              "convergence": {"state": "continue", "reason": "r"}})
    assert decided.out["next"]["action"] == "stop"
    assert "app.py" in decided.out["next"]["reason"]
    refused = debate.sparring("resume", debate.sid, input=b"go on")
    assert refused.out["error"]["code"] == "guard_violation"
    report, text = debate.report()
    assert report["degraded"] is True and "`app.py` (modified)" in text
    reverted = debate.sparring("guard", "revert", "--baseline", out["guard"]["baseline"])
    assert reverted.exit_code == 0
    assert (repo / "app.py").read_text() == "print('hello')\n"


def test_a_failed_round_is_asked_again_not_skipped(debate: Debate,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # The next round's codex crashes at once; the start window must outlast a busy machine's
    # start of the fake.
    monkeypatch.setenv("SPARRING_STARTSECS", "10")
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")])},
                        {"mode": "crash"},
                        {"reply": answer([cpt("X-1", "agree"), cpt("X-2", "agree", "new")])}])
    debate.start()
    debate.seal()
    debate.wait()
    first = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement")],
                            "convergence": {"state": "continue", "reason": "r"}})
    assert debate.wait()["status"] == "failed"
    # The round-2 variables the verdict wrote, as the command it printed names them.
    assert f"--vars-file .sparring/sessions/{debate.sid}/round-2-vars.json" in \
        first.out["next"]["command"]
    again = debate.sparring("resume", debate.sid, "--template", "think-about/round2+",
                            "--vars-file", f".sparring/sessions/{debate.sid}/round-2-vars.json")
    assert again.exit_code == 0, again.raw
    out = debate.wait()
    assert out["status"] == "completed" and out["round"] == 2, "round 2 again, not round 3"
    judged = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement"),
                                        pt("X-2", "agree", cls="codex_only")],
                             "convergence": {"state": "continue", "reason": "r"}})
    assert judged.exit_code == 0, judged.raw
    assert judged.out["round"] == 2 and "X-2" in str(judged.out["agreed_points"])


def test_nothing_goes_on_and_nothing_is_shown_before_the_seal(debate: Debate,
                                                              repo: Path) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    assert debate.wait()["review"] is None
    refused = debate.sparring("resume", debate.sid, input=b"next round")
    assert refused.out["error"]["code"] == "seal_required"
    early = debate.sparring("report", debate.sid, "--out", str(repo / "early.md"))
    assert early.out["error"]["code"] == "seal_required"
    assert not (repo / "early.md").exists()


def test_reports_never_replace_another_sessions_record(debate: Debate, sparring: Any,
                                                       fake_codex: Any, repo: Path,
                                                       scratch: Path) -> None:
    paths = []
    for _ in range(2):
        run = Debate(sparring, fake_codex, scratch)
        fake_codex.script([{"reply": answer([cpt("X-1", "agree")])}])
        run.start()
        run.seal()
        run.wait()
        out = sparring("report", run.sid).out
        paths.append(Path(out["report"]))
    assert paths[0] != paths[1] and paths[1].name.endswith("-2.md")
    assert paths[0].parent == repo / "docs" / "decisions"
    again = sparring("report", run.sid).out  # the same session may rewrite its own record
    assert Path(again["report"]) == paths[1]
    foreign = repo / "notes.md"
    foreign.write_text("mine")
    refused = sparring("report", run.sid, "--out", str(foreign))
    assert refused.out["error"]["code"] == "report_exists" and foreign.read_text() == "mine"


def test_a_guard_violation_is_not_hidden_by_a_reask(debate: Debate, repo: Path) -> None:
    debate.fake.script([{"mode": "writes_file", "write_path": "app.py", "reply": "not json"},
                        {"reply": answer([cpt("X-1", "agree")])}])
    debate.sparring("start", debate.sid, "--template", "think-about/round1",
                    "--var", "QUESTION=q")
    debate.seal()
    out = debate.wait()
    assert out["error"]["code"] == "invalid_answer" and out["purpose"] == "round"
    assert out["guard"]["violation"] is not None, "no re-ask: the user decides first"
    assert "no re-ask" in out["error"]["hint"]
    assert len(debate.fake.turn_calls()) == 1


def test_a_verdict_prints_one_row_per_open_point_and_everything_with_full(
        debate: Debate) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree"), cpt("X-2", "agree", "new")])},
                        {"reply": answer([cpt("X-1", "agree"), cpt("X-2", "agree")])}])
    debate.start()
    debate.seal()
    debate.wait()
    body = {"points": [pt("X-1", "agree", cls="genuine_agreement"),
                       pt("X-2", "disagree", cls="genuine_disagreement", note="too slow")],
            "convergence": {"state": "continue", "reason": "r"}}
    brief = debate.verdict(body).out
    assert brief["agreed_points"] == ["X-1"]
    assert brief["open_points"] == [{"id": "X-2", "claude": "disagree", "codex": "agree"}]
    assert "summary" not in brief and "concessions_without_evidence" not in brief
    assert brief["next"]["action"] == "wait" and brief["next"]["round"] == 2
    assert debate.wait()["round"] == 2
    full = debate.sparring("verdict", debate.sid, "--full",
                           "--file", debate.file("v-full.json", body)).out
    assert full["open_points"][0]["claude"]["evidence"] and full["open_points"][0]["note"]
    assert full["agreed_points"][0]["codex"]["stance"] == "agree"


def test_wait_can_seal_first_in_the_same_call(debate: Debate) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    analysis = debate.file("analysis.md", "# Mine\nC-1: TTLs.\n")
    out = debate.sparring("wait", debate.sid, "--seal", analysis, "--timeout", "30").out
    assert out["sealed"] is True and out["review"]["data"]["points"][0]["id"] == "X-1"
    assert debate.seal("# Mine\nC-1: TTLs.\n").out["already_sealed"] is True
    refused = debate.sparring("wait", debate.sid, "--seal", debate.file("b.md", "other"))
    assert refused.out["error"]["code"] == "already_sealed" and "review" not in refused.out


def test_a_failed_first_round_shows_its_failure_first_and_nothing_withheld(
        debate: Debate) -> None:
    """Before the seal, a round that failed has no answer to withhold: what went wrong and
    what to do come right after the status, not a request to seal."""
    debate.fake.mode("crash", event_delay="0.3")
    debate.start()

    out = debate.sparring("wait", debate.sid, "--timeout", "30")

    assert out.out["status"] == "failed"
    assert "review_withheld" not in out.out
    keys = list(out.out)
    assert keys[keys.index("status") + 1:keys.index("status") + 3] == ["error", "recoverable"]
    assert out.out["error"]["hint"]


def test_an_unattended_reports_shows_what_claude_assumed(debate: Debate) -> None:
    """Nobody answered Claude's questions: what it assumed instead, written into
    CONSTRAINTS, is shown under its own heading in the report."""
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")], state="agree",
                                         proposed="SQLite is enough.")}])
    assumed = ("Assumed: three API replicas, as in deploy/api.yaml.\n"
               "Assumed: sessions live at most 24 hours.\n")
    started = debate.sparring("start", debate.sid, "--template", "think-about/round1",
                              "--vars-file", debate.file("round1.yaml", (
                                  "QUESTION: Redis or SQLite for sessions?\n"
                                  "CONSTRAINTS: |\n" + "".join(
                                      f"  {line}\n" for line in assumed.splitlines()))))
    assert started.exit_code == 0, started.raw
    debate.seal()
    debate.wait()
    debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                    "convergence": {"state": "agree", "reason": "r"}, "approve_summary": "S-1"})

    _, text = debate.report()

    section = text.split("## Constraints and Assumptions", 1)[1].split("\n## ", 1)[0]
    assert "three API replicas, as in deploy/api.yaml" in section
    assert "sessions live at most 24 hours" in section
