"""think-about and dual-model: structured rounds, Claude's verdicts, the ledger's decision.

Both run on one engine (engine.py): Codex answers each round in the `codex-answer` schema,
Claude judges it with a verdict, the ledger decides (steps.py: what follows), and
`sparring report` writes the decision record (report.py); go_on.py says how a debate carries
on after `guard accept`, resume.py where an unfinished session picks up. They differ in
their templates, their round cap, and what follows a verdict.
"""

from __future__ import annotations

from sparring.workflows.workflow import Workflow

_CLAUDE = ("claude-verdict", "claude-synthesis")
_PARTS = {"report": "report:write", "go_on": "go_on:go_on", "next_step": "resume:next_step"}
_RUNS = ("init", "start", "seal", "verdict", "report")  # sparring's verbs their skills run

THINK_ABOUT = Workflow(
    "think-about", __name__, answer_schema="codex-answer", claude_schemas=_CLAUDE,
    barrier=True, max_rounds=5, effort="high",
    report_path="docs/decisions/{date}-think-about-{slug}.md",
    templates=("think-about/claude-analysis", "think-about/round1", "think-about/round2+",
               "think-about/report", "reask"),
    report_templates=("think-about/report",),
    parts={**_PARTS, "after_verdict": "steps:think_about"}, runs=_RUNS)

DUAL_MODEL = Workflow(
    "dual-model", __name__, answer_schema="codex-answer", claude_schemas=_CLAUDE,
    barrier=True, max_rounds=3, effort="high",
    report_path="docs/decisions/{date}-dual-model-{slug}.md",
    templates=("dual-model/dispatch", "dual-model/continue", "dual-model/report", "reask"),
    report_templates=("dual-model/report",),
    parts={**_PARTS, "after_verdict": "steps:dual_model"}, runs=_RUNS)
