"""How a deep-discussion carries on once the user has accepted files Codex changed (the
registry's `go_on` part: `guard accept` prints it, rebuilt from the session's state)."""

from __future__ import annotations

from sparring.output import path_word
from sparring.store import workspace
from sparring.store.sessions import Session

TYPE_CHECKING = False  # typing costs every round's call 4 ms of a 10-20 ms Python start
if TYPE_CHECKING:
    from typing import Any


def go_on(session: Session, data: dict[str, Any]) -> str:
    inbox = workspace.session_inbox(data)
    return (f"answer Codex: `sparring discuss round {session.id} --file "
            f"{path_word(f'{inbox}/round.yaml')}`")
