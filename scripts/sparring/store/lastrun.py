"""What Codex ran with in the user's latest debate: the model and effort its rollout recorded
for the latest turn of any of their sessions, in sparring's state folder (out of every
project), so that a debate whose Codex runs another model than the last one says so.

sparring passes no model unless asked, and Codex's default model moves with Codex's
updates: two debates a week apart may have been argued by two models. One small file,
written whole (statefile.write_json_atomic) at each turn's end; a file that is missing or
not this shape reads as no earlier debate.
"""

from __future__ import annotations

import os
from typing import Any

from sparring import disk
from sparring.jsontext import loads
from sparring.store import locate
from sparring.store.statefile import write_json_atomic

FILE = "last-codex.json"


def path() -> str:
    return os.path.join(locate.state_home(), FILE)


def read() -> dict[str, Any] | None:
    """The latest turn's `{model, effort, session, root, at}`, or None."""
    try:
        with open(path(), "rb") as f:
            found = loads(f.read(64 * 1024))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or not isinstance(found.get("session"), str):
        return None
    return {key: found.get(key) for key in ("model", "effort", "session", "root", "at")}


def write(ran: dict[str, Any], session: str, root: str, at: float) -> None:
    """Record what the turn that just ended ran with; a state folder that cannot be written
    loses only the comparison, never the turn."""

    try:
        disk.folders(locate.state_home())
        write_json_atomic(path(), {"model": ran.get("model"), "effort": ran.get("effort"),
                                   "session": session, "root": root, "at": at})
    except OSError:
        pass


def differs(now: dict[str, Any], before: dict[str, Any] | None) -> str | None:
    """A warning when `now` (a turn's model and effort) is not what the user's earlier debate
    `before` ran with, else None."""
    if not before or not now.get("model") or not before.get("model"):
        return None
    said = [f"{key} {before[key]}" for key in ("model", "effort")
            if before.get(key) and now.get(key) and before[key] != now[key]]
    if not said:
        return None
    return (f"Codex runs {now['model']}, effort {now.get('effort') or 'default'}; your last "
            f"debate (session {before['session']}) ran {', '.join(said)}")
