"""The agreement rules with the real Codex CLI, in its default read-only sandbox, against a
loopback mock of the Responses API: whole think-about debates through the CLI, as the skill
drives them, with each of Codex's answers scripted (its tool calls make the real codex read
the files it cites, so its quotes are checked as a user's would be).

Three cases of the issue: both sides reject a claim and still agree; an agreement nobody
disputed is challenged on a fresh thread that gets no transcript and no side's name; a
concession of Codex's without new evidence is sent back once, on the same thread. Each test
asserts on what the mock received (the prompts, the threads) and on the report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.debates import SYNTHESIS, Debate, answer, cpt, pt, quoted
from support.loopback_server import RecordedRequest
from support.responses_mock import (
    ResponsesMock,
    ends_with_tool_output,
    last_user_text,
    messages,
    shell_call,
    text,
)

pytestmark = pytest.mark.integration

STORE = "import redis\n\nTTL = 30\nttl = refresh(ttl)  # every read writes\nREPLICAS = 3\n"
GOON = {"convergence": {"state": "continue", "reason": "open"}}
READ = shell_call("cat store.py")  # Codex opens the file it will cite


def reply(*args: Any, **kw: Any) -> Any:
    """Codex's answer as the mock sends it: JSON text in the schema."""
    return text(json.dumps(answer(*args, **kw)))


def agree(approve: str | None = None) -> dict[str, Any]:
    return {"convergence": {"state": "agree", "reason": "settled"}, "approve_summary": approve}


@pytest.fixture
def debate(real_codex: Path, sparring: Any, scratch: Path, repo: Path) -> Debate:
    (repo / "store.py").write_text(STORE)
    return Debate(sparring, None, scratch)


def record(repo: Path, debate: Debate) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        (repo / ".sparring" / "sessions" / debate.sid / "session.json").read_text())
    return found


def turn_prompts(mock: ResponsesMock) -> list[tuple[RecordedRequest, str]]:
    """Each turn's first request and the prompt sparring wrote for it (a request that only
    carries a tool's output back belongs to the turn before it)."""
    return [(r, last_user_text(r)) for r in mock.responses_requests()
            if not ends_with_tool_output(r)]


def report_of(debate: Debate) -> tuple[str, dict[str, Any]]:
    out, markdown = debate.report(SYNTHESIS)
    return markdown, json.loads(Path(out["json"]).read_text())


def names_no_side(prompt: str) -> bool:
    return "claude" not in prompt.casefold() and "anthropic" not in prompt.casefold()


def test_both_sides_reject_a_claim_and_still_agree(
        debate: Debate, responses_mock: ResponsesMock) -> None:
    """Claude's sealed C-1 is rejected by Codex with a line it read; Claude withdraws it for
    that line; both approve one summary; the challenge turn finds nothing against it: a
    consensus, C-1 listed as rejected by both and never among the agreed points."""
    responses_mock.script(
        reply([cpt("X-1", "agree", "Keep Redis for sessions", evidence=[])]),
        READ, reply([cpt("C-1", "disagree", "Sessions need a sweep job",
                         evidence=[quoted("store.py:3", "TTL = 30")],
                         note="Redis expires keys by their TTL; nothing to sweep")],
                    "agree", proposed="Keep Redis (X-1). No sweep job: keys expire by TTL "
                                      "(C-1)."),
        reply([], "agree"))  # the challenge turn: nothing holds up against it
    debate.start()
    debate.seal("# Mine\n- C-1: Sessions need a sweep job.\n")
    assert debate.wait()["status"] == "completed"
    first = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement", evidence=[]),
                                       pt("C-1", "agree", cls="claude_only", evidence=[])],
                            **GOON})
    assert first.out["decision"] == "continue", first.raw
    debate.next_round(first.out)
    withdrawn = debate.verdict({"points": [pt(
        "C-1", "withdraw", cls="claude_only", evidence=["store.py:3"],
        note="right: the TTL expires them")], **agree("S-1")})
    assert withdrawn.out["next"]["kind"] == "challenge", withdrawn.raw  # Claude alone moved
    assert debate.wait()["purpose"] == "challenge"
    final = debate.verdict({"points": [], **agree("S-1")})

    assert final.out["decision"] == "consensus", final.raw
    assert final.out["rejected_points"] == ["C-1"] and final.out["agreed_points"] == ["X-1"]
    prompts = turn_prompts(responses_mock)
    assert len(prompts) == 3
    second = prompts[1][1]
    new = second.split("## New perspectives", 1)[1].split("##", 1)[0]
    assert "**C-1** (raised by the other analyst): Sessions need a sweep job." in new
    assert all(names_no_side(prompt) for _, prompt in prompts)
    markdown, model = report_of(debate)
    assert model["outcome"] == "consensus"
    assert [p["id"] for p in model["consensus_points"]] == ["X-1"]
    assert [(p["id"], p["outcome"]) for p in model["rejected_points"]] == [("C-1", "rejected")]
    agreed, rejected = markdown.split("## Consensus Points", 1)[1].split("## Rejected by Both")
    assert "C-1" not in agreed
    assert "- **C-1** ~~Sessions need a sweep job.~~" in rejected.split("##", 1)[0]
    (concession,) = model["agreement_audit"]["concessions"]
    assert (concession["side"], concession["point"], concession["flag"]) == (
        "claude", "C-1", None)
    assert concession["evidence"][0]["mark"] == "verified"  # Codex's quote, borrowed
    assert '`store.py:3 "TTL = 30"` [verified]' in markdown


def test_an_agreement_nobody_disputed_is_challenged_on_a_fresh_thread(
        debate: Debate, responses_mock: ResponsesMock, repo: Path) -> None:
    """Both approve in round one, no point ever disputed: the runner starts one challenge
    turn, a new `codex exec` (no `resume`), whose prompt holds the summary and the point it
    rests on but no transcript and no side's name. Its point joins the debate; the main
    thread, resumed, answers it next."""
    responses_mock.script(
        reply([cpt("X-1", "agree", "Keep Redis: it already runs", evidence=[])], "agree",
              proposed="Keep Redis (X-1)."),
        READ, reply([cpt("X-2", "agree", "Every read refreshes the TTL: reads are writes",
                         evidence=[quoted("store.py:4", "ttl = refresh(ttl)")])]),
        READ, reply([cpt("X-2", "withdraw", note="three replicas take a write per read",
                         evidence=[quoted("store.py:5", "REPLICAS = 3")])],
                    "agree", approve="S-1"))
    debate.start()
    debate.seal("# Mine\nKeep Redis; nothing numbered.\n")
    debate.wait()
    agreed = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                           evidence=[])], **agree("S-1")})
    assert (agreed.out["decision"], agreed.out["next"]["kind"]) == ("continue", "challenge")
    assert agreed.out["fallback"]["decision"] == "unchallenged"
    challenge = debate.wait()
    assert (challenge["purpose"], challenge["round"]) == ("challenge", 2), challenge

    turns = record(repo, debate)["turns"]
    assert "resume" not in turns[1]["argv"], "a fresh thread"
    assert turns[1]["thread_id"] != turns[0]["thread_id"]
    (one, first), (asked, prompt) = turn_prompts(responses_mock)[:2]
    assert asked.header("thread-id") != one.header("thread-id")
    assert messages(asked, "assistant") == [], "no transcript: nothing Codex said before"
    assert first not in json.dumps(asked.body), "nor the debate's first prompt"
    assert "Keep Redis (X-1)." in prompt and "Keep Redis: it already runs" in prompt
    assert "numbered from `X-2`" in prompt
    for leak in ("claude", "anthropic", "the other analyst", "S-1"):
        assert leak not in prompt.casefold(), leak

    judged = debate.verdict({"points": [pt("X-2", "disagree", cls="genuine_disagreement",
                                           evidence=[quoted("store.py:5", "REPLICAS = 3")],
                                           note="a write per read is fine on three replicas")],
                             **GOON})
    assert (judged.out["decision"], judged.out["next"]["kind"]) == ("continue", "round")
    back = debate.wait()
    assert (back["round"], back["purpose"]) == (3, "round")
    turns = record(repo, debate)["turns"]
    assert "resume" in turns[2]["argv"] and turns[2]["thread_id"] == turns[0]["thread_id"]
    main, third = turn_prompts(responses_mock)[2]
    assert main.header("thread-id") == one.header("thread-id")
    assert "X-2" in third and names_no_side(third)
    final = debate.verdict({"points": [pt("X-2", "disagree", cls="genuine_disagreement",
                                          evidence=[])], **agree("S-1")})
    assert final.out["decision"] == "consensus", final.raw
    assert final.out["rejected_points"] == ["X-2"]
    markdown, model = report_of(debate)
    assert model["outcome"] == "consensus" and model["challenge"]["round"] == 2
    assert "**Challenged**: a challenge turn (round 2, a fresh Codex thread without the" \
        in markdown
    assert "| 2 | 2 | challenge | completed |" in markdown


def test_a_codex_concession_without_new_evidence_is_sent_back_on_the_same_thread(
        debate: Debate, responses_mock: ResponsesMock, repo: Path) -> None:
    """Codex rejects C-1, then takes it in round three citing nothing: before Claude sees
    that answer, the runner resumes Codex's thread once with the `reconsider` prompt; its
    answer, citing a line Codex read, is the round's, and the concession is backed."""
    responses_mock.script(
        reply([cpt("X-1", "agree", "Redis for sessions", evidence=[])]),
        reply([cpt("X-1", "agree", evidence=[]),
               cpt("C-1", "disagree", "SQLite is enough", evidence=[])]),
        reply([cpt("X-1", "agree", evidence=[]), cpt("C-1", "agree", evidence=[])]),  # caved
        READ, reply([cpt("X-1", "agree", evidence=[]), cpt(
            "C-1", "agree", evidence=[quoted("store.py:5", "REPLICAS = 3")],
            note="three replicas, one writer: the load is low")]))
    debate.start()
    debate.seal("# Mine\n- C-1: SQLite is enough.\n")
    debate.wait()
    debate.next_round(debate.verdict({"points": [
        pt("X-1", "disagree", cls="genuine_disagreement", evidence=[], note="SQLite is enough"),
        pt("C-1", "agree", cls="claude_only", evidence=[])], **GOON}).out)
    third = debate.next_round(debate.verdict({"points": [
        pt("X-1", "disagree", cls="genuine_disagreement", evidence=[]),
        pt("C-1", "agree", cls="claude_only",
           evidence=[quoted("store.py:4", "ttl = refresh(ttl)")])], **GOON}).out)

    assert (third["round"], third["purpose"]) == (3, "reconsider"), third
    assert third["review"]["data"]["points"][1]["evidence"][0]["cite"] == "store.py:5"
    turns = record(repo, debate)["turns"]
    assert [t["purpose"] for t in turns] == ["round", "round", "round", "reconsider"]
    assert "resume" in turns[3]["argv"]
    assert {t["thread_id"] for t in turns} == {turns[0]["thread_id"]}, "one thread"
    prompts = turn_prompts(responses_mock)
    assert len(prompts) == 4
    (caved, _), (asked, prompt) = prompts[2], prompts[3]
    assert asked.header("thread-id") == caved.header("thread-id")
    assert "**C-1**: disagree → agree; nothing cited" in prompt
    assert "What changed your mind?" in prompt and names_no_side(prompt)
    caved_answer = json.dumps(answer([cpt("X-1", "agree", evidence=[]),
                                      cpt("C-1", "agree", evidence=[])]))
    assert caved_answer in messages(asked, "assistant"), "the thread's own answer came along"
    assert len(turn_prompts(responses_mock)) == 4, "sent back once, not again"
    final = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement",
                                          evidence=[]),
                                       pt("C-1", "agree", cls="claude_only", evidence=[])],
                            **GOON})
    assert final.exit_code == 0 and final.out["next"]["started"], final.raw
    assert debate.sparring("stop", debate.sid).exit_code == 0  # the skill's end: round 4 goes
    markdown, model = report_of(debate)
    (concession,) = [c for c in model["agreement_audit"]["concessions"]
                     if c["side"] == "codex"]
    assert (concession["point"], concession["round"], concession["flag"]) == ("C-1", 3, None)
    assert "- **C-1**, Codex, round 3: disagree → agree — with new evidence: " \
        '`store.py:5 "REPLICAS = 3"` [verified] (new)' in markdown
