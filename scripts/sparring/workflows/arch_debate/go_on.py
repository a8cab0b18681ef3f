"""How an arch-debate carries on once the user has accepted files Codex changed (the
registry's `go_on` part: `guard accept` prints it, rebuilt from the session's state)."""

from __future__ import annotations

from typing import Any

from sparring.errors import SparringError
from sparring.quoting import path_word
from sparring.store import workspace
from sparring.store.sessions import Session


def go_on(session: Session, data: dict[str, Any]) -> str:
    if "debate" not in data:
        raise no_folder(session)
    inbox = workspace.session_inbox(data)
    return (f"hand in your round: `sparring debate round {path_word(data['debate']['dir'])} "
            f"--file {path_word(f'{inbox}/round.md')}`")


def no_folder(session: Session) -> SparringError:
    """An arch-debate session made by `init` alone: its rounds run in a debate folder, which
    `debate new` makes; nothing else starts a turn of it."""
    return SparringError(
        "invalid_transition", f"{session.id} has no debate folder: it was made by `init`, and "
        "an arch-debate runs its rounds in the folder `debate new` makes",
        f"start the debate with `sparring debate new DIR \"QUESTION\"`; close this session "
        f"with `sparring finalize {session.id}`")
