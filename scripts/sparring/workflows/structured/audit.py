"""The agreement audit of a structured debate (think-about, dual-model), from its record.

Round 0 is Claude's sealed analysis: its numbered points (`C-1: …` lines), held before
Codex's first answer was revealed. Then, round by round, Codex's validated answer and
Claude's verdict. In its verdict on round one Claude may link a point Codex raised in that
first answer to the point of its sealed analysis that already held it (`"sealed": "C-2"`):
both sides reached it on their own, the candidate for independent agreement. A sealed point
neither linked nor ever carried into a verdict was dropped.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from sparring import ledger as ledgers
from sparring.moves import entries_of
from sparring.records import AnySession
from sparring.store.sessions import Session
from sparring.turn import activity
from sparring.workflows import audit
from sparring.workflows.audit import CLAUDE, Entry, Record

_SEALED_POINT = re.compile(r"(?:[-*+]\s+|\d+[.)]\s+|#{1,6}\s+)?\**(?P<id>C-[1-9][0-9]*)\**"
                           r"(?:\s*[:.)—-]\s*|\s+)(?P<claim>.*)")


_EVIDENCE = re.compile(r"(?:^|[\s(.;—-])evidence:\s*", re.I)  # evidence on the same line


def sealed_text(data: AnySession) -> tuple[str | None, str | None]:
    """Claude's sealed analysis as sealed, or None and why it cannot be read as such."""
    seal = data["engine"].get("seal")
    if not seal:
        return None, "Claude's analysis was never sealed"
    try:
        raw = Path(seal["file"]).read_bytes()
    except OSError:
        return None, "the sealed analysis is missing"
    if hashlib.sha256(raw).hexdigest() != seal["sha256"]:
        return None, "the sealed analysis on disk is not what was sealed"
    return raw.decode("utf-8", errors="replace"), None


def sealed_points(text: str) -> dict[str, str]:
    """The points of a sealed analysis: `C-n` at the start of a line, with its claim."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _SEALED_POINT.fullmatch(line.strip())
        if match and match.group("id") not in found:
            claim = _EVIDENCE.split(match.group("claim"), maxsplit=1)[0]
            found[match.group("id")] = claim.strip().rstrip(" (—-").strip()
    return found


def record(session: Session, data: AnySession) -> Record:
    rounds = ledgers.records(data)
    text, why = sealed_text(data)
    sealed = sealed_points(text) if text is not None else {}
    links = {x: c for x, c in _links(rounds).items() if c in sealed}
    twin = {c: x for x, c in links.items()}
    entries = [Entry(twin.get(cid, cid), CLAUDE, 0, "agree", claim, (),
                     f"sealed analysis ({cid})" if cid in twin else "sealed analysis")
               for cid, claim in sealed.items()]
    entries += entries_of(rounds)
    notes = [] if why is None else [why]
    seen = activity.record(session, data)
    return Record(entries, activity=seen.activity, reads=seen.reads,
                  sealed=links, independence=why, check=data["engine"].get("independence"),
                  challenged=bool(ledgers.challenge_rounds(data)), notes=notes)


def _links(rounds: list[Any]) -> dict[str, str]:
    """Codex's first-answer points Claude linked to its sealed analysis (round one only)."""
    if not rounds or rounds[0][1] is None:
        return {}
    return {p["id"]: p["sealed"] for p in rounds[0][1]["points"] if p.get("sealed")}


def compute(session: Session, data: AnySession) -> dict[str, Any]:
    return audit.compute(record(session, data), Path(data["root"]))
