"""How the agreement was reached: the agreement audit, computed from a debate's record.

Each workflow's package turns its record into `Entry`s, one side's stance on one point in
one round, in the order they were written (structured/audit.py from the ledger's answers
and verdicts, arch_debate/audit.py and deep_discussion/audit.py from the point lines of
their prose rounds, markers.point_lines), and `compute` makes the audit from them. No
model's say-so decides anything here:

- every point has its stance per side per round and an outcome: `agreed`, `open`,
  `conceded_by_claude`, `conceded_by_codex`, or `dropped` (raised and never answered by the
  other side, or left unresolved and missing from the final brief);
- a point both sides reached on their own, before either saw the other's analysis (Claude's
  sealed analysis against Codex's first answer), and agreed to the end, is `independent`:
  only when the runner's check of Codex's round one (turn/independence.py) is on record and
  found nothing; when it found Codex saw Claude's analysis or sparring's records,
  independence is void and no point is;
- a concession (a side moving from `disagree` to `agree` or `refine`; in prose rounds also
  the owner of a point withdrawing it, its own stance to `disagree`, once the other side
  rejected it) is checked: each piece of evidence it cites must hold (a `path:line` exists
  in the project at that line count,
  read through paths.py: inside the project, no link followed; a command or test appears in
  that round's recorded activity or in the text handed in that round) and be new (neither
  side cited it on that point before); without one such piece it is flagged
  `conceded_without_new_evidence`;
- who moved, and `unchallenged` when both sides agreed on every point the first time they
  could.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparring import paths
from sparring.errors import SparringError
from sparring.records import AnySession, TurnRecord
from sparring.store.sessions import Session
from sparring.turn import independence
from sparring.turn.view import seen
from sparring.workflows import markers

CLAUDE, CODEX = "claude", "codex"
NAMES = {CLAUDE: "Claude", CODEX: "Codex"}
OWNERS = {"C": CLAUDE, "X": CODEX}  # a point's id says who raised it: C-n Claude, X-n Codex
HOLDING = ("agree", "refine")
FLAG = "conceded_without_new_evidence"
_PATH_LINE = re.compile(r"(?P<path>[^\s:`]+):(?P<line>[1-9][0-9]*)(?:-(?P<end>[1-9][0-9]*))?")
_ID = re.compile(r"\b[CX]-[1-9][0-9]*\b")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.I)
# What the runner reads of one cited file, at most (a source file is far smaller).
_EVIDENCE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Entry:
    """One side's stance on one point in one round (round 0: before the other side spoke)."""

    point: str
    side: str
    round: int
    stance: str  # agree | disagree | refine
    claim: str = ""
    evidence: tuple[str, ...] = ()
    source: str = ""  # where it was said, for the reader: a file, "sealed analysis"…


@dataclass
class Record:
    """A debate's record, as the audit reads it."""

    entries: list[Entry]
    # round -> texts where a cited command or test counts as seen: the commands Codex ran
    # in that round's turns, and the text handed in with that round (search results)
    activity: dict[int, list[str]] = field(default_factory=dict)
    # point -> the point of Claude's sealed analysis that already held it (Codex raised it
    # in its first answer): a candidate for independent agreement
    sealed: dict[str, str] = field(default_factory=dict)
    independence: str | None = None  # why independence cannot be measured, when it cannot
    # the runner's check of Codex's round one (turn/independence.py), as recorded at the seal
    check: dict[str, Any] | None = None
    brief: frozenset[str] | None = None  # the point ids the final brief names, if one exists
    # prose rounds: the owner of a point may withdraw it (its own stance to `disagree` while
    # the other side disagrees): a concession too, and the point is settled against it
    withdrawals: bool = False
    notes: list[str] = field(default_factory=list)


def codex_activity(session: Session, data: AnySession,
                   round_of: Callable[[TurnRecord], int] | None = None) -> dict[int, list[str]]:
    """The commands Codex ran, by round (`round_of` a turn; default its `round`), from each
    turn's recorded events: what a cited command or test is checked against."""
    found: dict[int, list[str]] = {}
    for turn in data["turns"]:
        view = seen(session, turn["n"])
        n = round_of(turn) if round_of else int(turn["round"])
        found.setdefault(n, []).extend(
            str(a["command"]) for a in view.activities if a["kind"] == "command")
    return found


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


def compute(record: Record, root: Path) -> dict[str, Any]:
    """The audit as the report's JSON holds it (`agreement_audit`)."""
    checker = _Checker(root, record.activity)
    points: dict[str, list[Entry]] = {}
    cited: dict[str, dict[str, tuple[str, int]]] = {}
    concessions: list[dict[str, Any]] = []
    for entry in record.entries:
        history = points.setdefault(entry.point, [])
        before = _latest(history, entry.side)
        seen = cited.setdefault(entry.point, {})
        if before is not None and (
                (before.stance == "disagree" and entry.stance in HOLDING)
                or (record.withdrawals and _withdraws(entry, before, history))):
            concessions.append(_concession(entry, before, seen, checker))
        for item in entry.evidence:
            seen.setdefault(normal(item), (entry.side, entry.round))
        history.append(entry)
    independence = _independence(record)
    rows = [_point_row(pid, history, record, concessions, independence["state"] == "checked")
            for pid, history in sorted(points.items(), key=lambda kv: _order(kv[0]))]
    return _assemble(rows, concessions, record, independence)


def _independence(record: Record) -> dict[str, Any]:
    """Whether a point may be `independent` (turn/independence.verdict), unless the record
    says why independence cannot be measured at all."""
    if record.independence is not None:
        return {"state": "not_measured", "why": record.independence, "seen": []}
    return independence.verdict(record.check)


def _withdraws(entry: Entry, before: Entry, history: list[Entry]) -> bool:
    """The owner of the point gives it up, the other side having rejected it."""
    theirs = _latest(history, CODEX if entry.side == CLAUDE else CLAUDE)
    return (entry.side == owner(entry.point) and before.stance in HOLDING
            and entry.stance == "disagree" and theirs is not None
            and theirs.stance == "disagree")


def _latest(history: list[Entry], side: str) -> Entry | None:
    return next((e for e in reversed(history) if e.side == side), None)


def _order(pid: str) -> tuple[int, int]:
    return (0 if pid[0] == "X" else 1), int(pid[2:])


def _point_row(pid: str, history: list[Entry], record: Record,
               concessions: list[dict[str, Any]], checked: bool) -> dict[str, Any]:
    raiser = owner(pid)
    other = CODEX if raiser == CLAUDE else CLAUDE
    own = [e for e in history if e.side == raiser]
    # the point as its owner raised it (later lines are comments on it)
    claim = next((e.claim for e in own if e.claim), "") or next(
        (e.claim for e in history if e.claim), "")
    latest = {side: _latest(history, side) for side in (CLAUDE, CODEX)}
    moved = [c for c in concessions if c["point"] == pid]
    challenged = any(e.stance == "disagree" for e in history)
    rejected = all(e is not None and e.stance == "disagree" for e in latest.values())
    if latest[other] is None:
        outcome, why = "dropped", f"{NAMES[other]} never answered it"
    elif record.withdrawals and rejected and moved:
        outcome, why = f"conceded_by_{raiser}", f"withdrawn by {NAMES[raiser]}"
    elif any(e is not None and e.stance == "disagree" for e in latest.values()):
        if record.brief is not None and pid not in record.brief:
            outcome, why = "dropped", "still disputed, and the final brief does not name it"
        else:
            outcome, why = "open", "still disputed"
    elif moved:
        outcome, why = f"conceded_by_{moved[-1]['side']}", ""
    else:
        outcome, why = "agreed", ""
    independent = (checked and pid in record.sealed and outcome == "agreed"
                   and not challenged)
    return {"id": pid, "claim": claim, "raised_by": raiser,
            "raised_in": min((e.round for e in own), default=history[0].round),
            "outcome": outcome, "why": why, "independent": independent,
            "sealed_as": record.sealed.get(pid),
            "stances": [{"round": e.round, "side": e.side, "stance": e.stance,
                         "evidence": list(e.evidence), "source": e.source} for e in history]}


def _concession(entry: Entry, before: Entry, seen: dict[str, tuple[str, int]],
                checker: _Checker) -> dict[str, Any]:
    checked = [checker.check(item, entry.round, seen, entry.point) for item in entry.evidence]
    new_evidence = any(c["counts"] for c in checked)
    return {"point": entry.point, "side": entry.side, "round": entry.round,
            "from": before.stance, "to": entry.stance, "evidence": checked,
            "new_evidence": new_evidence, "flag": None if new_evidence else FLAG}


def normal(item: str) -> str:
    """A cited item as compared: backticks, a leading `./` and runs of space do not count."""
    text = " ".join(item.strip().strip("`").split())
    return text[2:] if text.startswith("./") else text


class _Checker:
    """Checks cited evidence: a `path:line` against the project, read through paths.py; a
    command or test against the round's recorded activity."""

    def __init__(self, root: Path, activity: dict[int, list[str]]) -> None:
        self.root, self.activity = root, activity
        self._lines: dict[str, tuple[int | None, str]] = {}

    def check(self, item: str, round_no: int, seen: dict[str, tuple[str, int]],
              point: str) -> dict[str, Any]:
        text = normal(item)
        found = _PATH_LINE.fullmatch(text)
        if found:
            kind = "path_line"
            holds, why = self._line(found.group("path"),
                                    int(found.group("end") or found.group("line")))
        elif _URL.match(text):
            kind, holds, why = "url", False, "a URL is not checkable by the runner"
        else:
            kind = "command"
            holds = len(text) > 2 and any(text in normal(done)
                                          for done in self.activity.get(round_no, []))
            why = ("" if holds else f"not in round {round_no}'s recorded activity: no "
                   "command Codex ran, nor the text handed in")
        earlier = seen.get(text)
        if earlier is not None:
            why = "; ".join(filter(None, [why, f"not new: {NAMES[earlier[0]]} cited it on "
                                         f"{point} in round {earlier[1]}"]))
        return {"cited": item, "kind": kind, "checked": holds, "new": earlier is None,
                "counts": holds and earlier is None, "why": why}

    def _line(self, path: str, line: int) -> tuple[bool, str]:
        if path not in self._lines:
            self._lines[path] = self._count(path)
        count, why = self._lines[path]
        if count is None:
            return False, why
        if line > count:
            return False, f"{path} has {count} line{'s' if count != 1 else ''}, not {line}"
        return True, ""

    def _count(self, path: str) -> tuple[int | None, str]:
        try:
            data = paths.read(self.root / path, self.root, "cited evidence",
                              _EVIDENCE_BYTES).data
        except SparringError as error:
            return None, f"{path}: {error.code.replace('_', ' ')}"
        except OSError as error:  # a folder on the way is not one, and the like
            return None, f"{path}: {error.strerror or 'unreadable'}"
        return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0), ""


def _assemble(rows: list[dict[str, Any]], concessions: list[dict[str, Any]],
              record: Record, independence: dict[str, Any]) -> dict[str, Any]:
    def count(outcome: str) -> int:
        return sum(1 for r in rows if r["outcome"] == outcome)

    flagged = [c for c in concessions if c["flag"]]
    counts = {
        "points": len(rows),
        "independent": sum(1 for r in rows if r["independent"]),
        "agreed_on_first_reading": sum(1 for r in rows
                                       if r["outcome"] == "agreed" and not r["independent"]),
        "with_new_evidence": len(concessions) - len(flagged),
        "without_new_evidence": len(flagged),
        "open": count("open"),
        "dropped": count("dropped"),
    }
    unchallenged = bool(rows) and all(r["outcome"] == "agreed" for r in rows) and not any(
        s["stance"] == "disagree" for r in rows for s in r["stances"])
    moved = _moved(concessions)
    return {"summary": _summary(counts, flagged, unchallenged, independence),
            "counts": counts, "unchallenged": unchallenged, "moved": moved,
            "independence": independence, "points": rows,
            "concessions": concessions, "notes": list(record.notes)}


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
    total = len(concessions)
    for side, other in ((CLAUDE, CODEX), (CODEX, CLAUDE)):
        if total and by_side[side]["concessions"] == total:
            sentence = (f"{NAMES[side]} made every concession ({total}); {NAMES[other]} "
                        "never moved from a position it held.")
    return {**by_side, "sentence": sentence}


def _summary(counts: dict[str, int], flagged: list[dict[str, Any]], unchallenged: bool,
             independence: dict[str, Any]) -> str:
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
            f"{f' ({who})' if who else ''}, {counts['open']} still open, "
            f"{counts['dropped']} dropped.")
    return line + (" Unchallenged: nobody disagreed with any point." if unchallenged else "")
