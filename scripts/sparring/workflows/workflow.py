"""What a workflow is: data, and the names of the functions of its own package that the
verbs call. Each workflow's package declares its `Workflow` in its `__init__.py`;
registry.py collects them, and is the one place that looks a workflow up by name.

The data: the schema Codex answers in (None: free-text rounds), the schemas Claude hands in,
whether the seal barrier holds (Claude's own analysis sealed before Codex's answer is
revealed), the round cap and the report path (the defaults sparring.yaml overrides), the
default effort, the templates it renders.

The parts, each `module:function` in the workflow's own package, imported when called (so
that reading the registry loads no workflow's code):
- `go_on(session, data) -> str`: the command that carries the workflow on, once the user
  has accepted files Codex changed (`guard accept`); every workflow has one;
- `status(session, data, cwd) -> dict`: where the workflow stands, which poll and wait add
  once Codex's turn has ended, under `status_key`, the key of the workflow's own record in
  session.json, when the session holds that record (`status_replaces_review`: the status
  carries Codex's answer, so the brief object leaves `review` out);
- `after_verdict(session, cwd, data, decision, known, given) -> dict`: what follows
  Claude's verdict on a structured round (`sparring verdict`'s `next`);
- `report(context, session, data, synthesis_file, out) -> dict`: what `sparring report`
  writes; a workflow without it keeps its records with its own verbs (`records_hint` says
  which);
- `next_step(session, data, cwd) -> Hint`: where an unfinished session picks up, from its
  record (`sparring status`), for a conversation that lost track of it.
Its own verbs, if any, form the group `command` (`sparring debate ...`): each `Verb`
(sparring/params.py) names its function and declares its arguments and options as data;
cli/main.py makes the click command, and the function is called as
`function(context, **values)`. `runs` names the rest of the runner's verbs its skill runs
(beyond its own and those every skill runs, EVERY_SKILL_RUNS): its SKILL.md's
`allowed-tools` and the installer's rules are made from these (docs/generate.py).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sparring.params import Verb
from sparring.records import EngineRecord

PARTS = ("go_on", "status", "after_verdict", "report", "next_step")
# The runner's verbs every skill runs: to check, to wait, to go on, to stop and close, and
# the way past a guard violation.
EVERY_SKILL_RUNS = ("doctor", "wait", "poll", "status", "resume", "stop", "finalize",
                    "guard accept")


class Workflow:
    """One workflow: its data and its parts (read-only by convention)."""
    __slots__ = ("answer_schema", "barrier", "claude_schemas", "command", "command_help",
                 "effort", "max_rounds", "name", "package", "parts", "records_hint",
                 "report_path", "report_templates", "runs", "status_key",
                 "status_replaces_review", "templates", "verbs")

    def __init__(self, name: str, package: str, *, answer_schema: str | None,
                 claude_schemas: tuple[str, ...], barrier: bool, max_rounds: int, effort: str,
                 report_path: str | None, templates: tuple[str, ...],
                 report_templates: tuple[str, ...], parts: Mapping[str, str],
                 records_hint: str | None = None, status_key: str | None = None,
                 status_replaces_review: bool = False, command: str | None = None,
                 command_help: str = "", verbs: tuple[Verb, ...] = (),
                 runs: tuple[str, ...] = ()) -> None:
        assert set(parts) <= set(PARTS) and "go_on" in parts, sorted(parts)
        self.name = name
        self.package = package  # the dotted name of its own package: parts live there
        self.answer_schema = answer_schema  # codex --output-schema; None: free-text rounds
        self.claude_schemas = claude_schemas  # what Claude hands in (verdict, synthesis)
        self.barrier = barrier  # the seal: Claude's analysis sealed before Codex's is shown
        self.max_rounds = max_rounds  # default round cap (sparring.yaml: <name>.max_rounds)
        self.effort = effort  # the default effort of its Codex turns
        # Where the report goes (placeholders: config.REPORT_PLACEHOLDERS); None: the
        # workflow writes its records beside its own files (arch-debate's debate folder).
        self.report_path = report_path
        self.templates = templates  # every template it renders (templates/<name>/…)
        self.report_templates = report_templates  # those of its report or decision files
        self.parts = dict(parts)  # part -> `module:function` in its package (PARTS)
        # None: `sparring report` writes its report (the `report` part); else the command
        # that writes its records ({session}).
        self.records_hint = records_hint
        # Its own record in session.json, and the poll/wait key of its `status` part.
        self.status_key = status_key
        self.status_replaces_review = status_replaces_review
        self.command, self.command_help, self.verbs = command, command_help, verbs
        self.runs = runs  # sparring's own verbs its skill runs, beyond EVERY_SKILL_RUNS

    def skill_verbs(self) -> tuple[str, ...]:
        """Every verb of the runner its skill runs: every skill's, then `runs`, then its own
        group's."""
        own = tuple(f"{self.command} {verb.name}" for verb in self.verbs)
        return (*EVERY_SKILL_RUNS, *self.runs, *own)

    def defaults(self) -> dict[str, Any]:
        """Its section of sparring.yaml as it is when the file says nothing."""
        found: dict[str, Any] = {"max_rounds": self.max_rounds}
        if self.report_path is not None:
            found["report_path"] = self.report_path
        if self.answer_schema is not None:  # structured rounds: a cheap consensus is challenged
            found["challenge"] = True
        return found

    def engine_record(self) -> EngineRecord:
        """A new session's engine record: the answer schema and the seal barrier."""
        return {"schema": self.answer_schema, "barrier": self.barrier, "seal": None,
                "revealed_at": None, "verdicts": {}, "decisions": {}}

    def schemas(self) -> tuple[str, ...]:
        """Every schema the workflow validates against."""
        return ((self.answer_schema,) if self.answer_schema else ()) + self.claude_schemas

    def part(self, name: str) -> Callable[..., Any] | None:
        """Its part `name` (PARTS), imported now; None when it has none."""
        spec = self.parts.get(name)
        return None if spec is None else self.function(spec)

    def function(self, spec: str) -> Callable[..., Any]:
        """The function `module:function` of its own package (a part or a verb)."""
        module, _, function = spec.partition(":")
        found: Callable[..., Any] = getattr(
            importlib.import_module(f"{self.package}.{module}"), function)
        return found

    def __repr__(self) -> str:
        return f"Workflow({self.name!r})"


class Context:
    """What a workflow's own verb is given by the layer that calls it: its workflow, the
    directory it runs in, and its settings at a project root (its section of sparring.yaml
    over its defaults; reading the file takes every workflow's name, which the registry
    knows)."""
    __slots__ = ("_settings", "cwd_text", "flow")

    def __init__(self, flow: Workflow, cwd: str | Path,
                 settings: Callable[[Path], dict[str, Any]]) -> None:
        self.flow, self._settings = flow, settings
        self.cwd_text = str(cwd)  # what a status verb, every round, reads it as

    @property
    def cwd(self) -> Path:
        return Path(self.cwd_text)

    def settings(self, root: Path) -> dict[str, Any]:
        return self._settings(root)
