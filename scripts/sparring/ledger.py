"""The debate ledger and the loop decision, computed from both sides' answers.

Nothing here trusts a side's say-so. The ledger is rebuilt by replaying every
round (Codex's validated answer, then Claude's verdict), so it is derived,
never edited.

A point is a claim, raised by one side (its owner: `C-n` Claude, `X-n` Codex). Each side's
latest stance puts it on one side of the claim: `agree` or `refine` hold it, `disagree`
rejects it, and `withdraw` is its owner giving it up (the owner's `disagree` reads the same).
A point is settled when both sides take the same side of its claim: **agreed** when both
hold it, **rejected** when both reject it, **withdrawn** when its owner gave it up before
the other side answered. It is open while the sides differ (**disputed**) or while the
other side has not answered it (**pending**).

Consensus needs no open point and both sides approving the same summary text (by its id)
in the same round; proposing a summary counts as approving it. One side alone never ends
a debate as agreed. A summary names the points it settles: each of its sentences names at
least one point of the debate.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sparring import evidence
from sparring.records import Answer, AnySession, PointEntry, Verdict

# One side's document of a round: Codex's answer or Claude's verdict (records.py).
Side = Answer | Verdict
# Whether a cited item holds (evidence.Mark.holds): (item, side, round) -> bool. Without
# one, nothing cited counts as new evidence.
Holds = Callable[[Any, str, int], bool]

CODEX, CLAUDE = "codex", "claude"
SIDES = (CODEX, CLAUDE)
NAMES = {CODEX: "Codex", CLAUDE: "Claude"}
OWNERS = {"C": CLAUDE, "X": CODEX}  # a point's id says who raised it
HOLDING = ("agree", "refine")
WITHDRAW = "withdraw"
AGREED, REJECTED, WITHDRAWN, DISPUTED, PENDING = (
    "agreed", "rejected", "withdrawn", "disputed", "pending")
SETTLED = (AGREED, REJECTED, WITHDRAWN)
POINT_ID = re.compile(r"\b[CX]-[1-9][0-9]*\b")
# A sentence ends at . ! or ? before a space; a line (a bullet) is one at least.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def other(side: str) -> str:
    return CLAUDE if side == CODEX else CODEX


def owner(point_id: str) -> str:
    return OWNERS[point_id[0]]


def holds(stance: str) -> bool:
    """Which side of its claim a stance takes: True holds it, False rejects it."""
    return stance in HOLDING


def state_of(owners: str | None, others: str | None) -> str:
    """A point's state from its owner's latest stance and the other side's (None: not yet
    given). The one rule: both the audit and the loop decision settle points by it."""
    if others is None:
        return PENDING if owners is None or holds(owners) else WITHDRAWN
    if owners is None:
        return PENDING
    if holds(owners) == holds(others):
        return AGREED if holds(owners) else REJECTED
    return DISPUTED


@dataclass
class Stance:
    round: int
    stance: str
    evidence: list[Any]


@dataclass
class Point:
    id: str
    owner: str
    claim: str
    history: dict[str, list[Stance]] = field(default_factory=lambda: {CODEX: [], CLAUDE: []})
    claude_class: str | None = None
    note: str | None = None
    raised_in: int = 0  # the round whose document first named it

    def latest(self, side: str) -> Stance | None:
        return self.history[side][-1] if self.history[side] else None

    def state(self) -> str:
        owners, others = self.latest(self.owner), self.latest(other(self.owner))
        return state_of(owners.stance if owners else None, others.stance if others else None)

    def is_open(self) -> bool:
        return self.state() in (DISPUTED, PENDING)

    def is_disputed(self) -> bool:
        return self.state() == DISPUTED

    def is_pending(self) -> bool:
        """The side that did not raise it has not answered it yet (and its owner holds it)."""
        return self.state() == PENDING

    def is_agreed(self) -> bool:
        return self.state() == AGREED

    def is_rejected(self) -> bool:
        """Both sides reject it, or its owner gave it up before anyone answered."""
        return self.state() in (REJECTED, WITHDRAWN)


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
    disputed: frozenset[str] = frozenset()  # open because the sides differ (not pending)
    new_evidence: bool = False
    challenge: bool = False  # a challenge turn answered this round (fresh thread)
    raised: int = 0  # points Codex's answer raised or answered this round


@dataclass
class Ledger:
    points: dict[str, Point] = field(default_factory=dict)
    summaries: dict[str, Summary] = field(default_factory=dict)
    rounds: list[RoundState] = field(default_factory=list)
    _seen_evidence: set[str] = field(default_factory=set)

    def open_ids(self) -> frozenset[str]:
        return frozenset(p.id for p in self.points.values() if p.is_open())

    def next_id(self, side: str) -> int:
        """The next free number of `side`'s point ids."""
        prefix = "C" if side == CLAUDE else "X"
        return 1 + max((int(pid[2:]) for pid in self.points if pid[0] == prefix), default=0)


@dataclass(frozen=True)
class Decision:
    round: int
    decision: str  # consensus | stalemate | continue (engine.py qualifies a consensus)
    reasons: list[str]
    kind: str = "round"  # for continue: round | confirmation | challenge
    summary: Summary | None = None


def replay(rounds: list[tuple[Answer, Verdict | None]], checked: Holds | None = None,
           challenges: Iterable[int] = ()) -> Ledger:
    """Build the ledger from (codex answer, claude verdict or None) per round, in order.
    `checked` says whether a cited item holds (only such evidence is new evidence);
    `challenges` are the rounds a challenge turn answered."""
    ledger = Ledger()
    challenged = frozenset(challenges)
    for n, (answer, verdict) in enumerate(rounds, start=1):
        state = RoundState(n, answer["convergence"]["state"], None, {CODEX: set(), CLAUDE: set()},
                           challenge=n in challenged, raised=len(answer["points"]))
        _apply_side(ledger, state, CODEX, answer, checked)
        if state.challenge and not state.raised and ledger.rounds:
            # a challenge that found nothing leaves the approvals it was asked to test
            state.approvals[CODEX] = set(ledger.rounds[-1].approvals[CODEX])
        if verdict is not None:
            state.claude_state = verdict["convergence"]["state"]
            _apply_side(ledger, state, CLAUDE, verdict, checked)
            state.unresolved = ledger.open_ids()
            state.disputed = frozenset(p.id for p in ledger.points.values()
                                       if p.is_disputed())
        ledger.rounds.append(state)
    return ledger


def _apply_side(ledger: Ledger, state: RoundState, side: str, doc: Side,
                checked: Holds | None) -> None:
    for raw in doc["points"]:
        point = ledger.points.get(raw["id"])
        if point is None:
            point = Point(raw["id"], side, raw.get("claim", ""), raised_in=state.n)
            ledger.points[point.id] = point
        elif point.owner == side and raw.get("claim"):
            point.claim = raw["claim"]
        cited = list(raw.get("evidence") or [])
        point.history[side].append(Stance(state.n, raw["stance"], cited))
        if side == CLAUDE:
            point.claude_class, point.note = raw.get("class"), raw.get("note")
        fresh = {evidence.normal(evidence.citation(item).cite) for item in cited
                 if checked is not None and checked(item, side, state.n)}
        fresh -= ledger._seen_evidence
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


def decide(ledger: Ledger, max_rounds: int) -> Decision:
    """consensus, stalemate or continue for the latest round that has Claude's verdict."""
    state = ledger.rounds[-1]
    previous = ledger.rounds[-2] if len(ledger.rounds) > 1 else None
    agreed = state.approvals[CODEX] & state.approvals[CLAUDE]
    if agreed and not state.unresolved:
        summary = ledger.summaries[max(agreed, key=lambda s: int(s[2:]))]
        tested = (f"; the challenge turn (round {state.n}) raised no point against it"
                  if state.challenge and not state.raised else "")
        return Decision(state.n, "consensus", [
            f"no open point remains and both sides approved {summary.id} "
            f"(proposed by {NAMES[summary.by]} in round {summary.round}){tested}"],
            summary=summary)
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
    if state.codex_state == "stalemate" and not state.challenge:
        return "Codex declared a stalemate with points still open"
    if state.claude_state == "stalemate" and previous is not None:
        return "Claude declared a stalemate with points still open"
    if previous is None or state.challenge:
        return None  # a challenge's points are new: they get their round
    if state.disputed and state.disputed == previous.disputed:
        return (f"the same disputed points ({', '.join(sorted(state.disputed, key=order))}) "
                "stood two rounds running")
    if not state.new_evidence and not previous.new_evidence:
        return "two rounds running brought no new evidence that checks out"
    return None


def _awaiting_confirmation(ledger: Ledger, state: RoundState) -> str | None:
    """A summary one side approved this round that the other has yet to approve."""
    if state.unresolved:
        return None
    for side in SIDES:
        pending = state.approvals[side] - state.approvals[other(side)]
        if pending:
            summary = ledger.summaries[max(pending, key=lambda s: int(s[2:]))]
            return (f"{NAMES[side]} approved {summary.id}; {NAMES[other(side)]} must approve "
                    "the same text before the debate counts as agreed")
    return None


def _continue_reason(state: RoundState) -> str:
    if state.unresolved:
        return (f"{_count(state.unresolved)} open: "
                f"{', '.join(sorted(state.unresolved, key=order))}")
    return "no point is open, but no summary is approved by both sides yet"


def _count(ids: frozenset[str]) -> str:
    return f"{len(ids)} point{'s' if len(ids) != 1 else ''}"


def order(pid: str) -> tuple[int, int]:
    """Codex's points first, then Claude's, each by number."""
    return (0 if pid[0] == "X" else 1), int(pid[2:])


# --- a summary names the points it settles ---------------------------------------------

def sentences(text: str) -> list[str]:
    """The sentences of a summary: each line (a bullet) is one at least, split further at
    `.`, `!` or `?` before a space. A heading, or a line ending in `:` that leads into a list,
    asserts nothing and is left out."""
    found: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line or line.startswith("#") or line.endswith(":"):
            continue
        found += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return found


def summary_problems(known: Ledger, text: str, where: str) -> list[str]:
    """What makes `text` a summary that says more than the record: a sentence that names no
    point, or names one there is not. `known`: the ledger with the proposing side's document
    applied. A point not yet settled may be named: a consensus needs every point settled, so
    the other side's approval settles it or nothing is agreed."""
    found: list[str] = []
    units = sentences(text)
    if not units:
        return [f"{where}: it holds no sentence"]
    for n, sentence in enumerate(units, start=1):
        named = POINT_ID.findall(sentence)
        if not named:
            found.append(f"{where}: sentence {n} names no point; each sentence states what a "
                         "settled point (agreed, or rejected by both) holds, by its id")
            continue
        unknown = [pid for pid in named if pid not in known.points]
        if unknown:
            found.append(f"{where}: sentence {n} names {', '.join(unknown)}, which is no point")
    return found


def numbered(text: str) -> list[dict[str, Any]]:
    """A summary sentence by sentence, with the points each names (the confirmation step)."""
    return [{"sentence": n, "text": s, "points": sorted(set(POINT_ID.findall(s)), key=order)}
            for n, s in enumerate(sentences(text), start=1)]


# Replayed from a session's record: Codex's answers are the validated `answer` of each
# round's last completed turn; Claude's verdicts sit in the session's `engine.verdicts`.

def answers_by_round(data: AnySession) -> dict[int, Answer]:
    """Codex's validated answer per round (a recovery, re-ask or reconsideration replaces
    the round's)."""
    found: dict[int, Answer] = {}
    for turn in data["turns"]:
        if turn["status"] == "completed" and turn.get("answer") is not None:
            found[turn["round"]] = turn["answer"]
    return found


def challenge_rounds(data: AnySession) -> frozenset[int]:
    """The rounds a challenge answered (a turn on a fresh thread, without the transcript,
    or its re-ask on that thread)."""
    answered = answers_by_round(data)
    return frozenset(n for n in _challenged(data) if n in answered)


def _challenged(data: AnySession) -> set[int]:
    return {int(t["round"]) for t in data["turns"] if t.get("purpose") == "challenge"}


def records(data: AnySession, upto: int | None = None) -> list[tuple[Answer, Verdict | None]]:
    """(answer, verdict) for rounds 1, 2, … while each has an answer (up to `upto`)."""
    answers, verdicts = answers_by_round(data), data["engine"]["verdicts"]
    found = []
    n = 1
    while n in answers and (upto is None or n <= upto):
        found.append((answers[n], verdicts.get(str(n))))
        n += 1
    return found


def ledger_for(data: AnySession, upto: int | None = None,
               checked: Holds | None = None) -> Ledger:
    return replay(records(data, upto), checked, challenge_rounds(data))


def options(data: AnySession) -> list[str]:
    """The options the question names (round one's `OPTIONS`), one per line; none when it
    named none."""
    for turn in data["turns"]:
        given = (turn.get("template") or {}).get("options")
        if given:
            return [o for o in (_BULLET.sub("", line).strip() for line in str(given).splitlines())
                    if o]
    return []


_CHOICE = re.compile(r"\**choice\**\s*:\s*\**\s*(?P<value>.+?)\s*\**\s*$", re.I)
_CONFIDENCE = re.compile(r"\**confidence\**\s*:\s*\**\s*(?P<value>[0-9]{1,3})\s*"
                         r"(?:%|/\s*100)?\s*\**\s*$", re.I)


def first_choice(text: str) -> tuple[str | None, int | None]:
    """The first choice and the confidence a sealed analysis names, on lines of their own
    (`Choice: SQLite`, `Confidence: 70`), as its template asks."""
    choice = confidence = None
    for line in text.splitlines():
        line = line.strip().lstrip("-*+ ").strip()
        if choice is None and (found := _CHOICE.fullmatch(line)):
            choice = found.group("value").strip() or None
        if confidence is None and (number := _CONFIDENCE.fullmatch(line)):
            confidence = min(int(number.group("value")), 100)
    return choice, confidence


def choice_problems(choice: Any, given: list[str], where: str) -> list[str]:
    """A first choice must be one of the options, when the question names options."""
    if not given:
        return []
    if not choice:
        return [f"{where}: the question names options ({'; '.join(given)}): name your choice"]
    if str(choice).strip().casefold() not in {o.casefold() for o in given}:
        return [f"{where}: {choice!r} is not one of the options ({'; '.join(given)})"]
    return []


def answer_problems(data: AnySession, round_no: int, answer: Answer) -> list[str]:
    """Rules of Codex's answer that the schema cannot express (a challenge's, in a round a
    challenge turn opened, are its own)."""
    purpose = "challenge" if round_no in _challenged(data) else "round"
    earlier = records(data, round_no - 1)
    before = replay(earlier, None, challenge_rounds(data))
    found = duplicates(answer["points"])
    fresh = before.next_id(CODEX)
    for point in answer["points"]:
        pid = point["id"]
        if pid.startswith("C-") and pid not in before.points:
            found.append(f"points: {pid} is not a point the other analyst raised; new points "
                         "take the next free X-n id")
        if point["stance"] == WITHDRAW and pid.startswith("C-"):
            found.append(f"points: {pid} is the other analyst's: reject it with disagree; "
                         "withdraw is for your own points")
        if point["stance"] == WITHDRAW and not (point.get("note") or "").strip():
            found.append(f"points: {pid}: a withdrawal needs its reason in note")
        if purpose == "challenge" and pid.startswith("X-") and pid not in before.points \
                and int(pid[2:]) < fresh:
            found.append(f"points: {pid} is taken; number new points from X-{fresh}")
    found += _unanswered(before, answer, round_no, purpose)
    found += _answer_summary(before, earlier, answer, purpose)
    if round_no == 1:
        found += choice_problems(answer.get("choice"), options(data), "choice")
        if options(data) and answer.get("confidence") is None:
            found.append("confidence: the question names options: say how sure you are, 0 to "
                         "100")
    return found


def _unanswered(before: Ledger, answer: Answer, round_no: int, purpose: str) -> list[str]:
    """Every point left open by the last verdict was shown to Codex: it answers each."""
    if round_no == 1 or purpose == "challenge":
        return []
    given = {p["id"] for p in answer["points"]}
    missing = sorted(before.open_ids() - given, key=order)
    if not missing:
        return []
    return [f"points: {', '.join(missing)} {'are' if len(missing) > 1 else 'is'} open and "
            "shown to you; answer each by its id (agree, refine or disagree; withdraw for "
            "your own)"]


def _answer_summary(before: Ledger, earlier: list[tuple[Answer, Verdict | None]],
                    answer: Answer, purpose: str) -> list[str]:
    found = []
    approved = answer.get("approve_summary")
    if approved and approved not in before.summaries:
        found.append(f"approve_summary: {approved} is not a proposed summary")
    if approved and answer.get("summary_objections"):
        found.append("approve_summary: you object to sentences of it; approve it or object")
    if purpose == "challenge" and (approved or answer.get("proposed_summary")):
        found.append("proposed_summary and approve_summary stay null in this review")
    text = answer.get("proposed_summary")
    if text and answer["convergence"]["state"] == "agree" and purpose != "challenge":
        found += summary_problems(replay([*earlier, (answer, None)]), text,
                                  "proposed_summary")
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


def point_row(point: Point, shown: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """A point as the decisions and the reports show it: both sides' latest stance."""
    def side(name: str) -> dict[str, Any] | None:
        stance = point.latest(name)
        return {"stance": stance.stance, "evidence": [
            shown(item) if shown else item for item in stance.evidence],
            "round": stance.round} if stance else None

    return {"id": point.id, "claim": point.claim, "raised_by": point.owner,
            "class": point.claude_class, "claude": side(CLAUDE), "codex": side(CODEX),
            "note": point.note, "state": point.state(), "pending": point.is_pending()}
