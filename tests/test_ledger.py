"""The loop decision, computed from both sides' structured answers: a point is settled when
both sides take the same side of its claim (ledger.py)."""

from __future__ import annotations

from typing import Any

import pytest

from sparring import ledger
from sparring.ledger import decide, replay, state_of, summary_problems


def point(pid: str, stance: str, claim: str = "", evidence: list[Any] | None = None,
          cls: str | None = None, note: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"id": pid, "stance": stance, "claim": claim or f"claim {pid}",
                             "evidence": evidence if evidence is not None else [f"{pid}.py:1"]}
    if cls:
        found["class"] = cls
    if note:
        found["note"] = note
    return found


def doc(points: list[dict[str, Any]], state: str = "continue", proposed: str | None = None,
        approve: str | None = None) -> dict[str, Any]:
    return {"position": "p", "points": points, "convergence": {"state": state, "reason": "r"},
            "proposed_summary": proposed, "approve_summary": approve}


AGREE = "genuine_agreement"
DISAGREE = "genuine_disagreement"


def every_item_holds(item: Any, side: str, n: int) -> bool:
    return True


@pytest.mark.parametrize(("owners", "others", "state"), [
    ("agree", None, "pending"), ("refine", "agree", "agreed"), ("agree", "disagree", "disputed"),
    ("withdraw", "disagree", "rejected"), ("disagree", "disagree", "rejected"),
    ("withdraw", None, "withdrawn"), ("withdraw", "agree", "disputed"), (None, "agree", "pending"),
])
def test_a_point_is_settled_when_both_take_the_same_side_of_its_claim(
        owners: str | None, others: str | None, state: str) -> None:
    assert state_of(owners, others) == state


def test_open_disagreement_means_continue() -> None:
    known = replay([(doc([point("X-1", "agree")]),
                     doc([point("X-1", "disagree", cls=DISAGREE)]))])
    decision = decide(known, 5)
    assert decision.decision == "continue"
    assert "X-1" in decision.reasons[0]


def test_both_sides_rejecting_a_claim_settle_it_and_consensus_follows() -> None:
    # Claude raised C-1; Codex rejects it with evidence; Claude is convinced and withdraws it;
    # both approve the same summary: consensus, C-1 rejected by both, never agreed.
    r1 = (doc([point("X-1", "agree")]),
          doc([point("X-1", "agree", cls=AGREE),
               point("C-1", "agree", "Sessions need a sweep job", cls="claude_only")]))
    r2 = (doc([point("C-1", "disagree", evidence=["app/ttl.py:4"])], "agree",
              proposed="X-1 holds; C-1 is wrong: TTLs expire on their own."),
          doc([point("C-1", "withdraw", cls="claude_only", note="the TTL does it")], "agree",
              approve="S-1"))
    known = replay([r1, r2], every_item_holds)
    assert known.points["C-1"].state() == "rejected" and known.points["C-1"].is_rejected()
    assert not known.points["C-1"].is_agreed()
    decision = decide(known, 5)
    assert decision.decision == "consensus", decision.reasons
    assert decision.summary is not None and decision.summary.id == "S-1"


def test_consensus_needs_both_to_approve_the_same_summary() -> None:
    rounds = [(doc([point("X-1", "agree")], "agree", proposed="X-1: use SQLite."),
               doc([point("X-1", "agree", cls=AGREE)], "agree", approve="S-1"))]
    decision = decide(replay(rounds), 5)
    assert decision.decision == "consensus"
    assert decision.summary is not None and decision.summary.text == "X-1: use SQLite."


def test_one_sided_agreement_is_only_a_request_for_confirmation() -> None:
    rounds = [(doc([point("X-1", "agree")]),
               doc([point("X-1", "agree", cls=AGREE)], "agree", proposed="We agree: SQLite."))]
    decision = decide(replay(rounds), 5)
    assert decision.decision == "continue" and decision.kind == "confirmation"
    assert "Codex must approve" in decision.reasons[0]


def test_approving_while_saying_continue_is_not_approval() -> None:
    rounds = [(doc([point("X-1", "agree")], "agree", proposed="S."),
               doc([point("X-1", "agree", cls=AGREE)], "continue", approve="S-1"))]
    assert decide(replay(rounds), 5).decision == "continue"


def test_agreement_with_an_unanswered_point_is_not_consensus() -> None:
    claude_new = point("C-1", "agree", cls="claude_only")
    rounds = [(doc([point("X-1", "agree")], "agree", proposed="S."),
               doc([point("X-1", "agree", cls=AGREE), claude_new], "agree", approve="S-1"))]
    decision = decide(replay(rounds), 5)
    assert decision.decision == "continue"
    assert "C-1" in decision.reasons[0]


def test_a_point_withdrawn_before_anyone_answered_is_settled() -> None:
    rounds = [(doc([point("X-1", "agree")], "agree", proposed="X-1 holds."),
               doc([point("X-1", "agree", cls=AGREE),
                    point("C-1", "withdraw", cls="claude_only", note="Codex's X-1 covers it")],
                   "agree", approve="S-1"))]
    known = replay(rounds)
    assert known.points["C-1"].state() == "withdrawn"
    assert decide(known, 5).decision == "consensus"


def test_same_disagreements_two_rounds_running_is_stalemate() -> None:
    r1 = (doc([point("X-1", "agree")]), doc([point("X-1", "disagree", cls=DISAGREE)]))
    r2 = (doc([point("X-1", "agree", evidence=["new.py:2"])]),
          doc([point("X-1", "disagree", cls=DISAGREE, evidence=["other.py:3"])]))
    decision = decide(replay([r1, r2], every_item_holds), 5)
    assert decision.decision == "stalemate"
    assert "X-1" in decision.reasons[0] and "two rounds" in decision.reasons[0]


def test_codex_declaring_stalemate_ends_it_when_points_are_open() -> None:
    rounds = [(doc([point("X-1", "agree")], "stalemate"),
               doc([point("X-1", "disagree", cls="codex_only")]))]
    assert decide(replay(rounds), 5).decision == "stalemate"
    agreed = [(doc([point("X-1", "agree")], "stalemate"),
               doc([point("X-1", "agree", cls=AGREE)]))]
    assert decide(replay(agreed), 5).decision == "continue"


def test_only_evidence_that_holds_is_new_evidence() -> None:
    r1 = (doc([point("X-1", "agree", evidence=["a.py:1"]), point("X-2", "agree", evidence=[])]),
          doc([point("X-1", "disagree", cls=DISAGREE, evidence=["b.py:1"]),
               point("X-2", "disagree", cls=DISAGREE, evidence=[])]))
    r2 = (doc([point("X-1", "agree", evidence=["c.py:9"])]),
          doc([point("X-1", "disagree", cls=DISAGREE, evidence=["d.py:9"]),
               point("X-2", "agree", cls=AGREE, evidence=[])]))
    rounds = [r1, r2]
    # every item checks out: new evidence each round, so no stalemate yet
    assert decide(replay(rounds, every_item_holds), 5).decision == "continue"
    # none checks out (a quote that does not match, say): two rounds without new evidence
    nothing = decide(replay(rounds, lambda item, side, n: False), 5)
    assert nothing.decision == "stalemate"
    assert "no new evidence that checks out" in nothing.reasons[0]
    # and the check is asked about each item, with who cited it and when
    asked: list[tuple[Any, str, int]] = []
    replay(rounds, lambda item, side, n: asked.append((item, side, n)) is None)
    assert ("c.py:9", "codex", 2) in asked and ("b.py:1", "claude", 1) in asked


def test_round_cap_ends_in_stalemate_but_allows_the_confirmation_round() -> None:
    def rnd(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
        return (doc([point(f"X-{n}", "agree", evidence=[f"e{n}"])]),
                doc([point(f"X-{n}", "disagree", cls=DISAGREE, evidence=[f"f{n}"])]))

    capped = decide(replay([rnd(1), rnd(2)], every_item_holds), 2)
    assert capped.decision == "stalemate" and "round cap (2)" in capped.reasons[0]
    confirming = [rnd(1), (doc([point("X-1", "agree", evidence=["g"])]),
                           doc([point("X-1", "agree", cls=AGREE, evidence=["h"])], "agree",
                               proposed="X-1 holds."))]
    assert decide(replay(confirming, every_item_holds), 2).kind == "confirmation"


def test_summary_ids_are_stable_and_by_proposer() -> None:
    rounds = [(doc([point("X-1", "agree")], "agree", proposed="A"),
               doc([point("X-1", "agree", cls=AGREE)], "agree", proposed="B"))]
    known = replay(rounds)
    assert [(s.id, s.by, s.text) for s in known.summaries.values()] == [
        ("S-1", "codex", "A"), ("S-2", "claude", "B")]
    assert decide(known, 5).decision == "continue"  # two different texts: no consensus


def test_a_challenge_that_raises_nothing_leaves_the_approvals_it_tested() -> None:
    agreed = (doc([point("X-1", "agree")], "agree", proposed="X-1 holds."),
              doc([point("X-1", "agree", cls=AGREE)], "agree", approve="S-1"))
    review = (doc([], "agree"), doc([], "agree", approve="S-1"))
    decision = decide(replay([agreed, review], challenges=[2]), 5)
    assert decision.decision == "consensus"
    assert "the challenge turn (round 2) raised no point" in decision.reasons[0]
    # a round that was no challenge carries nothing over
    assert decide(replay([agreed, review]), 5).decision == "continue"


def test_a_summary_names_the_points_each_sentence_rests_on() -> None:
    known = replay([(doc([point("X-1", "agree"), point("X-2", "agree")]),
                     doc([point("X-1", "agree", cls=AGREE),
                          point("X-2", "disagree", cls=DISAGREE)]))])
    assert summary_problems(known, "Use SQLite (X-1).\n\n## Why:\n- WAL holds it, X-1.",
                            "s") == []
    found = summary_problems(known, "Use SQLite (X-1). Redis is dead. X-2 too; and X-9.", "s")
    assert found == [
        "s: sentence 2 names no point; each sentence states what a settled point (agreed, or "
        "rejected by both) holds, by its id",
        "s: sentence 3 names X-9, which is no point"]
    assert [s["points"] for s in ledger.numbered("X-1 and C-2. Then X-1.")] == [
        ["X-1", "C-2"], ["X-1"]]
