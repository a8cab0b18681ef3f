"""The token budget: set on a session or in sparring.yaml, shown with every round, and once
used, no further Codex turn starts (a next round, a recovery, a verdict's next round, a
re-ask), the refusal carries the figures and the report says DEGRADED: budget reached."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.debates import SYNTHESIS, Debate, answer, cpt, pt, quoted, reading

# What the fake codex reports for each turn: 1,200 tokens (the cached ones are part of the
# input, the reasoning ones part of the output).
TURN = {"input_tokens": 1000, "cached_input_tokens": 600, "output_tokens": 200,
        "reasoning_output_tokens": 150}


@pytest.fixture
def costly(fake_codex: Any) -> Any:
    fake_codex.mode("ok", usage=json.dumps(TURN))
    return fake_codex


def test_a_budget_is_set_on_init_and_shown_with_each_round(sparring: Any, repo: Path,
                                                           costly: Any) -> None:
    made = sparring("init", "--skill", "deep-discussion", "--budget-tokens", "5000").out
    assert made["budget_tokens"] == 5000
    sid = made["session"]
    sparring("start", sid, input=b"q")
    done = sparring("wait", sid, "--timeout", "30").out
    assert done["usage"]["budget"] == {"used": 1200, "budget": 5000}
    assert sparring("poll", sid, "--full").out["usage"]["budget"] == {"used": 1200,
                                                                      "budget": 5000}
    assert sparring("status", sid).out["budget"] == {"used": 1200, "budget": 5000}
    row = sparring("status").out["sessions"][0]
    assert row["budget"] == {"used": 1200, "budget": 5000}
    assert row["tokens"] == 1200
    assert "1,200/5,000" in sparring("status", "--table").raw


def test_no_budget_no_figure(sparring: Any, session: str, costly: Any) -> None:
    sparring("start", session, input=b"q")
    done = sparring("wait", session, "--timeout", "30").out
    assert "budget" not in done["usage"]
    assert sparring("poll", session, "--full").out["usage"]["budget"] is None
    assert sparring("status", session).out["budget"] is None


def test_the_round_that_reaches_the_budget_is_the_last(sparring: Any, repo: Path,
                                                       costly: Any) -> None:
    sid = sparring("init", "--skill", "deep-discussion", "--budget-tokens", "2000").out[
        "session"]
    sparring("start", sid, input=b"round one")
    sparring("wait", sid, "--timeout", "30")
    assert sparring("resume", sid, input=b"round two").exit_code == 0  # 1,200 < 2,000
    assert sparring("wait", sid, "--timeout", "30").out["usage"]["budget"]["used"] == 2400
    refused = sparring("resume", sid, input=b"round three")
    assert refused.exit_code == 1 and refused.error_code == "budget_exhausted"
    assert (refused.out["error"]["used"], refused.out["error"]["budget"]) == (2400, 2000)
    assert "2,400" in refused.out["error"]["message"] and "--budget-tokens" in (
        refused.out["error"]["hint"])
    assert len(costly.turn_calls()) == 2, "nothing started past the budget"
    assert len(sparring("status", sid).out["turns"]) == 2


def test_a_recovery_is_refused_too_and_a_raised_budget_goes_on(
        sparring: Any, repo: Path, fake_codex: Any) -> None:
    sid = sparring("init", "--skill", "deep-discussion", "--budget-tokens", "5000").out[
        "session"]
    fake_codex.script([{"usage": TURN}, {"mode": "rate_limited"}, "recovered"])
    sparring("start", sid, input=b"one")
    sparring("wait", sid, "--timeout", "30")
    sparring("resume", sid, input=b"two")
    failed = sparring("wait", sid, "--timeout", "30").out
    assert failed["recoverable"] is True
    # The user caps what is left at what is spent: the recovery would pass it.
    refused = sparring("resume", sid, "--recover", "--budget-tokens", "1200")
    assert refused.error_code == "budget_exhausted", refused.raw
    assert len(fake_codex.turn_calls()) == 2
    assert sparring("status", sid).out["budget"] == {"used": 1200, "budget": 1200}
    going_on = sparring("resume", sid, "--recover", "--budget-tokens", "9000")
    assert going_on.exit_code == 0, going_on.raw
    assert sparring("wait", sid, "--timeout", "30").out["status"] == "completed"
    assert len(fake_codex.turn_calls()) == 3


@pytest.fixture
def debate(sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> Debate:
    (repo / "sparring.yaml").write_text("think-about:\n  budget_tokens: 1500\n")
    return Debate(sparring, fake_codex, scratch)


def test_a_verdict_starts_no_round_past_the_budget_and_the_report_says_so(
        debate: Debate) -> None:
    (debate.tmp.parent.parent / "store.py").write_text("TTL = 30\nREFRESH_ON_READ = True\n")
    debate.fake.script([{"usage": TURN, "reply": answer([cpt("X-1", "agree"),
                                                         cpt("X-2", "agree")])},
                        {**reading("store.py"), "usage": TURN, "reply": answer([
                            cpt("X-1", "agree"), cpt("X-3", "agree", "new"),
                            cpt("X-2", "agree", evidence=[quoted("store.py:2",
                                                                 "REFRESH_ON_READ = True")])])}])
    debate.start()
    assert debate.seal().exit_code == 0
    shown = debate.wait()
    assert shown["usage"]["budget"] == {"used": 1200, "budget": 1500}
    first = debate.verdict({"position": "p", "points": [
        pt("X-1", "agree", cls="genuine_agreement"),
        pt("X-2", "disagree", cls="genuine_disagreement")],
        "convergence": {"state": "continue", "reason": "X-2 open"}}).out
    assert first["decision"] == "continue" and first["next"]["started"] is True
    second = debate.wait()
    assert second["usage"]["budget"]["used"] == 2400
    last = debate.verdict({"position": "p", "points": [
        pt("X-1", "agree", cls="genuine_agreement"),
        pt("X-2", "disagree", cls="genuine_disagreement"),
        pt("X-3", "disagree", cls="genuine_disagreement", evidence=["src/x3.py:1"])],
        "convergence": {"state": "continue", "reason": "X-3 open"}}).out
    assert last["decision"] == "continue"
    step = last["next"]
    assert step["action"] == "report" and step["started"] is False
    assert step["error"]["code"] == "budget_exhausted"
    assert (step["error"]["used"], step["error"]["budget"]) == (2400, 1500)
    assert step["command"].startswith(f"sparring report {debate.sid} --synthesis ")
    assert len(debate.fake.turn_calls()) == 2
    out, text = debate.report(SYNTHESIS)
    assert out["degraded"]
    assert "budget reached: 2,400 of 1,500 tokens used" in text
    assert "of a 1,500-token budget" in text
    assert debate.sparring("status", debate.sid).out["budget"] == {"used": 2400, "budget": 1500}


def test_no_reask_past_the_budget(sparring: Any, fake_codex: Any, repo: Path,
                                  scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The round fails at once; the start window must outlast a busy machine's start of the
    # fake codex, so that the failure is start's to report whatever the load.
    monkeypatch.setenv("SPARRING_STARTSECS", "10")
    (repo / "sparring.yaml").write_text("budget_tokens: 1000\n")
    debate = Debate(sparring, fake_codex, scratch)
    debate.fake.script([{"usage": TURN, "reply": "not the JSON asked for"}])
    debate.sparring("start", debate.sid, "--template", "think-about/round1",
                    "--var", "QUESTION=q")  # the round fails within start's window
    debate.seal()
    failed = debate.wait()
    assert failed["status"] == "failed" and failed["error"]["code"] == "invalid_answer"
    assert "budget is spent" in failed["error"]["hint"]
    assert len(debate.fake.turn_calls()) == 1, "no re-ask"
    assert len(debate.sparring("status", debate.sid).out["turns"]) == 1
    _, text = debate.report()
    assert "budget reached: 1,200 of 1,000 tokens used" in text


def test_below_the_budget_the_reask_still_comes(debate: Debate) -> None:
    debate.fake.script([{"usage": TURN, "reply": "not the JSON asked for"},
                        {"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    debate.seal()
    assert debate.wait()["status"] == "completed"
    assert len(debate.fake.turn_calls()) == 2


def test_an_arch_debate_stops_at_its_budget(sparring: Any, repo: Path, costly: Any) -> None:
    created = sparring("debate", "new", "debate", "Redis or SQLite?", "--budget-tokens",
                       "1000").out
    assert created["session"]
    (repo / "round.md").write_text("Round 0: SQLite.\n")
    assert sparring("debate", "round", "debate", "--file", "round.md").exit_code == 0
    status = sparring("wait", created["session"], "--timeout", "30").out["debate"]
    assert "token budget is spent (1,200 of 1,000 tokens)" in status["next"]
    (repo / "round.md").write_text("Round 1: still SQLite.\n")
    refused = sparring("debate", "round", "debate", "--file", "round.md")
    assert refused.error_code == "budget_exhausted"
    assert any(r.startswith("budget reached") for r in
               sparring("debate", "status", "debate").out["degraded"])
    assert len(costly.turn_calls()) == 1


def test_a_discussion_stops_at_its_budget_and_skips_codexs_synthesis(
        sparring: Any, repo: Path, costly: Any, scratch: Path) -> None:
    sid = sparring("discuss", "new", "--args", "high", "--budget-tokens", "1000").out[
        "session"]
    frame = scratch / "frame.yaml"
    frame.write_text("TOPIC: t\nFRAMING: f\nCLAUDE_VIEW: v\n")
    sparring("discuss", "frame", sid, "--file", str(frame))
    waited = sparring("wait", sid, "--timeout", "30").out
    assert "no further Codex turn starts" in waited["discussion"]["next"]
    assert "discuss report" in waited["discussion"]["next"]
    answer_file = scratch / "round.yaml"
    answer_file.write_text("response: more\n")
    assert sparring("discuss", "round", sid, "--file", str(answer_file)).error_code == (
        "budget_exhausted")
    assert sparring("discuss", "synthesis", sid).error_code == "budget_exhausted"
    report = scratch / "report.yaml"
    report.write_text("\n".join(f"{k}: x" for k in (
        "agreed_points", "key_trade_offs", "recommended_approach", "open_questions",
        "implementation_hints", "final_observations")))
    written = sparring("discuss", "report", sid, "--file", str(report),
                       "--out", str(scratch / "out.md")).out
    assert written["degraded"] is True
    assert "budget reached" in (scratch / "out.md").read_text()
    assert len(costly.turn_calls()) == 1


def test_sparring_yaml_sets_it_globally_and_per_workflow(sparring: Any, repo: Path) -> None:
    (repo / "sparring.yaml").write_text("budget_tokens: 30000\n"
                                        "think-about:\n  budget_tokens: 20000\n")
    assert sparring("init", "--skill", "think-about").out["budget_tokens"] == 20000
    assert sparring("init", "--skill", "dual-model").out["budget_tokens"] == 30000
    given = sparring("init", "--skill", "think-about", "--budget-tokens", "100")
    assert given.out["budget_tokens"] == 100
    (repo / "sparring.yaml").unlink()
    assert sparring("init", "--skill", "think-about").out["budget_tokens"] is None


@pytest.mark.parametrize("text", ["budget_tokens: 0\n", "budget_tokens: -5\n",
                                  "budget_tokens: many\n", "budget_tokens: 1.5\n",
                                  "dual-model:\n  budget_tokens: true\n"])
def test_a_bad_budget_in_sparring_yaml_is_refused(sparring: Any, repo: Path,
                                                  text: str) -> None:
    (repo / "sparring.yaml").write_text(text)
    result = sparring("init", "--skill", "dual-model")
    assert result.error_code == "config_invalid" and "budget_tokens" in result.out["error"][
        "message"]


@pytest.mark.parametrize("value", ["0", "-1", "lots"])
def test_a_bad_budget_on_the_command_line_is_a_usage_error(sparring: Any, repo: Path,
                                                           value: str) -> None:
    result = sparring("init", "--skill", "think-about", "--budget-tokens", value)
    assert result.exit_code == 2 and result.error_code == "usage_error"


@pytest.mark.parametrize("skill", ["arch-debate", "deep-discussion", "dual-model", "think-about"])
def test_each_skill_tells_the_user_the_cost_at_each_round(skill: str) -> None:
    text = " ".join((Path(__file__).resolve().parents[1] / "skills" / skill / "SKILL.md")
                    .read_text().split())
    assert "`usage.total`" in text and "`usage.budget`" in text
    assert "cost so far" in text
