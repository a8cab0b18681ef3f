"""What `sparring report` writes for a structured debate: the decision record, markdown
from the workflow's report template, and the same facts as JSON beside it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sparring import answers, templates
from sparring import ledger as ledgers
from sparring.errors import SparringError
from sparring.records import AnySession
from sparring.store.inputs import read_input
from sparring.store.sessions import Session
from sparring.workflows import adr
from sparring.workflows import report as reports
from sparring.workflows.structured import audit
from sparring.workflows.workflow import Context


def write(context: Context, session: Session, data: AnySession, synthesis_file: Path | None,
          out: Path | None) -> dict[str, Any]:
    _reportable(session, data)
    found = audit.compute(session, data)
    model = {**reports.build(session, data, _synthesis(synthesis_file), found),
             "choices": choices(data), "challenge": challenge(data, found)}
    (template,) = context.flow.report_templates
    text = adr.document(model, _tidy(templates.render(template, {"R": model})))
    pattern = None if out is not None else context.settings(Path(data["root"]))["report_path"]
    path, beside = reports.publish(data, out, pattern, text, model)
    reports.remember(session, path, text, model)
    return {"session": session.id, "report": str(path), "json": str(beside),
            "outcome": model["outcome"], "degraded": bool(model["degraded"]),
            "degraded_reasons": model["degraded"]}


def choices(data: AnySession) -> dict[str, Any] | None:
    """Each side's first choice, made blind (Claude's in its sealed analysis, Codex's in its
    round-one answer), its confidence then, where each ended, and who moved to whose."""
    text, _ = audit.sealed_text(data)
    claude_first, claude_sure = ledgers.first_choice(text or "")
    answered = ledgers.answers_by_round(data)
    first = answered.get(1)
    codex_first = first.get("choice") if first else None
    codex_sure = first.get("confidence") if first else None
    if not (claude_first or codex_first):
        return None
    verdicts = data["engine"]["verdicts"]
    claude_last = next((verdicts[k]["choice"] for k in sorted(verdicts, key=int, reverse=True)
                        if verdicts[k].get("choice")), claude_first)
    codex_last = next((answered[n]["choice"] for n in sorted(answered, reverse=True)
                       if answered[n].get("choice")), codex_first)
    return {"first": {"claude": claude_first, "codex": codex_first},
            "first_confidence": {"claude": claude_sure, "codex": codex_sure},
            "final": {"claude": claude_last, "codex": codex_last},
            "moved": _who_moved(claude_first, codex_first, claude_last, codex_last)}


def _who_moved(claude: str | None, codex: str | None, claude_last: str | None,
               codex_last: str | None) -> str:
    def same(a: str | None, b: str | None) -> bool:
        return bool(a and b and a.strip().casefold() == b.strip().casefold())

    if same(claude, codex):
        return f"Both chose {claude} from the start."
    if same(claude_last, codex_last):
        if same(codex_last, claude):
            return f"Codex moved to Claude's first choice ({claude})."
        if same(claude_last, codex):
            return f"Claude moved to Codex's first choice ({codex})."
        return f"Both moved, to {claude_last}."
    return (f"They ended apart: Claude on {claude_last or 'no choice'}, Codex on "
            f"{codex_last or 'no choice'}.")


def challenge(data: AnySession, found: dict[str, Any]) -> dict[str, Any] | None:
    """The challenge turn, when one answered: its round, and what became of its points."""
    rounds = ledgers.challenge_rounds(data)
    if not rounds:
        return None
    n = min(rounds)
    raised = [p for p in ledgers.answers_by_round(data)[n]["points"]]
    if not raised:
        return {"round": n, "said": "it raised no point against it"}
    outcome = {r["id"]: r["outcome"] for r in found["points"]}
    said = ", ".join(f"{p['id']} ({outcome.get(p['id'], 'open')})" for p in raised)
    return {"round": n, "said": f"it raised {said}"}


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
