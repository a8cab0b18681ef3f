"""How a deep-discussion carries on once the user has accepted files Codex changed (the
registry's `go_on` part: `guard accept` prints it, rebuilt from the session's state)."""

from __future__ import annotations

from typing import Any

from sparring.quoting import path_word
from sparring.store import workspace
from sparring.store.sessions import Session


def go_on(session: Session, data: dict[str, Any]) -> str:
    inbox = workspace.session_inbox(data)
    return (f"answer Codex: `sparring discuss round {session.id} --file "
            f"{path_word(f'{inbox}/round.yaml')}`")
