"""The loop decision, computed from both sides' structured answers."""

from __future__ import annotations

from typing import Any

from sparring.ledger import decide, replay


def point(pid: str, stance: str, claim: str = "", evidence: list[str] | None = None,
          cls: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"id": pid, "stance": stance, "claim": claim or f"claim {pid}",
                             "evidence": evidence if evidence is not None else [f"{pid}.py:1"]}
    if cls:
        found["class"] = cls
    return found


def doc(points: list[dict[str, Any]], state: str = "continue", proposed: str | None = None,
        approve: str | None = None) -> dict[str, Any]:
    return {"position": "p", "points": points, "convergence": {"state": state, "reason": "r"},
            "proposed_summary": proposed, "approve_summary": approve}


AGREE = "genuine_agreement"
DISAGREE = "genuine_disagreement"


def test_open_disagreement_means_continue() -> None:
    known = replay([(doc([point("X-1", "agree")]),
                     doc([point("X-1", "disagree", cls=DISAGREE)]))])
    decision = decide(known, 5)
    assert decision.decision == "continue"
    assert "X-1" in decision.reasons[0]


def test_consensus_needs_both_to_approve_the_same_summary() -> None:
    rounds = [(doc([point("X-1", "agree")], "agree", proposed="Use SQLite."),
               doc([point("X-1", "agree", cls=AGREE)], "agree", approve="S-1"))]
    decision = decide(replay(rounds), 5)
    assert decision.decision == "consensus"
    assert decision.summary is not None and decision.summary.text == "Use SQLite."


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


def test_same_disagreements_two_rounds_running_is_stalemate() -> None:
    r1 = (doc([point("X-1", "agree")]), doc([point("X-1", "disagree", cls=DISAGREE)]))
    r2 = (doc([point("X-1", "agree", evidence=["new.py:2"])]),
          doc([point("X-1", "disagree", cls=DISAGREE, evidence=["other.py:3"])]))
    decision = decide(replay([r1, r2]), 5)
    assert decision.decision == "stalemate"
    assert "X-1" in decision.reasons[0] and "two rounds" in decision.reasons[0]


def test_codex_declaring_stalemate_ends_it_when_points_are_open() -> None:
    rounds = [(doc([point("X-1", "disagree")], "stalemate"),
               doc([point("X-1", "agree", cls="codex_only")]))]
    assert decide(replay(rounds), 5).decision == "stalemate"
    agreed = [(doc([point("X-1", "agree")], "stalemate"),
               doc([point("X-1", "agree", cls=AGREE)]))]
    assert decide(replay(agreed), 5).decision == "continue"


def test_two_rounds_without_new_evidence_is_stalemate() -> None:
    r1 = (doc([point("X-1", "agree", evidence=[]), point("X-2", "agree", evidence=[])]),
          doc([point("X-1", "disagree", cls=DISAGREE, evidence=[]),
               point("X-2", "disagree", cls=DISAGREE, evidence=[])]))
    r2 = (doc([point("X-1", "agree", evidence=[])]),
          doc([point("X-1", "disagree", cls=DISAGREE, evidence=[]),
               point("X-2", "agree", cls=AGREE, evidence=[])]))
    decision = decide(replay([r1, r2]), 5)
    assert decision.decision == "stalemate"
    assert "no new evidence" in decision.reasons[0]


def test_round_cap_ends_in_stalemate_but_allows_the_confirmation_round() -> None:
    def rnd(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
        return (doc([point(f"X-{n}", "agree", evidence=[f"e{n}"])]),
                doc([point(f"X-{n}", "disagree", cls=DISAGREE, evidence=[f"f{n}"])]))

    assert decide(replay([rnd(1), rnd(2)]), 2).decision == "stalemate"
    assert "round cap (2)" in decide(replay([rnd(1), rnd(2)]), 2).reasons[0]
    confirming = [rnd(1), (doc([point("X-1", "agree", evidence=["g"])]),
                           doc([point("X-1", "agree", cls=AGREE, evidence=["h"])], "agree",
                               proposed="Final."))]
    assert decide(replay(confirming), 2).kind == "confirmation"


def test_concession_without_evidence_is_flagged() -> None:
    r1 = (doc([point("X-1", "agree")]), doc([point("X-1", "disagree", cls=DISAGREE)]))
    r2 = (doc([point("X-1", "agree", evidence=["x.py:9"])]),
          doc([point("X-1", "agree", cls=AGREE, evidence=[])]))
    known = replay([r1, r2])
    assert known.concessions == [{"point": "X-1", "side": "claude", "round": 2,
                                  "from": "disagree", "to": "agree"}]


def test_summary_ids_are_stable_and_by_proposer() -> None:
    rounds = [(doc([point("X-1", "agree")], "agree", proposed="A"),
               doc([point("X-1", "agree", cls=AGREE)], "agree", proposed="B"))]
    known = replay(rounds)
    assert [(s.id, s.by, s.text) for s in known.summaries.values()] == [
        ("S-1", "codex", "A"), ("S-2", "claude", "B")]
    assert decide(known, 5).decision == "continue"  # two different texts: no consensus
