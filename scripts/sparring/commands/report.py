"""`sparring report`: write the decision record, with the workflow's own writer (the
registry's `report` part); a workflow that keeps its records with its own verbs says which."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.errors import SparringError
from sparring.store import sessions
from sparring.workflows import registry


def report(ref: str, cwd: Path, synthesis_file: Path | None, out: Path | None) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    data = session.load()
    flow = registry.get(data["skill"])
    write = flow.part("report")
    if write is None:
        raise SparringError("invalid_transition", f"{flow.name} has its own records",
                            str(flow.records_hint).format(session=session.id))
    found: dict[str, Any] = write(registry.context(flow, cwd), session, data, synthesis_file,
                                  out)
    return found
