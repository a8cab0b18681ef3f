"""`sparring report`: write the decision record, with the workflow's own writer (the
registry's `report` part); a workflow that keeps its records with its own verbs says which."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.errors import SparringError
from sparring.store import sessions
from sparring.workflows import registry


def report(here: str, session: str, synthesis: str | None, out: str | None
           ) -> dict[str, Any]:
    return written(sessions.resolve(session, here), Path(here),
                   Path(synthesis) if synthesis else None, Path(out) if out else None)


def written(session: sessions.Session, cwd: Path, synthesis_file: Path | None,
            out: Path | None) -> dict[str, Any]:
    data = session.load()
    flow = registry.get(data["skill"])
    write = flow.part("report")
    if write is None:
        raise SparringError("invalid_transition", f"{flow.name} has its own records",
                            str(flow.records_hint).format(session=session.id))
    found: dict[str, Any] = write(registry.context(flow, cwd), session, data, synthesis_file,
                                  out)
    return found
