"""The toy workflow's verbs and parts (see __init__.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.store import sessions, workspace
from sparring.store.inputs import read_input
from sparring.store.sessions import Session
from sparring.turn import launch, turns
from sparring.workflows import sessions as new_sessions
from sparring.workflows.workflow import Context


def new(context: Context, budget_tokens: int | None) -> dict[str, Any]:
    root = workspace.find_root(context.cwd)
    max_rounds = context.settings(root)["max_rounds"]
    session = new_sessions.create(context, root, context.cwd, budget_tokens,
                                  {"toy": {"said": [], "max_rounds": max_rounds}})
    return {"session": session.id, "max_rounds": max_rounds}


def say(context: Context, session: str, file: Path | None,
        options: dict[str, Any]) -> dict[str, Any]:
    text = read_input(file, "--file")
    found = sessions.resolve(session, context.cwd)
    data = found.load()
    with found.update() as locked:
        locked["toy"]["said"].append(text.decode())
    prompt = launch.Prompt(text)
    if data.get("thread_id"):
        return launch.resume(found.path, context.cwd, options, prompt, schema="none",
                             again=go_on(found, data))
    return launch.start(found.path, context.cwd, options, prompt, schema="none")


def status(context: Context, session: str) -> dict[str, Any]:
    found = sessions.resolve(session, context.cwd)
    return {"session": found.id, **after_turn(found, found.load(), context.cwd)}


def after_turn(session: Session, data: dict[str, Any], cwd: Path) -> dict[str, Any]:
    heard = [turns.final_text(session, t) for t in data["turns"] if t["status"] == "completed"]
    return {"said": data["toy"]["said"], "heard": heard[-1] if heard else None}


def go_on(session: Session, data: dict[str, Any]) -> str:
    return f"say something again: `sparring toy say {session.id} --file FILE`"
