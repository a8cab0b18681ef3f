"""The guard around one Codex turn: what the runner snapshots and checks, and what it tells
Claude when files changed.

Before codex runs, the runner snapshots the project (the guard package), reusing the previous turn's
hashes for files that did not move and keeping copies in one store per project
(`.sparring/guard-store/`, content-addressed). It also watches sparring's own records of this
session: a turn must not write into `.sparring/` either. After codex ends (and everything it
left running is gone), the check's findings are saved with the stat data they saw
(`guard-changes.json`), so `sparring guard revert --session` can undo exactly those.
"""

from __future__ import annotations

import hashlib
import traceback
from pathlib import Path
from typing import Any

from sparring import guard
from sparring.errors import SparringError
from sparring.store import workspace
from sparring.store.session import SEALED_FILE, Session
from sparring.store.state import written_by_someone_else
from sparring.store.workspace import STATE_DIR

BASELINE = "guard-baseline.json"
CHANGES = "guard-changes.json"
STORE = "guard-store"
# What sparring itself writes in a session's folder while Codex works: the session file
# (checked by its witness instead), locks, the turn's own output, the inbox files `seal`
# takes, the seal (checked against its recorded digest instead).
_RUNTIME = ("session.json", "session.json.*", ".session.json.*", "*.lock", "inputs",
            SEALED_FILE)
_TURN_RUNTIME = ("events.jsonl", "stderr.log", "runner.log", "guard-*")


def store_dir(root: Path) -> Path:
    return workspace.state_dir(root, create=True) / STORE


def snapshot(session: Session, n: int) -> Path | None:
    """Snapshot before codex runs; a guard that cannot run must not block the turn (the turn's
    guard then says it was not checked)."""
    data = session.load()
    root = Path(data["root"])
    path = session.turn_file(n, BASELINE)
    try:
        guard.take(root, exclude=_claude_writes(root, data), store=store_dir(root),
                   previous=_previous(session, data, n),
                   areas=own_state(root, session, n)).save(path)
    except Exception:  # reported as an unchecked guard, with the reason in the log
        traceback.print_exc()
        return None
    return path


def _claude_writes(root: Path, data: dict[str, Any]) -> list[str]:
    """Where Claude may write while Codex works: the session's inbox. Under the root's own
    `.sparring/` the tree listing never looks anyway; an inbox in a subfolder (Claude Code
    started there) is left out explicitly."""
    if not data.get("inbox"):
        return []
    own = Path(data["inbox"]).parent  # <dir>/.sparring, self-ignoring like the root's
    try:
        relative = own.relative_to(root).as_posix()
    except ValueError:
        return []  # outside the tree the guard watches
    return [relative] if relative != STATE_DIR else []


def own_state(root: Path, session: Session, n: int) -> dict[str, guard.Area]:
    """sparring's records a turn must not touch: `.sparring/` itself (not the inbox, the
    store, the trash or other sessions, which others write meanwhile) and this session's
    folder but for what sparring writes there during the turn."""
    try:
        mine = session.dir.relative_to(root).as_posix()
    except ValueError:
        return {}
    top = guard.Area("state", tuple(f"{STATE_DIR}/{name}" for name in (
        "inbox", STORE, "guard-trash", "sessions")))
    turn = f"{mine}/turns/{n}"
    session_area = guard.Area("state", tuple(
        [f"{mine}/{name}" for name in _RUNTIME] + [f"{turn}/{name}" for name in _TURN_RUNTIME]))
    return {STATE_DIR: top, mine: session_area}


def _previous(session: Session, data: dict[str, Any], n: int) -> guard.Baseline | None:
    """The latest earlier baseline of this session, whose hashes a snapshot may reuse."""
    for turn in reversed(data["turns"]):
        path = session.turn_file(turn["n"], BASELINE)
        if turn["n"] < n and path.is_file():
            try:
                return guard.Baseline.load(path)
            except SparringError:
                return None
    return None


def check(session: Session, n: int, baseline: Path | None) -> guard.TurnGuard:
    """The turn's `guard` record: what changed, saved with what the check saw."""
    if baseline is None:
        return {"checked": False, "clean": None, "changed": [], "violation": None}
    try:
        changes = guard.compare(guard.Baseline.load(baseline)) + _own_records(session, n)
        guard.save_changes(session.turn_file(n, CHANGES), changes)
    except Exception:
        traceback.print_exc()
        return {"checked": False, "clean": None, "changed": [], "violation": None}
    found = [c.to_dict() for c in changes]
    return {"checked": True, "clean": not found, "changed": found, "baseline": str(baseline),
            "violation": violation(session, found)}


def _own_records(session: Session, n: int) -> list[guard.Change]:
    """The session file and the seal, which sparring writes during a turn: changed by anyone
    else (their digests say), they are a violation too."""
    relative = f"{STATE_DIR}/sessions/{session.id}"
    found = []
    if written_by_someone_else(session.state.path):
        found.append(guard.Change(f"{relative}/session.json", "modified", "state", None))
    try:
        data = session.load()
    except SparringError:
        return found or [guard.Change(f"{relative}/session.json", "modified", "state", None)]
    seal = (data.get("engine") or {}).get("seal")
    sealed = session.dir / SEALED_FILE
    if seal is not None and _digest(sealed) != seal.get("sha256"):
        found.append(guard.Change(f"{relative}/{SEALED_FILE}", "modified", "state", None))
    elif seal is None and sealed.exists():
        found.append(guard.Change(f"{relative}/{SEALED_FILE}", "added", "state", None))
    started = min((t["created_at"] for t in data["turns"] if t["n"] == n), default=0.0)
    if any(at >= started for at in data.get("foreign_writes", [])) and not any(
            c.path.endswith("/session.json") for c in found):
        found.append(guard.Change(f"{relative}/session.json", "modified", "state", None))
    return found


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def violation(session: Session, changes: list[dict[str, str]]) -> guard.Violation | None:
    if not changes:
        return None
    listed = ", ".join(f"{c['path']} ({c['change']})" for c in changes[:10])
    more = f" and {len(changes) - 10} more" if len(changes) > 10 else ""
    return {"code": "guard_violation",
            "message": f"files changed during codex's turn: {listed}{more}",
            "hint": hint(session)}


def hint(session: Session, retry: str | None = None) -> str:
    """What Claude does about a violation, in the commands that work in this workflow."""
    sid = session.id
    then = retry or go_on(session)
    return (f"stop and show the user the changed files. To undo them: `sparring guard revert "
            f"--session {sid}` (what it removes or replaces is kept in .sparring/guard-trash; "
            f"files the runner wrote are never touched). Once the user has decided (undone "
            f"or kept), `sparring guard accept {sid}`, then {then}")


def go_on(session: Session) -> str:
    """The command that carries the workflow on after `guard accept`: what the latest turn
    recorded, as the verb that started it said (launch.py)."""
    try:
        data = session.load()
    except SparringError:
        return "carry on with the workflow"
    said = data["turns"][-1].get("go_on") if data["turns"] else None
    return said or "carry on with the workflow (its SKILL.md says how)"
