"""`sparring guard accept`: the user has seen the files Codex's turns changed, and goes on."""

from __future__ import annotations

import time
from typing import Any

from sparring.errors import Hint
from sparring.store import sessions
from sparring.turn.launch import unaccepted_violations
from sparring.workflows import registry


def accept(here: str, session: str) -> dict[str, Any]:
    """The user has seen the changed files and goes on (whether they were undone or kept):
    the one way past a violation, the same in every workflow."""
    found_session = sessions.resolve(session, here)
    with found_session.update() as data:
        found = unaccepted_violations(data)
        for turn in found:
            turn["guard"]["accepted"] = True
            turn["guard"]["accepted_at"] = time.time()
    accepted = [{"turn": t["n"], "round": t["round"], "changed": t["guard"]["changed"]}
                for t in found]
    return {"session": found_session.id, "accepted": accepted,
            "next": Hint(registry.go_on(found_session, data) if accepted
                         else "nothing to accept: go on")}
