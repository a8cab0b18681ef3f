"""`sparring guard revert`: undo what changed since a baseline, or what the guard recorded
for one of a session's turns; never deletes anything."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

from sparring.errors import Hint, SparringError
from sparring.guard import undo
from sparring.guard.baseline import named, of_project
from sparring.guard.model import Change, load_changes
from sparring.store import locate, sessions, workspace
from sparring.store.sessions import Session, find_turn
from sparring.turn import lifecycle


def revert(here: str, baseline: str | None, session: str | None, turn: int | None
           ) -> dict[str, Any]:
    """Undo what changed since --baseline, or (--session, with --turn) one turn's changes."""
    if (baseline is None) == (session is None) or (turn is not None and session is None):
        raise SparringError("usage_error", "give --baseline FILE, or --session SESSION (and "
                            "optionally --turn N)", "see `sparring guard revert --help`")
    if session is not None:
        return of_turn(sessions.resolve(session, here), turn)
    assert baseline is not None
    return undo.revert(of_project(named(Path(baseline)),
                                   workspace.find_root(Path(here)))).to_dict()


def of_turn(session: Session, n: int | None) -> dict[str, Any]:
    """Undo exactly what the guard recorded for one turn (default: the latest that changed
    files), never a file the runner wrote; the turn records what was undone. A turn whose
    check did not run to its end recorded nothing: what changed since its snapshot is undone
    (the user's own edits since included, as its violation's hint says)."""
    data, _ = lifecycle.require_idle(session, session.load())
    turn = _turn_with_changes(session, data, n)
    base = of_project(Path(session.turn_path(turn["n"], locate.BASELINE_FILE)),
                            Path(data["root"]))
    changes = _recorded(session, turn) if turn["guard"].get("checked") else None
    result = undo.revert(base, changes, protected=_runner_wrote(base.root, data))
    with session.update() as locked:
        record = find_turn(locked, turn["n"])["guard"]
        record["reverted"] = [*record.get("reverted", []), {
            "at": time.time(), "reverted": [r["path"] for r in result.reverted],
            "not_reverted": [r["path"] for r in result.not_reverted], "trash": result.trash}]
    shown = result.to_dict()
    return {"session": session.id, "turn": turn["n"], "round": turn["round"], **shown,
            "next": Hint(f"`sparring guard accept {session.id}` once the user has decided: "
                         "it prints the next step")}


def _recorded(session: Session, turn: dict[str, Any]) -> list[Change]:
    """What the turn's check saw. Only a check that ran to its end wrote it: for any other
    turn, what stands there was put there by someone else (Codex, in that very turn), and
    revert_turn undoes what changed since the turn's snapshot instead."""
    recorded = Path(session.turn_path(turn["n"], locate.CHANGES_FILE))
    if not recorded.is_file():
        raise SparringError("file_not_found", f"turn {turn['n']} was checked by an older "
                            "sparring, which kept no record of what it saw",
                            "`sparring guard revert --baseline "
                            f"{session.turn_path(turn['n'], locate.BASELINE_FILE)}` undoes what "
                            "changed since that turn's snapshot", path=str(recorded))
    return load_changes(recorded)


def _turn_with_changes(session: Session, data: dict[str, Any],
                       n: int | None) -> dict[str, Any]:
    turns: list[dict[str, Any]] = [  # a turn whose check failed lists none (violation)
        t for t in data["turns"]
        if (t.get("guard") or {}).get("changed") or (t.get("guard") or {}).get("violation")]
    chosen = [t for t in turns if n is None or t["n"] == n]
    if not chosen:
        what = (f"turn {n} of session {session.id} changed no file" if n is not None
                else f"no turn of session {session.id} changed a file")
        raise SparringError("invalid_transition", f"nothing to revert: {what}",
                            f"`sparring status {session.id}` lists the turns; --turn picks "
                            "one whose guard found changes")
    return chosen[-1]


def _runner_wrote(root: Path, data: dict[str, Any]) -> dict[str, str | None]:
    """Files sparring's runner wrote (Codex's round files, stand-ins, reports), each with the
    digest of what it wrote (None: not recorded, by an older sparring): a revert never
    touches one that still holds that, whatever a check recorded."""
    written: dict[str, str | None] = {}
    for turn in data["turns"]:
        if turn.get("answer_sha256") and not turn.get("answer_file_kept"):
            written[turn["answer_file"]] = turn["answer_sha256"]
    digests: dict[str, str] = data.get("report_sha256", {})
    written.update({path: digests.get(path) for path in data.get("reports", [])})
    written.update(digests)
    if data.get("debate"):
        folder = Path(data["debate"]["dir"])
        written.update({str(folder / name): digest
                        for name, digest in data["debate"].get("written", {}).items()})
    found = {}
    for path, digest in written.items():
        with contextlib.suppress(ValueError):
            found[Path(path).resolve().relative_to(root).as_posix()] = digest
    return found


