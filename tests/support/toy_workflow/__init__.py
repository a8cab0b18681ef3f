"""A toy fifth workflow, for tests/test_registry.py: its own package (this folder) and one
registry entry (`registry.register(WORKFLOW)`, in the test's process), with verbs of its own
(`sparring toy new|say|status`), a status that poll and wait add, and its own way on after
`guard accept`. Nothing in sparring names it."""

from __future__ import annotations

from sparring.params import Verb, argument, option, options
from sparring.workflows.workflow import Workflow

_SESSION = argument("session", "session", metavar="SESSION")

WORKFLOW = Workflow(
    "toy", __name__, answer_schema=None, claude_schemas=(), barrier=False, max_rounds=2,
    effort="low", report_path=None, templates=(), report_templates=(),
    parts={"go_on": "verbs:go_on", "status": "verbs:after_turn"},
    records_hint="`sparring toy status {session}` is all it keeps",
    status_key="toy", command="toy", command_help="A toy workflow: say something to Codex.",
    verbs=(
        Verb("new", "verbs:new", "Start a toy session.", (options("new-budget"),)),
        Verb("say", "verbs:say", "Say what --file holds to Codex (one turn each).", (
            _SESSION, option("--file", "What to say (default: stdin)."),
            options("turn-limits"))),
        Verb("status", "verbs:status", "What was said, and Codex's last answer.", (_SESSION,)),
    ))
