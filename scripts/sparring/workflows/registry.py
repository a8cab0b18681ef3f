"""The workflows sparring runs, by name: the one place that binds a workflow's name to its
package.

Each workflow's package declares its `Workflow` (workflow.py: its data, and the functions
of its package the verbs call); this module collects them, and the verbs and the command
line look a workflow up here instead of asking which one it is. It stands above the
workflows' packages and the modules they share (report.py, markers.py, sessions.py,
workflow.py), none of which imports it: what they need from here (a workflow's settings) is
passed to them (`context`).

Reading it loads only the packages' declarations, never their code (the parts are named,
and imported when called): every verb of the CLI reads it.

Only sparring's own packages are workflows. No environment variable or file adds one: the
environment of a project's `.claude/settings.json` reaches every verb, and a workflow is
code. A test registers a toy one in its own process (`register`, tests/test_registry.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring import config
from sparring.errors import SparringError
from sparring.store.sessions import Session
from sparring.workflows import arch_debate, deep_discussion, structured
from sparring.workflows.workflow import Context, Workflow

WORKFLOWS: dict[str, Workflow] = {flow.name: flow for flow in (
    structured.THINK_ABOUT, structured.DUAL_MODEL, arch_debate.WORKFLOW,
    deep_discussion.WORKFLOW)}

SKILLS = tuple(sorted(WORKFLOWS))  # what a session's `skill` may be


def register(flow: Workflow) -> None:
    """Add a workflow from outside the package, in this process only (tests)."""
    global SKILLS
    WORKFLOWS[flow.name] = flow
    SKILLS = tuple(sorted(WORKFLOWS))


def unregister(name: str) -> None:
    global SKILLS
    WORKFLOWS.pop(name, None)
    SKILLS = tuple(sorted(WORKFLOWS))


def get(name: str) -> Workflow:
    """The workflow of that name; a session of one this sparring does not know is refused."""
    try:
        return WORKFLOWS[name]
    except KeyError:
        raise SparringError("state_corrupt", f"{name!r} is not a workflow this sparring knows "
                            f"({', '.join(SKILLS)})", "upgrade sparring, or start a new "
                            "session with `sparring init`") from None


def load_settings(root: Path) -> dict[str, Any]:
    """sparring.yaml, with the sections of every workflow known by name."""
    return config.load(root, sections=WORKFLOWS)


def settings(file_settings: dict[str, Any], skill: str) -> dict[str, Any]:
    """The settings of one workflow: its section of sparring.yaml over the top level's
    `budget_tokens` over its own defaults."""
    inherited = {key: file_settings[key] for key in ("budget_tokens",) if key in file_settings}
    return {**get(skill).defaults(), **inherited, **file_settings.get(skill, {})}


def context(flow: Workflow, cwd: str | Path) -> Context:
    """What a workflow's own verb (or its report) is given: its settings come from here."""
    return Context(flow, cwd, lambda root: settings(load_settings(root), flow.name))


def call(flow: Workflow, verb: str, values: dict[str, Any], cwd: str | Path
         ) -> dict[str, Any]:
    """Run the workflow's own verb `verb` with the command line's `values`."""
    (found,) = (v for v in flow.verbs if v.name == verb)
    result: dict[str, Any] = flow.function(found.function)(context(flow, cwd), **values)
    return result


def go_on(session: Session, data: dict[str, Any]) -> str:
    """The command that carries the session's workflow on after `guard accept`."""
    part = get(data["skill"]).part("go_on")
    assert part is not None  # every workflow has one (workflow.py)
    found: str = part(session, data)
    return found
