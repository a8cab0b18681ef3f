"""What `sparring report` writes for a structured debate: the decision record, markdown
from the workflow's report template, and the same facts as JSON beside it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sparring import answers, templates
from sparring.errors import SparringError
from sparring.records import AnySession
from sparring.store.inputs import read_input
from sparring.store.sessions import Session
from sparring.workflows import report as reports
from sparring.workflows.structured import audit
from sparring.workflows.workflow import Context


def write(context: Context, session: Session, data: AnySession, synthesis_file: Path | None,
          out: Path | None) -> dict[str, Any]:
    _reportable(session, data)
    model = reports.build(session, data, _synthesis(synthesis_file),
                          audit.compute(session, data))
    (template,) = context.flow.report_templates
    text = _tidy(templates.render(template, {"R": model}))
    pattern = None if out is not None else context.settings(Path(data["root"]))["report_path"]
    path = reports.destination(data, out, pattern)
    beside = reports.write(path, text, model, root=Path(data["root"]),
                           ours=set(data.get("reports", [])))
    reports.remember(session, path, text, model)
    return {"session": session.id, "report": str(path), "json": str(beside),
            "outcome": model["outcome"], "degraded": bool(model["degraded"]),
            "degraded_reasons": model["degraded"]}


def _reportable(session: Session, data: AnySession) -> None:
    state = data["engine"]
    answered = any(t["status"] == "completed" for t in data["turns"])
    if state["barrier"] and answered and not state["seal"]:
        raise SparringError("seal_required", "the report would reveal Codex's answer before "
                            "your own analysis is sealed",
                            f"`sparring wait {session.id} --seal FILE` first")


def _tidy(text: str) -> str:
    """One blank line between blocks, whatever the template's conditionals left."""
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _synthesis(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    parsed = answers.load_json(read_input(path, "--synthesis"), "synthesis")
    answers.require_valid("synthesis", parsed)
    return {"conclusion": None, "observations": None, **parsed}
