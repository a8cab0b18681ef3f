"""How the agreement was reached: the agreement audit, computed from a debate's record.

Each workflow's package turns its record into `Entry`s (moves.py), one side's stance on one
point in one round, in the order they were written (structured/audit.py from the ledger's
answers and verdicts, arch_debate/audit.py and deep_discussion/audit.py from the point
lines of their prose rounds, markers.point_lines), and `compute` makes the audit from them.
No model's say-so decides anything here:

- every point has its stance per side per round and an outcome, by the ledger's one rule
  (ledger.state_of): `agreed` (both hold it), `rejected` (both reject it), `withdrawn` (its
  owner gave it up before the other side answered), `open` (the sides differ), or
  `dropped` (raised and never answered by the other side, or left disputed and missing
  from the final brief); and who conceded it, when a concession settled it;
- a point both sides reached on their own, before either saw the other's analysis (Claude's
  sealed analysis against Codex's first answer), and agreed to the end, is `independent`:
  only when the runner's check of Codex's round one (turn/independence.py) is on record and
  found nothing; when it found Codex saw Claude's analysis or sparring's records,
  independence is void and no point is;
- every citation is marked (evidence.py: verified, not matching, unquoted, unread,
  unchecked), and every concession checked (moves.py): backed by new evidence that holds,
  or flagged `conceded_without_new_evidence`; what the conceding side said before it moved
  is kept (the minority report);
- who moved, and `unchallenged` when no point was ever disputed and no challenge turn
  argued against the agreement;
- `contested`: the settled points that rest on a flagged concession, and the points of
  Claude's sealed analysis nobody answered. `qualified` says what that makes of an
  agreement;
- `revisit_when`: what each side said would change its mind about what still stands (the
  agreed and the open points): a structured answer's `would_change_my_mind`, the latest
  each side gave on each such point; a prose round's `Revisit when:` line
  (markers.revisit_when), the latest of each side's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparring import evidence, moves
from sparring.ledger import AGREED, DISPUTED, PENDING, REJECTED, WITHDRAWN, holds, order, state_of
from sparring.moves import FLAG as FLAG
from sparring.moves import Entry as Entry
from sparring.turn import independence as independence_check
from sparring.workflows import markers

CLAUDE, CODEX = "claude", "codex"
NAMES = {CLAUDE: "Claude", CODEX: "Codex"}
OWNERS = {"C": CLAUDE, "X": CODEX}  # a point's id says who raised it: C-n Claude, X-n Codex
_ID = re.compile(r"\b[CX]-[1-9][0-9]*\b")
# What a consensus is called when the record does not carry it (qualified).
CONTESTED, UNCHALLENGED = "contested", "unchallenged"


@dataclass
class Record:
    """A debate's record, as the audit reads it."""

    entries: list[Entry]
    # round -> texts where a cited command or URL counts as seen: the commands Codex ran
    # in that round's turns, and the text handed in with that round (search results)
    activity: Mapping[int, Sequence[str]] = field(default_factory=dict)
    # round -> what Codex had opened by then on the thread that answered it (turn/activity.py)
    reads: Mapping[int, Sequence[tuple[str, str]]] = field(default_factory=dict)
    # point -> the point of Claude's sealed analysis that already held it (Codex raised it
    # in its first answer): a candidate for independent agreement
    sealed: dict[str, str] = field(default_factory=dict)
    independence: str | None = None  # why independence cannot be measured, when it cannot
    # the runner's check of Codex's round one (turn/independence.py), as recorded at the seal
    check: dict[str, Any] | None = None
    brief: frozenset[str] | None = None  # the point ids the final brief names, if one exists
    challenged: bool = False  # a challenge turn argued against the agreement (structured)
    # side -> (where, text): the latest `Revisit when:` line of each side's prose rounds
    revisit: dict[str, tuple[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def owner(point: str) -> str:
    return OWNERS[point[0]]


def named_points(text: str) -> frozenset[str]:
    """The point ids a text names anywhere (a final brief, a synthesis)."""
    return frozenset(_ID.findall(text))


def prose_entries(rounds: list[tuple[int, str, str, str]]
                  ) -> tuple[list[Entry], list[str]]:
    """The point lines of prose rounds, (round, side, where, text) in the order written, as
    entries; and notes on the lines that do not count (a point the other side never raised,
    or one named twice in one round)."""
    entries: list[Entry] = []
    notes: list[str] = []
    raised: set[str] = set()
    for n, side, where, text in rounds:
        seen: set[str] = set()
        for line in markers.point_lines(text):
            pid = line.id
            if pid in seen:
                notes.append(f"{where} line {line.line}: {pid} named again in the same round; "
                             "the first counts")
                continue
            if owner(pid) != side and pid not in raised:
                notes.append(f"{where} line {line.line}: {pid} is not a point "
                             f"{NAMES[owner(pid)]} raised; a new point takes the writer's "
                             f"own prefix ({'C' if side == CLAUDE else 'X'}-n)")
                continue
            seen.add(pid)
            raised.add(pid)
            entries.append(Entry(pid, side, n, line.stance, line.claim, line.evidence,
                                 f"{where}:{line.line}"))
    return entries, notes


def prose_revisit(rounds: list[tuple[int, str, str, str]]) -> dict[str, tuple[str, str]]:
    """Each side's latest `Revisit when:` line in prose rounds, (round, side, where, text)
    in the order written: side -> (where, what it said)."""
    found: dict[str, tuple[str, str]] = {}
    for _, side, where, text in rounds:
        said = markers.revisit_when(text)
        if said:
            found[side] = (where, said)
    return found


def checker_of(record: Record, root: Path) -> evidence.Checker:
    """The evidence checker of a debate's record (it reads each cited file once)."""
    return evidence.Checker(root, evidence.Record(record.activity, record.reads))


def compute(record: Record, root: Path, marks: evidence.Checker | None = None
            ) -> dict[str, Any]:
    """The audit as the report's JSON holds it (`agreement_audit`); `marks`: a checker of
    this record already made (its files read once)."""
    checker = marks or checker_of(record, root)
    concessions = moves.concessions(record.entries, checker)
    histories: dict[str, list[Entry]] = {}
    for entry in record.entries:
        histories.setdefault(entry.point, []).append(entry)
    independence = _independence(record)
    rows = [_point_row(pid, history, record, concessions, independence["state"] == "checked",
                       checker)
            for pid, history in sorted(histories.items(), key=lambda kv: order(kv[0]))]
    return _assemble(rows, concessions, record, independence)


def _independence(record: Record) -> dict[str, Any]:
    """Whether a point may be `independent` (turn/independence.verdict), unless the record
    says why independence cannot be measured at all."""
    if record.independence is not None:
        return {"state": "not_measured", "why": record.independence, "seen": []}
    return independence_check.verdict(record.check)


def _latest(history: list[Entry], side: str) -> Entry | None:
    return next((e for e in reversed(history) if e.side == side), None)


def _ever_disputed(history: list[Entry]) -> bool:
    """Whether the sides, both having spoken, ever took opposite sides of the claim."""
    latest: dict[str, Entry] = {}
    for entry in history:
        latest[entry.side] = entry
        if CLAUDE in latest and CODEX in latest and (
                holds(latest[CLAUDE].stance) != holds(latest[CODEX].stance)):
            return True
    return False


def _point_row(pid: str, history: list[Entry], record: Record,
               concessions: list[dict[str, Any]], checked: bool,
               checker: evidence.Checker) -> dict[str, Any]:
    raiser = owner(pid)
    other = CODEX if raiser == CLAUDE else CLAUDE
    own = [e for e in history if e.side == raiser]
    # the point as its owner raised it (later lines are comments on it)
    claim = next((e.claim for e in own if e.claim), "") or next(
        (e.claim for e in history if e.claim), "")
    latest = {side: _latest(history, side) for side in (CLAUDE, CODEX)}
    owners, others = latest[raiser], latest[other]
    state = state_of(owners.stance if owners else None, others.stance if others else None)
    moved = [c for c in concessions if c["point"] == pid]
    disputed = _ever_disputed(history)
    outcome, why = _outcome(state, pid, record, NAMES[other])
    conceded = moved[-1] if moved and outcome in (AGREED, REJECTED) else None
    independent = (checked and pid in record.sealed and outcome == AGREED
                   and not disputed and not moved)
    return {"id": pid, "claim": claim, "raised_by": raiser,
            "raised_in": min((e.round for e in own), default=history[0].round),
            "outcome": outcome, "why": why, "independent": independent,
            "conceded_by": conceded["side"] if conceded else None,
            "rests_on_flag": bool(conceded and conceded["flag"]),
            "disputed": disputed, "sealed_as": record.sealed.get(pid),
            "stances": [_stance(e, checker) for e in history]}


def _outcome(state: str, pid: str, record: Record, other: str) -> tuple[str, str]:
    if state == PENDING:
        return "dropped", f"{other} never answered it"
    if state == DISPUTED:
        if record.brief is not None and pid not in record.brief:
            return "dropped", "still disputed, and the final brief does not name it"
        return "open", "still disputed"
    if state == WITHDRAWN:
        return WITHDRAWN, "withdrawn by its owner before the other side answered"
    return state, ""


def _stance(entry: Entry, checker: evidence.Checker) -> dict[str, Any]:
    return {"round": entry.round, "side": entry.side, "stance": entry.stance,
            "evidence": [{**checker.mark(item, entry.side, entry.round).to_dict(),
                          "cited": evidence.shown(item)} for item in entry.evidence],
            "note": entry.note, "would_change_my_mind": entry.mind, "source": entry.source}


def _assemble(rows: list[dict[str, Any]], concessions: list[dict[str, Any]],
              record: Record, independence: dict[str, Any]) -> dict[str, Any]:
    def count(*outcomes: str) -> int:
        return sum(1 for r in rows if r["outcome"] in outcomes)

    flagged = [c for c in concessions if c["flag"]]
    counts = {
        "points": len(rows),
        "independent": sum(1 for r in rows if r["independent"]),
        "agreed_on_first_reading": sum(1 for r in rows if r["outcome"] == AGREED
                                       and not r["independent"] and not r["conceded_by"]),
        "with_new_evidence": len(concessions) - len(flagged),
        "without_new_evidence": len(flagged),
        "rejected": count(REJECTED, WITHDRAWN),
        "open": count("open"),
        "dropped": count("dropped"),
    }
    undisputed = bool(rows) and not any(r["disputed"] for r in rows)
    unchallenged = undisputed and not record.challenged
    contested = _contested(rows, record)
    return {"summary": _summary(counts, flagged, undisputed, record.challenged, independence),
            "counts": counts, "unchallenged": unchallenged, "moved": _moved(concessions),
            "independence": independence, "points": rows, "concessions": concessions,
            "minority": [_dissent(c) for c in concessions], "contested": contested,
            "evidence": _marks(rows), "revisit_when": _revisit(rows, record),
            "notes": list(record.notes)}


def _revisit(rows: list[dict[str, Any]], record: Record) -> list[dict[str, Any]]:
    """What would change each side's mind about what still stands, once per side and text,
    with the points it was said of (a prose round's line is said of none)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        if row["outcome"] not in (AGREED, "open"):
            continue
        for side in (CLAUDE, CODEX):
            # the side's latest word on the point: an answer that leaves it out (Codex's
            # null: nothing would) replaces what an earlier round said
            said = next((s["would_change_my_mind"] for s in reversed(row["stances"])
                         if s["side"] == side), "")
            if said:
                item = found.setdefault((side, said), {"side": side, "said": said,
                                                       "points": [], "where": None})
                item["points"].append(row["id"])
    for side, (where, said) in record.revisit.items():
        found.setdefault((side, said), {"side": side, "said": said, "points": [],
                                        "where": where})
    return sorted(found.values(), key=lambda item: item["side"])


def _contested(rows: list[dict[str, Any]], record: Record) -> list[dict[str, str]]:
    """What an agreement would rest on without the record carrying it."""
    found = [{"point": r["id"], "why": f"settled by {NAMES[r['conceded_by']]}'s concession "
              "without new evidence"} for r in rows if r["rests_on_flag"]]
    # Round 0 is the sealed analysis in structured debates (its entries say so), but
    # Claude's opening round in an arch-debate: a point dropped there is no sealed point.
    found += [{"point": r["id"], "why": "a point of Claude's sealed analysis nobody answered"}
              for r in rows if r["outcome"] == "dropped" and any(
                  s["round"] == 0 and s["source"].startswith("sealed analysis")
                  for s in r["stances"])]
    return found


def _dissent(concession: dict[str, Any]) -> dict[str, Any]:
    """What the side that gave a point up said before it moved."""
    before = concession["before"]
    return {"point": concession["point"], "side": concession["side"],
            "round": concession["round"], "gave_up": f"{before['stance']} → {concession['to']}",
            "argument": before["argument"], "evidence": before["evidence"],
            "would_change_my_mind": before["would_change_my_mind"],
            "flag": concession["flag"]}


def _marks(rows: list[dict[str, Any]]) -> dict[str, int]:
    found = dict.fromkeys(evidence.MARKS, 0)
    for row in rows:
        for stance in row["stances"]:
            for item in stance["evidence"]:
                found[item["mark"]] += 1
    return found


def _moved(concessions: list[dict[str, Any]]) -> dict[str, Any]:
    by_side: dict[str, dict[str, Any]] = {}
    for side in (CLAUDE, CODEX):
        mine = [c for c in concessions if c["side"] == side]
        directions: dict[str, int] = {}
        for c in mine:
            key = f"{c['from']} -> {c['to']}"
            directions[key] = directions.get(key, 0) + 1
        by_side[side] = {"concessions": len(mine), "directions": directions}
    sentence = None
    one_sided = None
    total = len(concessions)
    for side, other in ((CLAUDE, CODEX), (CODEX, CLAUDE)):
        if total and by_side[side]["concessions"] == total:
            one_sided = side
            sentence = (f"{NAMES[side]} made every concession ({total}); {NAMES[other]} "
                        "never moved from a position it held.")
    return {**by_side, "sentence": sentence, "one_sided": one_sided}


def _summary(counts: dict[str, int], flagged: list[dict[str, Any]], undisputed: bool,
             challenged: bool, independence: dict[str, Any]) -> str:
    if not counts["points"]:
        return ("Agreement: no points on record (no round marked any), so how it was "
                "reached cannot be audited.")
    who = "; ".join(f"{NAMES[c['side']]}, {c['point']}" for c in flagged)
    n = counts["independent"]
    void = (f"independence void ({independence['why']}), "
            if independence["state"] == "void" else "")
    line = (f"Agreement: {void}{n} point{'s' if n != 1 else ''} independent, "
            f"{counts['agreed_on_first_reading']} agreed on first reading, "
            f"{counts['with_new_evidence']} reached with new evidence, "
            f"{counts['without_new_evidence']} conceded without new evidence"
            f"{f' ({who})' if who else ''}, {counts['rejected']} rejected by both, "
            f"{counts['open']} still open, {counts['dropped']} dropped.")
    if undisputed and challenged:
        return line + (" No point was disputed between the sides; a challenge turn argued "
                       "against the agreement.")
    return line + (" Unchallenged: no point was ever disputed." if undisputed else "")


def qualified(audit: dict[str, Any], challenged: bool | None) -> tuple[str | None, list[str]]:
    """What an agreement that the rounds reached is, once the record is read: `contested`
    (it rests on a concession made without new evidence, or on a sealed point nobody
    answered), `unchallenged` (no point was ever disputed, and no challenge turn tested it:
    `challenged` False; None where the workflow has no challenge turn), or None (a plain
    consensus); with the reasons, naming the points."""
    if audit["contested"]:
        return CONTESTED, [f"contested: {c['point']} ({c['why']})" for c in audit["contested"]]
    if audit["unchallenged"] and not challenged:
        tested = "" if challenged is None else ", and no challenge turn tested the agreement"
        return UNCHALLENGED, [f"unchallenged: no point was ever disputed{tested}"]
    return None, []
