"""`sparring report`: write the decision record (markdown, and JSON beside it)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sparring import answers, engine, templates
from sparring import report as reports
from sparring import session as sessions
from sparring.errors import SparringError
from sparring.inputs import read_input
from sparring.session import Session
from sparring.state import write_atomic


def report(ref: str, cwd: Path, synthesis_file: Path | None, out: Path | None) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    data = session.load()
    _reportable(session, data)
    synthesis = _synthesis(synthesis_file)
    model = reports.build(session, data, synthesis)
    text = _tidy(templates.render(f"{data['skill']}/report", {"R": model}))
    path = reports.destination(data, out)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
    beside = path.with_suffix(".json")
    write_atomic(beside, json.dumps(model, ensure_ascii=False, indent=2) + "\n")
    with session.update() as locked:
        locked.setdefault("reports", [])
        if str(path) not in locked["reports"]:
            locked["reports"].append(str(path))
    return {"session": session.id, "report": str(path), "json": str(beside),
            "outcome": model["outcome"], "degraded": bool(model["degraded"]),
            "degraded_reasons": model["degraded"]}


def _reportable(session: Session, data: dict[str, Any]) -> None:
    own = {"arch-debate": "`sparring debate status DIR` writes its records",
           "deep-discussion": f"`sparring discuss report {session.id}`"}
    if data["skill"] in own:
        raise SparringError("invalid_transition", f"{data['skill']} has its own records",
                            own[data["skill"]])
    state = engine.state(data)
    answered = any(t["status"] == "completed" for t in data["turns"])
    if state["barrier"] and answered and not state["seal"]:
        raise SparringError("seal_required", "the report would reveal Codex's answer before "
                            "your own analysis is sealed", f"`sparring seal {session.id}` first")


def _tidy(text: str) -> str:
    """One blank line between blocks, whatever the template's conditionals left."""
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _synthesis(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    parsed = answers.load_json(read_input(path, "--synthesis"), "synthesis")
    answers.require_valid("synthesis", parsed)
    return {"conclusion": None, "observations": None, **parsed}
