"""The debate ledger and the loop decision, computed from both sides' answers.

Nothing here trusts a side's say-so. The ledger is rebuilt by replaying every
round (Codex's validated answer, then Claude's verdict), so it is derived,
never edited. A point is open while either side's latest stance on it is
`disagree`, or while the other side has not yet addressed it. Consensus needs
no open point and both sides approving the same summary text (by its id) in
the same round; proposing a summary counts as approving it. One side alone
never ends a debate as agreed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sparring.records import Answer, AnySession, PointEntry, Verdict

# One side's document of a round: Codex's answer or Claude's verdict (records.py).
Side = Answer | Verdict

CODEX, CLAUDE = "codex", "claude"
SIDES = (CODEX, CLAUDE)
NAMES = {CODEX: "Codex", CLAUDE: "Claude"}


@dataclass
class Stance:
    round: int
    stance: str
    evidence: list[str]


@dataclass
class Point:
    id: str
    owner: str
    claim: str
    history: dict[str, list[Stance]] = field(default_factory=lambda: {CODEX: [], CLAUDE: []})
    claude_class: str | None = None
    note: str | None = None

    def latest(self, side: str) -> Stance | None:
        return self.history[side][-1] if self.history[side] else None

    def is_disputed(self) -> bool:
        return any((s := self.latest(side)) is not None and s.stance == "disagree"
                   for side in SIDES)

    def is_pending(self) -> bool:
        """The side that did not raise it has not answered it yet."""
        other = CLAUDE if self.owner == CODEX else CODEX
        return self.latest(other) is None

    def is_agreed(self) -> bool:
        return all((s := self.latest(side)) is not None and s.stance in ("agree", "refine")
                   for side in SIDES)


@dataclass
class Summary:
    id: str
    by: str
    round: int
    text: str


@dataclass
class RoundState:
    n: int
    codex_state: str
    claude_state: str | None
    approvals: dict[str, set[str]]
    unresolved: frozenset[str] = frozenset()
    new_evidence: bool = False


@dataclass
class Ledger:
    points: dict[str, Point] = field(default_factory=dict)
    summaries: dict[str, Summary] = field(default_factory=dict)
    rounds: list[RoundState] = field(default_factory=list)
    concessions: list[dict[str, Any]] = field(default_factory=list)
    _seen_evidence: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Decision:
    round: int
    decision: str  # consensus | stalemate | continue
    reasons: list[str]
    kind: str = "round"  # for continue: round | confirmation
    summary: Summary | None = None


def replay(rounds: list[tuple[Answer, Verdict | None]]) -> Ledger:
    """Build the ledger from (codex answer, claude verdict or None) per round, in order."""
    ledger = Ledger()
    for n, (answer, verdict) in enumerate(rounds, start=1):
        state = RoundState(n, answer["convergence"]["state"], None, {CODEX: set(), CLAUDE: set()})
        _apply_side(ledger, state, CODEX, answer)
        if verdict is not None:
            state.claude_state = verdict["convergence"]["state"]
            _apply_side(ledger, state, CLAUDE, verdict)
            state.unresolved = frozenset(p.id for p in ledger.points.values()
                                         if p.is_disputed() or p.is_pending())
        ledger.rounds.append(state)
    return ledger


def _apply_side(ledger: Ledger, state: RoundState, side: str, doc: Side) -> None:
    for raw in doc["points"]:
        point = ledger.points.get(raw["id"])
        if point is None:
            point = Point(raw["id"], side, raw.get("claim", ""))
            ledger.points[point.id] = point
        elif point.owner == side and raw.get("claim"):
            point.claim = raw["claim"]
        evidence = list(raw.get("evidence") or [])
        _note_concession(ledger, point, side, state.n, raw["stance"], evidence)
        point.history[side].append(Stance(state.n, raw["stance"], evidence))
        if side == CLAUDE:
            point.claude_class, point.note = raw["class"], raw.get("note")
        fresh = set(evidence) - ledger._seen_evidence
        state.new_evidence = state.new_evidence or bool(fresh)
        ledger._seen_evidence |= fresh
    _apply_summaries(ledger, state, side, doc)


def _apply_summaries(ledger: Ledger, state: RoundState, side: str, doc: Side) -> None:
    if doc["convergence"]["state"] != "agree":
        return  # approving while saying "continue" is not an approval
    proposed = doc.get("proposed_summary")
    if proposed:
        summary = Summary(f"S-{len(ledger.summaries) + 1}", side, state.n, proposed.strip())
        ledger.summaries[summary.id] = summary
        state.approvals[side].add(summary.id)
    approved = doc.get("approve_summary")
    if approved in ledger.summaries:
        state.approvals[side].add(approved)


def _note_concession(ledger: Ledger, point: Point, side: str, n: int, stance: str,
                     evidence: list[str]) -> None:
    before = point.latest(side)
    if before and before.stance == "disagree" and stance != "disagree" and not evidence:
        ledger.concessions.append({"point": point.id, "side": side, "round": n,
                                   "from": "disagree", "to": stance})


def decide(ledger: Ledger, max_rounds: int) -> Decision:
    """consensus, stalemate or continue for the latest round that has Claude's verdict."""
    state = ledger.rounds[-1]
    previous = ledger.rounds[-2] if len(ledger.rounds) > 1 else None
    agreed = state.approvals[CODEX] & state.approvals[CLAUDE]
    if agreed and not state.unresolved:
        summary = ledger.summaries[max(agreed, key=lambda s: int(s[2:]))]
        return Decision(state.n, "consensus", [
            f"no open point remains and both sides approved {summary.id} "
            f"(proposed by {NAMES[summary.by]} in round {summary.round})"], summary=summary)
    stalemate = _stalemate_reason(state, previous)
    if stalemate:
        return Decision(state.n, "stalemate", [stalemate])
    awaiting = _awaiting_confirmation(ledger, state)
    if state.n >= max_rounds and not (awaiting and state.n == max_rounds):
        return Decision(state.n, "stalemate", [
            f"the round cap ({max_rounds}) is reached with {_count(state.unresolved)} open"])
    if awaiting:
        return Decision(state.n, "continue", [awaiting], kind="confirmation")
    return Decision(state.n, "continue", [_continue_reason(state)])


def _stalemate_reason(state: RoundState, previous: RoundState | None) -> str | None:
    if not state.unresolved:
        return None
    if state.codex_state == "stalemate":
        return "Codex declared a stalemate with points still open"
    if state.claude_state == "stalemate" and previous is not None:
        return "Claude declared a stalemate with points still open"
    if previous is None:
        return None
    if state.unresolved == previous.unresolved:
        return (f"the same open points ({', '.join(sorted(state.unresolved))}) stood two rounds "
                "running")
    if not state.new_evidence and not previous.new_evidence:
        return "two rounds running brought no new evidence"
    return None


def _awaiting_confirmation(ledger: Ledger, state: RoundState) -> str | None:
    """A summary one side approved this round that the other has yet to approve."""
    if state.unresolved:
        return None
    for side in SIDES:
        other = CLAUDE if side == CODEX else CODEX
        pending = state.approvals[side] - state.approvals[other]
        if pending:
            summary = ledger.summaries[max(pending, key=lambda s: int(s[2:]))]
            return (f"{NAMES[side]} approved {summary.id}; {NAMES[other]} must approve the same "
                    "text before the debate counts as agreed")
    return None


def _continue_reason(state: RoundState) -> str:
    if state.unresolved:
        return f"{_count(state.unresolved)} open: {', '.join(sorted(state.unresolved))}"
    return "no point is open, but no summary is approved by both sides yet"


def _count(ids: frozenset[str]) -> str:
    return f"{len(ids)} point{'s' if len(ids) != 1 else ''}"


# Replayed from a session's record: Codex's answers are the validated `answer` of each
# round's last completed turn; Claude's verdicts sit in the session's `engine.verdicts`.

def answers_by_round(data: AnySession) -> dict[int, Answer]:
    """Codex's validated answer per round (a recovery or re-ask replaces the round's)."""
    found: dict[int, Answer] = {}
    for turn in data["turns"]:
        if turn["status"] == "completed" and turn.get("answer") is not None:
            found[turn["round"]] = turn["answer"]
    return found


def records(data: AnySession, upto: int | None = None) -> list[tuple[Answer, Verdict | None]]:
    """(answer, verdict) for rounds 1, 2, … while each has an answer (up to `upto`)."""
    answers, verdicts = answers_by_round(data), data["engine"]["verdicts"]
    found = []
    n = 1
    while n in answers and (upto is None or n <= upto):
        found.append((answers[n], verdicts.get(str(n))))
        n += 1
    return found


def ledger_for(data: AnySession, upto: int | None = None) -> Ledger:
    return replay(records(data, upto))


def answer_problems(data: AnySession, round_no: int, answer: Answer) -> list[str]:
    """Rules of Codex's answer that the schema cannot express."""
    before = ledger_for(data, round_no - 1)
    found = duplicates(answer["points"])
    for point in answer["points"]:
        if point["id"].startswith("C-") and point["id"] not in before.points:
            found.append(f"points: {point['id']} is not a point Claude raised; new points "
                         "take the next free X-n id")
    approved = answer.get("approve_summary")
    if approved and approved not in before.summaries:
        found.append(f"approve_summary: {approved} is not a proposed summary")
    return found


def proposed_summary_id(data: AnySession, round_no: int, answer: Answer) -> str | None:
    """The id (`S-n`) the summary Codex proposes in `answer` takes, as the replay numbers it:
    the answer shows it, so Claude can approve that summary in the same round's verdict."""
    if answer["convergence"]["state"] != "agree" or not answer.get("proposed_summary"):
        return None
    return f"S-{len(ledger_for(data, round_no - 1).summaries) + 1}"


def duplicates(points: list[PointEntry]) -> list[str]:
    counts = Counter(p["id"] for p in points)
    return [f"points: {pid} appears {n} times" for pid, n in counts.items() if n > 1]


def point_row(point: Point) -> dict[str, Any]:
    """A point as the decisions and the reports show it: both sides' latest stance."""
    def side(name: str) -> dict[str, Any] | None:
        stance = point.latest(name)
        return {"stance": stance.stance, "evidence": stance.evidence,
                "round": stance.round} if stance else None

    return {"id": point.id, "claim": point.claim, "raised_by": point.owner,
            "class": point.claude_class, "claude": side(CLAUDE), "codex": side(CODEX),
            "note": point.note, "pending": point.is_pending()}
