"""Who moved: a side taking the other side's position on a point, and what backs the move.

The record is a list of `Entry`s, one side's stance on one point in one round, in the order
they were written (workflows/*audit.py read them from a debate; turn/turns.py from Codex's
answer as it ends). A side *concedes* a point when, its position on the claim having
differed from the other side's latest, it takes the other side's: `disagree` to `agree` or
`refine` on the other's point, or `withdraw` on its own once the other rejected it.

A concession is **backed** when it cites evidence that holds (evidence.py: a `path:line`
whose quote is verified, or a URL or a command seen in that round's record) and that was
not on the record for that point when the conceding side last took its old position, who
ever brought it: being persuaded by the other side's new evidence is the most legitimate
way to change one's mind. A citation without a quote borrows the quote of the same
citation brought on that point before. Anything else is flagged
`conceded_without_new_evidence`.

Each concession keeps what the side said before it moved (its last argument, evidence and
what it said would change its mind): the minority report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sparring import evidence
from sparring.ledger import holds

FLAG = "conceded_without_new_evidence"


@dataclass(frozen=True)
class Entry:
    """One side's stance on one point in one round (round 0: before the other side spoke)."""

    point: str
    side: str
    round: int
    stance: str  # agree | refine | disagree | withdraw
    claim: str = ""
    evidence: tuple[Any, ...] = ()  # as cited: strings or {"cite", "quote"}
    source: str = ""  # where it was said, for the reader: a file, "sealed analysis"…
    note: str = ""  # why (Claude's note, Codex's note)
    mind: str = ""  # what it said would change its mind


def entry_of(point: Any, side: str, n: int, source: str) -> Entry:
    """An entry from a point of a structured answer or verdict."""
    return Entry(point["id"], side, n, point["stance"], point.get("claim") or "",
                 tuple(point.get("evidence") or ()), source, point.get("note") or "",
                 point.get("would_change_my_mind") or "")


def entries_of(rounds: list[tuple[Any, Any]]) -> list[Entry]:
    """The entries of structured rounds, (Codex's answer, Claude's verdict or None) for
    rounds 1, 2, …, in the order they were written."""
    found: list[Entry] = []
    for n, (answer, verdict) in enumerate(rounds, start=1):
        found += [entry_of(p, "codex", n, "Codex's answer") for p in answer["points"]]
        if verdict is not None:
            found += [entry_of(p, "claude", n, "Claude's verdict") for p in verdict["points"]]
    return found


def concessions(entries: list[Entry], checker: evidence.Checker) -> list[dict[str, Any]]:
    """Every concession in `entries`, in order, checked."""
    found: list[dict[str, Any]] = []
    histories: dict[str, list[Entry]] = {}
    for entry in entries:
        history = histories.setdefault(entry.point, [])
        before, theirs = _latest(history, entry.side), _latest(history, _other(entry.side))
        if (before is not None and theirs is not None
                and holds(before.stance) != holds(theirs.stance)
                and holds(entry.stance) == holds(theirs.stance)):
            found.append(_concession(entry, before, history, checker))
        history.append(entry)
    return found


def _concession(entry: Entry, before: Entry, history: list[Entry],
                checker: evidence.Checker) -> dict[str, Any]:
    at = max(i for i, e in enumerate(history) if e is before)
    on_record = {evidence.normal(evidence.citation(item).cite)
                 for e in history[:at + 1] for item in e.evidence}
    checked = [_checked(item, entry, history, on_record, checker) for item in entry.evidence]
    backed = any(c["counts"] for c in checked)
    return {"point": entry.point, "side": entry.side, "round": entry.round,
            "from": before.stance, "to": entry.stance, "evidence": checked,
            "new_evidence": backed, "flag": None if backed else FLAG,
            "before": {"round": before.round, "stance": before.stance,
                       "argument": before.note or before.claim,
                       "evidence": [checker.mark(item, before.side, before.round).to_dict()
                                    for item in before.evidence],
                       "would_change_my_mind": before.mind, "source": before.source}}


def _checked(item: Any, entry: Entry, history: list[Entry], on_record: set[str],
             checker: evidence.Checker) -> dict[str, Any]:
    cite, quote = evidence.citation(item)
    if quote is None:
        quote = next((q for e in reversed(history) for c, q in evidence.citations(e.evidence)
                      if q and evidence.normal(c) == evidence.normal(cite)), None)
    mark = checker.mark(evidence.Citation(cite, quote), entry.side, entry.round)
    new = evidence.normal(cite) not in on_record
    why = mark.why if new else "; ".join(filter(None, [
        mark.why, "not new: it was on the record for this point before the move"]))
    return {**mark.to_dict(), "cited": evidence.shown(item), "new": new,
            "counts": mark.holds and new, "why": why}


def _latest(history: list[Entry], side: str) -> Entry | None:
    return next((e for e in reversed(history) if e.side == side), None)


def _other(side: str) -> str:
    return "codex" if side == "claude" else "claude"
