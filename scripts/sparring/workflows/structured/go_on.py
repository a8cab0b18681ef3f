"""How a structured debate carries on once the user has accepted files Codex changed (the
registry's `go_on` part: `guard accept` prints it, rebuilt from the session's state)."""

from __future__ import annotations

from typing import Any

from sparring.store.sessions import Session


def go_on(session: Session, data: dict[str, Any]) -> str:
    return "judge the round as usual (`sparring verdict`), which starts the next one"
