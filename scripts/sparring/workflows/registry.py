"""The four workflows sparring runs, and what each is made of: the one registry.

For each workflow: the schema Codex answers in (None: free-text rounds), the schemas
Claude hands in, whether the seal barrier holds (Claude's own analysis sealed before
Codex's answer is revealed), the round cap and the report path (the defaults sparring.yaml
overrides), the default effort, the templates it renders, and the function that writes its
records. config, engine, session and the report verbs read it from here.

It imports nothing, so that the lightest readers, poll's fast path among them (shapes.py
checks a session's `skill`), can use it without loading anything else: schemas and
templates are named, not loaded, and the report writer is named `module:function` and
imported only when asked for (`Workflow.writer`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # poll's fast path imports this module: nothing at run time
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from sparring.records import EngineRecord


class Workflow:
    """One workflow's parts (read-only by convention; a plain class: no imports here)."""

    __slots__ = ("answer_schema", "barrier", "claude_schemas", "effort", "max_rounds", "name",
                 "records_hint", "report_path", "report_templates", "report_writer",
                 "templates")

    def __init__(self, name: str, *, answer_schema: str | None, claude_schemas: tuple[str, ...],
                 barrier: bool, max_rounds: int, effort: str, report_path: str | None,
                 templates: tuple[str, ...], report_templates: tuple[str, ...],
                 report_writer: str, records_hint: str | None) -> None:
        self.name = name
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
        self.report_writer = report_writer  # `module:function` that writes its records
        # None: `sparring report` writes its report; else the command that does ({session}).
        self.records_hint = records_hint

    def defaults(self) -> dict[str, Any]:
        """Its section of sparring.yaml as it is when the file says nothing."""
        found: dict[str, Any] = {"max_rounds": self.max_rounds}
        if self.report_path is not None:
            found["report_path"] = self.report_path
        return found

    def engine_record(self) -> EngineRecord:
        """A new session's engine record: the answer schema and the seal barrier."""
        return {"schema": self.answer_schema, "barrier": self.barrier, "seal": None,
                "revealed_at": None, "verdicts": {}, "decisions": {}}

    def schemas(self) -> tuple[str, ...]:
        """Every schema the workflow validates against."""
        return ((self.answer_schema,) if self.answer_schema else ()) + self.claude_schemas

    def writer(self) -> Callable[..., Any]:
        """The function that writes its records (imported now, not with this module)."""
        import importlib

        module, _, function = self.report_writer.partition(":")
        found: Callable[..., Any] = getattr(importlib.import_module(module), function)
        return found

    def __repr__(self) -> str:
        return f"Workflow({self.name!r})"


_STRUCTURED_CLAUDE = ("claude-verdict", "claude-synthesis")

WORKFLOWS: dict[str, Workflow] = {flow.name: flow for flow in (
    Workflow("think-about", answer_schema="codex-answer", claude_schemas=_STRUCTURED_CLAUDE,
             barrier=True, max_rounds=5, effort="high",
             report_path="docs/decisions/{date}-think-about-{slug}.md",
             templates=("think-about/claude-analysis", "think-about/round1",
                        "think-about/round2+", "think-about/report", "reask"),
             report_templates=("think-about/report",),
             report_writer="sparring.commands.report:report", records_hint=None),
    Workflow("dual-model", answer_schema="codex-answer", claude_schemas=_STRUCTURED_CLAUDE,
             barrier=True, max_rounds=3, effort="high",
             report_path="docs/decisions/{date}-dual-model-{slug}.md",
             templates=("dual-model/dispatch", "dual-model/continue", "dual-model/report",
                        "reask"),
             report_templates=("dual-model/report",),
             report_writer="sparring.commands.report:report", records_hint=None),
    Workflow("arch-debate", answer_schema=None, claude_schemas=(), barrier=False,
             max_rounds=6, effort="high", report_path=None,
             templates=("arch-debate/protocol", "arch-debate/codex-round",
                        "arch-debate/agreed", "arch-debate/decision-needed"),
             report_templates=("arch-debate/agreed", "arch-debate/decision-needed"),
             report_writer="sparring.workflows.arch_debate.status:write_outcome",
             records_hint="`sparring debate status DIR` writes its records"),
    Workflow("deep-discussion", answer_schema=None, claude_schemas=(), barrier=False,
             max_rounds=10, effort="high",
             report_path=".kkachi/{branch}/completed/deep-discussion-{epoch}.md",
             templates=("deep-discussion/first", "deep-discussion/round",
                        "deep-discussion/synthesis", "deep-discussion/report"),
             report_templates=("deep-discussion/report",),
             report_writer="sparring.commands.discuss:report",
             records_hint="`sparring discuss report {session}`"),
)}

SKILLS = tuple(sorted(WORKFLOWS))  # what a session's `skill` may be


def get(name: str) -> Workflow:
    """The workflow of that name; a session of one this sparring does not know is refused."""
    try:
        return WORKFLOWS[name]
    except KeyError:
        from sparring.errors import SparringError

        raise SparringError("state_corrupt", f"{name!r} is not a workflow this sparring knows "
                            f"({', '.join(SKILLS)})", "upgrade sparring, or start a new "
                            "session with `sparring init`") from None


def load_settings(root: Path) -> dict[str, Any]:
    """sparring.yaml, with the sections of every workflow known by name."""
    from sparring import config

    return config.load(root, sections=WORKFLOWS)


def settings(file_settings: dict[str, Any], skill: str) -> dict[str, Any]:
    """The settings of one workflow: its section of sparring.yaml over its own defaults."""
    return {**get(skill).defaults(), **file_settings.get(skill, {})}
