"""Agreement that means what it says, through the CLI against the fake codex: both sides may
reject a claim, a concession without new evidence goes back once to the side that made it,
a cheap consensus is challenged on a fresh thread, the outcome follows the audit, the prompts
Codex gets name no side, and each side's confidence stays its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.debates import SYNTHESIS, Debate, answer, cpt, pt, quoted, reading

STORE = "import redis\n\nTTL = 30\nttl = refresh(ttl)  # every read writes\nREPLICAS = 3\n"
GOON = {"convergence": {"state": "continue", "reason": "open"}}


def agree(approve: str | None = None, proposed: str | None = None) -> dict[str, Any]:
    return {"convergence": {"state": "agree", "reason": "settled"},
            "approve_summary": approve, "proposed_summary": proposed}


@pytest.fixture
def debate(sparring: Any, fake_codex: Any, scratch: Path, repo: Path) -> Debate:
    (repo / "store.py").write_text(STORE)
    return Debate(sparring, fake_codex, scratch)


def report_of(debate: Debate, synthesis: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], str, dict[str, Any]]:
    out, text = debate.report(synthesis or SYNTHESIS)
    return out, text, json.loads(Path(out["json"]).read_text())


def test_both_sides_reject_a_claim_and_still_agree(debate: Debate) -> None:
    """Claude raises C-1; Codex rejects it with evidence; Claude is convinced and withdraws
    it; both approve one summary: consensus, C-1 rejected by both and never agreed."""
    withdrawn = debate.withdrawn_claim()
    # Claude moved, Codex never did: a challenge turn tests the consensus first
    assert withdrawn.out["decision"] == "continue" and withdrawn.out["kind"] == "challenge"
    assert debate.wait()["purpose"] == "challenge"
    final = debate.verdict({"points": [], **agree(approve="S-1")})
    assert final.out["decision"] == "consensus", final.raw
    assert final.out["rejected_points"] == ["C-1"] and final.out["agreed_points"] == ["X-1"]
    assert "raised no point against it" in final.out["reasons"][0]
    _, text, model = report_of(debate)
    assert model["outcome"] == "consensus"
    assert [p["id"] for p in model["consensus_points"]] == ["X-1"]
    assert [(p["id"], p["outcome"]) for p in model["rejected_points"]] == [("C-1", "rejected")]
    consensus = text.split("## Consensus Points", 1)[1].split("## Rejected by Both", 1)
    assert "C-1" not in consensus[0]
    assert "- **C-1** ~~Sessions need a sweep job.~~" in consensus[1].split("##", 1)[0]
    assert "**Challenged**: a challenge turn (round 3" in text


def test_a_concession_without_new_evidence_goes_back_once_then_the_outcome_is_contested(
        debate: Debate, repo: Path) -> None:
    (repo / "sparring.yaml").write_text("think-about:\n  challenge: false\n")
    debate.fake.script([
        {"reply": answer([cpt("X-1", "agree", "Redis holds the write load")])},
        {"reply": answer([cpt("X-1", "agree")], "agree", proposed="Redis stays (X-1).")}])
    debate.start()
    debate.seal()
    debate.wait()
    debate.next_round(debate.verdict({"points": [pt(
        "X-1", "disagree", cls="genuine_disagreement", note="SQLite would do",
        evidence=[])], **GOON}).out)
    session_file = repo / ".sparring" / "sessions" / debate.sid / "session.json"
    body = {"points": [pt("X-1", "agree", cls="genuine_agreement", evidence=[])],
            **agree(approve="S-1")}
    sent_back = debate.verdict(body)
    assert sent_back.exit_code == 0 and sent_back.out["decision"] == "reconsider"
    (point,) = sent_back.out["reconsider"]
    assert (point["point"], point["from"], point["to"]) == ("X-1", "disagree", "agree")
    assert sent_back.out["next"]["command"].startswith(f"sparring verdict {debate.sid} --file")
    assert "2" not in json.loads(session_file.read_text())["engine"]["verdicts"]
    stands = debate.verdict(body)  # the same concession again: it stands, flagged
    assert stands.out["decision"] == "contested", stands.raw
    assert stands.out["concessions_without_evidence"][0]["point"] == "X-1"
    assert any("contested: X-1" in why for why in stands.out["reasons"])
    out, text, model = report_of(debate, {**SYNTHESIS, "confidence": {
        "level": "high", "reason": "we both checked"}})
    assert out["outcome"] == model["outcome"] == "contested"
    assert "**Outcome: CONTESTED**" in text
    # the confidence is capped by the record, and says why
    assert model["confidence"]["level"] == "medium" and model["confidence"]["claimed"] == "high"
    assert "a concession was made without new evidence" in model["confidence"]["capped_because"]
    assert 'Capped from Claude\'s "high" by the record' in text


def test_a_codex_concession_is_sent_back_and_its_answer_replaces_the_rounds(
        sparring: Any, fake_codex: Any, scratch: Path, repo: Path) -> None:
    (repo / "store.py").write_text(STORE)
    debate = Debate(sparring, fake_codex, scratch)
    fake_codex.script([
        {"reply": answer([cpt("X-1", "agree", "Redis for sessions")])},
        {"reply": answer([cpt("X-1", "agree"),
                          cpt("C-1", "disagree", "SQLite is enough", evidence=[])])},
        {"reply": answer([cpt("X-1", "agree"), cpt("C-1", "agree", evidence=[])])},  # caved
        {**reading("store.py"), "reply": answer([cpt("X-1", "agree"), cpt(
            "C-1", "agree", evidence=[quoted("store.py:5", "REPLICAS = 3")],
            note="three replicas, one writer: the load is low")])}])
    debate.start()
    debate.seal("# Mine\n- C-1: SQLite is enough.\n")
    debate.wait()
    round_two = debate.next_round(debate.verdict({"points": [
        pt("X-1", "disagree", cls="genuine_disagreement", note="SQLite is enough"),
        pt("C-1", "agree", cls="claude_only")], **GOON}).out)
    assert round_two["purpose"] == "round"
    third = debate.next_round(debate.verdict({"points": [
        pt("X-1", "disagree", cls="genuine_disagreement"),
        pt("C-1", "agree", cls="claude_only", evidence=[quoted("store.py:4",
                                                               "ttl = refresh(ttl)")])],
        **GOON}).out)
    assert (third["round"], third["purpose"]) == (3, "reconsider"), third
    asked = fake_codex.stdin_of(-1).decode()
    assert "**C-1**: disagree → agree; nothing cited" in asked
    assert "What changed your mind?" in asked and "claude" not in asked.casefold()
    # the reconsidered answer is the round's: it cites what moved Codex, which holds
    assert third["review"]["data"]["points"][1]["evidence"][0]["cite"] == "store.py:5"
    recorded = json.loads((repo / ".sparring" / "sessions" / debate.sid / "session.json"
                           ).read_text())
    assert [t["purpose"] for t in recorded["turns"]][-2:] == ["round", "reconsider"]
    assert recorded["turns"][-2]["answer"]["points"][1]["evidence"] == []  # kept on record
    final = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement"),
                                       pt("C-1", "agree", cls="claude_only")], **GOON})
    assert final.exit_code == 0, final.raw
    _, _, model = report_of(debate)
    (concession,) = [c for c in model["agreement_audit"]["concessions"] if c["side"] == "codex"]
    assert concession["flag"] is None and concession["round"] == 3


def test_a_cheap_consensus_is_challenged_on_a_fresh_thread(debate: Debate) -> None:
    debate.fake.script([
        {"reply": answer([cpt("X-1", "agree", "Keep Redis: it already runs")], "agree",
                         proposed="Keep Redis (X-1).")},
        {**reading("store.py"), "reply": answer([cpt(
            "X-2", "agree", "Every read refreshes the TTL: reads are writes",
            evidence=[quoted("store.py:4", "ttl = refresh(ttl)")])])},
        {**reading("store.py"), "reply": answer([cpt(
            "X-2", "withdraw", note="three replicas take a write per read easily",
            evidence=[quoted("store.py:5", "REPLICAS = 3")])], "agree", approve="S-1")}])
    debate.start()
    debate.seal("# Mine\nKeep Redis; nothing numbered.\n")
    debate.wait()
    agreed = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                             **agree(approve="S-1")})
    assert (agreed.out["decision"], agreed.out["kind"]) == ("continue", "challenge")
    assert agreed.out["fallback"]["decision"] == "unchallenged"
    challenge = debate.wait()
    assert (challenge["purpose"], challenge["round"]) == ("challenge", 2)
    call = debate.fake.turn_calls()[-1]
    assert "resume" not in call["argv"], "a fresh thread"
    prompt = debate.fake.stdin_of(-1).decode()
    assert "Keep Redis (X-1)." in prompt and "numbered from `X-2`" in prompt
    assert "Keep Redis: it already runs" in prompt  # the point it rests on
    for leak in ("claude", "anthropic", "approve_summary\": \"S-1", "the other analyst"):
        assert leak not in prompt.casefold(), leak
    thread = json.loads((Path.cwd() / ".sparring" / "sessions" / debate.sid / "session.json"
                         ).read_text())["thread_id"]
    # its point joins the debate: Claude answers it, and the main thread answers it next
    answered = debate.verdict({"points": [pt("X-2", "disagree", cls="genuine_disagreement",
                                             note="a write per read is fine in Redis")],
                               **GOON})
    assert answered.out["decision"] == "continue" and answered.out["kind"] == "round"
    back = debate.wait()
    assert back["round"] == 3
    assert "**X-2** (raised by an outside review of the conclusion)" in \
        debate.fake.stdin_of(-1).decode()
    assert "resume" in debate.fake.turn_calls()[-1]["argv"]
    assert thread in debate.fake.turn_calls()[-1]["argv"]
    final = debate.verdict({"points": [pt("X-2", "disagree", cls="genuine_disagreement")],
                            **agree(approve="S-1")})
    assert final.out["decision"] == "consensus", final.raw
    assert final.out["rejected_points"] == ["X-2"]


@pytest.mark.parametrize(("yaml", "flags", "off"), [
    ("think-about:\n  challenge: false\n", (), "`think-about: challenge: false` in sparring.yaml"),
    ("", ("--no-challenge",), "start --no-challenge")], ids=["sparring.yaml", "start option"])
def test_turned_off_a_cheap_consensus_is_unchallenged(debate: Debate, repo: Path, yaml: str,
                                                      flags: tuple[str, ...], off: str) -> None:
    (repo / "sparring.yaml").write_text(yaml)
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")], "agree",
                                         proposed="Keep Redis (X-1).")}])
    debate.start(*flags)
    debate.seal()
    debate.wait()
    agreed = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                             **agree(approve="S-1")})
    assert agreed.out["decision"] == "unchallenged"
    assert agreed.out["next"]["action"] == "report"
    assert len(debate.fake.turn_calls()) == 1
    out, text, model = report_of(debate, {**SYNTHESIS, "confidence": {
        "level": "high", "reason": "obvious"}})
    assert out["outcome"] == "unchallenged" and "**Outcome: UNCHALLENGED**" in text
    assert f"the challenge turn is off ({off})" in text
    assert model["confidence"]["level"] == "medium"
    assert model["confidence"]["capped_because"] == ["the consensus was never challenged"]


def test_no_challenge_is_refused_where_no_challenge_turn_runs(sparring: Any, repo: Path) -> None:
    sid = sparring("init", "--skill", "deep-discussion").out["session"]
    refused = sparring("start", sid, "--prompt-file", "-", "--no-challenge", input=b"Go.\n")
    assert refused.exit_code != 0 and refused.out["error"]["code"] == "usage_error"
    assert "deep-discussion session has no challenge turn" in refused.out["error"]["message"]
    session = json.loads((repo / ".sparring" / "sessions" / sid / "session.json").read_text())
    assert session["turns"] == [] and "challenge_off" not in session["engine"]


def test_a_challenge_that_cannot_start_leaves_the_consensus_unchallenged(
        sparring: Any, fake_codex: Any, scratch: Path, repo: Path) -> None:
    (repo / "sparring.yaml").write_text("think-about:\n  budget_tokens: 1000\n")
    debate = Debate(sparring, fake_codex, scratch)
    debate.fake.script([{"usage": {"input_tokens": 900, "output_tokens": 200},
                         "reply": answer([cpt("X-1", "agree")], "agree",
                                         proposed="Keep Redis (X-1).")}])
    debate.start()
    debate.seal()
    debate.wait()
    agreed = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                             **agree(approve="S-1")})
    assert agreed.out["kind"] == "challenge" and agreed.out["next"]["action"] == "report"
    assert agreed.out["next"]["error"]["code"] == "budget_exhausted"
    out, text, _ = report_of(debate)
    assert out["outcome"] == "unchallenged"
    assert "the challenge turn did not start" in text


def test_codex_citing_a_file_it_never_opened_is_marked_unread(debate: Debate,
                                                              repo: Path) -> None:
    (repo / "sparring.yaml").write_text("think-about:\n  challenge: false\n")
    debate.fake.script([{"reply": answer([cpt(
        "X-1", "agree", "TTL refresh on read", evidence=[quoted("store.py:4",
                                                               "ttl = refresh(ttl)")])],
        "agree", proposed="Refresh on read (X-1).")}])
    debate.start()
    debate.seal()
    debate.wait()
    debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                    **agree(approve="S-1")})
    _, text, model = report_of(debate)
    (cited,) = model["agreement_audit"]["points"][0]["stances"][0]["evidence"]
    assert (cited["mark"], cited["quote"]) == ("unread", "ttl = refresh(ttl)")
    assert "[file never opened by Codex]" in text


def test_blind_first_choices_stay_private_and_open_the_report(debate: Debate,
                                                              repo: Path) -> None:
    (repo / "sparring.yaml").write_text("think-about:\n  challenge: false\n")
    debate.fake.script([
        {"reply": answer([cpt("X-1", "agree", "Redis already runs")], choice="Redis",
                         confidence=61)},
        {"reply": answer([cpt("X-1", "withdraw", note="the write load is low")],
                         "agree", proposed="SQLite: X-1 does not hold.", choice="SQLite")}])
    started = debate.sparring("start", debate.sid, "--template", "think-about/round1",
                              "--vars-file", debate.file("r1.yaml", (
                                  "QUESTION: Redis or SQLite?\nOPTIONS: |\n  Redis\n  SQLite\n")))
    assert started.exit_code == 0, started.raw
    debate.seal("# Mine\nChoice: SQLite\nConfidence: 83\n")
    shown = debate.wait()
    assert "confidence" not in shown["review"]["data"] and shown["review"].get("text") is None
    verdict = {"points": [pt("X-1", "disagree", cls="genuine_disagreement",
                             note="the writes are 200/s")], "choice": "SQLite",
               "confidence": 97, **GOON}
    wrong = debate.verdict({**verdict, "choice": "Postgres"})
    assert "'Postgres' is not one of the options (Redis; SQLite)" in wrong.raw
    debate.next_round(debate.verdict(verdict).out)
    final = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement")],
                            **agree(approve="S-1")})
    assert final.out["decision"] in ("consensus", "contested"), final.raw
    for call in debate.fake.turn_calls():
        prompt = call["prompt"]
        assert "83" not in prompt and "97" not in prompt and "confidence 9" not in prompt
    _, text, model = report_of(debate)
    assert model["choices"]["first"] == {"claude": "SQLite", "codex": "Redis"}
    assert model["choices"]["first_confidence"] == {"claude": 83, "codex": 61}
    assert model["choices"]["moved"] == "Codex moved to Claude's first choice (SQLite)."
    assert ("**First choices, made blind:** Claude — SQLite (confidence 83); Codex — Redis "
            "(confidence 61). Codex moved to Claude's first choice (SQLite).") in text


def test_no_prompt_codex_gets_names_a_side(debate: Debate) -> None:
    """A whole think-about (round one, a next round, a confirmation, a challenge): every
    prompt sent to Codex, as it read it, names no side; what Claude wrote itself (a note, a
    message) is Claude's text, carried as written."""
    debate.fake.script([
        {"reply": answer([cpt("X-1", "agree", "Keep Redis")])},
        {"reply": answer([cpt("X-1", "agree"), cpt("C-1", "agree")])},
        {"reply": answer([cpt("X-1", "agree"), cpt("C-1", "agree")], "agree", approve="S-1")},
        {"reply": answer([], "agree")}])
    debate.start()
    debate.seal("# Mine\n- C-1: Sessions need a TTL.\n")
    debate.wait()
    first = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                          note="as Claude I checked it"),
                                       pt("C-1", "agree", cls="claude_only")], **GOON,
                            "message": "C-1: the TTL, as Anthropic's docs say?"})
    debate.next_round(first.out)
    proposed = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement"),
                                          pt("C-1", "agree", cls="genuine_agreement")],
                               **agree(proposed="Keep Redis (X-1), with a TTL (C-1).")})
    assert proposed.out["kind"] == "confirmation", proposed.raw
    debate.next_round(proposed.out)
    confirmed = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement"),
                                           pt("C-1", "agree", cls="genuine_agreement")],
                                **agree(approve="S-1")})
    assert confirmed.out["kind"] == "challenge", confirmed.raw
    assert debate.wait()["purpose"] == "challenge"
    prompts = [call["prompt"] for call in debate.fake.turn_calls()]
    assert len(prompts) == 4 and "CONSENSUS CHECK" in prompts[2]
    for prompt in prompts:
        text = prompt.replace("as Claude I checked it", "").replace("as Anthropic's docs say",
                                                                    "")
        assert "claude" not in text.casefold() and "anthropic" not in text.casefold(), prompt
    assert "as Claude I checked it" in prompts[1]  # Claude's own note, carried as written


def test_a_summary_is_objected_to_by_sentence_and_the_objection_reaches_codex(
        debate: Debate, repo: Path) -> None:
    (repo / "sparring.yaml").write_text("think-about:\n  challenge: false\n")
    debate.fake.script([
        {"reply": answer([cpt("X-1", "agree", "Keep Redis"), cpt("X-2", "agree", "Add TTLs")],
                         "agree", proposed="Keep Redis (X-1).\nAdd TTLs to every key (X-2).")},
        {"reply": answer([cpt("X-2", "agree")])}])
    debate.start()
    debate.seal()
    shown = debate.wait()
    assert shown["review"]["summary_id"] == "S-1"
    both = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement"),
                                      pt("X-2", "agree", cls="genuine_agreement")],
                           **agree(approve="S-1"),
                           "summary_objections": [{"sentence": 2, "reason": "not every key"}]})
    assert "you object to sentences of it; approve it or object" in both.raw
    objected = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement"),
                                          pt("X-2", "disagree", cls="genuine_disagreement",
                                             note="only the session keys")], **GOON,
                               "summary_objections": [{"sentence": 2,
                                                       "reason": "only the session keys"}]})
    assert objected.out["decision"] == "continue", objected.raw
    debate.next_round(objected.out)
    sent = debate.fake.stdin_of(-1).decode()
    assert "The other analyst objected to your summary:\n- sentence 2: only the session keys" \
        in sent
