"""`sparring stop`: end the running turn and its whole process tree. Idempotent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.store import sessions
from sparring.turn import lifecycle, view, watch
from sparring.turn.brief import brief


def stop(here: str, session: str) -> dict[str, Any]:
    return stopped(sessions.resolve(session, here))


def stopped(session: sessions.Session) -> dict[str, Any]:
    lifecycle.agreed(session)  # session.json shows the turn its runner runs, or state_corrupt
    data = session.load()
    if not data["turns"]:  # nothing ever ran: stopping is trivially done
        return {"session": session.id, "session_dir": session.path, "status": "new",
                "already_ended": True}
    lifecycle.settle(session)
    stopped = lifecycle.stop_running(session)
    watch.prune_store(Path(data["root"]))
    result = brief(view.to_dict(session, *lifecycle.observe(session)), review=False)
    result["already_ended"] = not stopped
    return result
