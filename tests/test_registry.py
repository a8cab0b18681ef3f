"""The workflow registry (workflows/registry.py): every workflow has all its parts, and the modules
that used to keep their own copy of the model read it from there."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sparring import answers, config, templates
from sparring.workflows import registry as workflows
from sparring.workflows import report
from sparring.workflows.registry import SKILLS, WORKFLOWS, Workflow

ROOT = Path(__file__).resolve().parents[1]


def test_the_registry_holds_the_four_workflows_each_with_a_skill() -> None:
    assert SKILLS == ("arch-debate", "deep-discussion", "dual-model", "think-about")
    assert set(WORKFLOWS) == set(SKILLS)
    for name in SKILLS:
        assert (ROOT / "skills" / name / "SKILL.md").is_file()
        assert workflows.get(name).name == name


@pytest.mark.parametrize("flow", list(WORKFLOWS.values()), ids=list(WORKFLOWS))
def test_every_workflow_has_all_its_parts(flow: Workflow) -> None:
    known = templates.names()
    assert flow.templates and set(flow.templates) <= set(known), set(flow.templates) - set(known)
    assert flow.report_templates and set(flow.report_templates) <= set(flow.templates)
    assert {n for n in known if n.startswith(f"{flow.name}/")} <= set(flow.templates)
    for name in flow.schemas():
        loaded = json.loads(answers.schema_path(name).read_text(encoding="utf-8"))
        assert loaded["type"] == "object", name
    assert (flow.answer_schema is None) == (not flow.claude_schemas)
    assert flow.barrier is (flow.answer_schema is not None)  # the seal guards a structured round 1
    writer = flow.writer()
    assert callable(writer) and writer.__name__ == flow.report_writer.rpartition(":")[2]
    assert "reports.write(" in inspect.getsource(writer)  # the one report writer
    assert (flow.records_hint is None) == (flow.report_writer == "sparring.commands.report:report")
    assert flow.effort in config.EFFORTS
    assert isinstance(flow.max_rounds, int) and flow.max_rounds > 0
    if flow.report_path is not None:
        assert config.WORKFLOW_SETTINGS["report_path"](flow.report_path) == flow.report_path


@pytest.mark.parametrize("name", SKILLS)
def test_the_defaults_and_the_engine_record_come_from_the_registry(name: str) -> None:
    flow = workflows.get(name)
    settings = workflows.settings({}, name)
    assert settings["max_rounds"] == flow.max_rounds
    assert settings.get("report_path") == flow.report_path
    state = flow.engine_record()
    assert (state["schema"], state["barrier"]) == (flow.answer_schema, flow.barrier)
    assert state["schema"] in (None, answers.CODEX_ANSWER)


def test_a_report_file_is_private_atomic_and_its_json_ends_in_a_newline(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "r.md"
    beside = report.write(path, "# R\n", {"outcome": "consensus"}, root=tmp_path)
    assert beside == path.with_suffix(".json")
    assert path.read_text() == "# R\n"
    assert beside.read_text() == '{\n  "outcome": "consensus"\n}\n'
    assert report.write(tmp_path / "decision.md", "x\n", root=tmp_path) is None
    assert not (tmp_path / "decision.json").exists()
    for written in (path, beside, tmp_path / "decision.md"):
        assert written.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []


def test_the_registry_stays_cheap_to_import() -> None:
    """poll's fast path imports it: it must load nothing beyond itself."""
    code = ("import sys; before = set(sys.modules); import sparring.workflows.registry; "
            "print(sorted(set(sys.modules) - before))")
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    assert done.stdout.strip() == str(["sparring", "sparring.workflows",
                                       "sparring.workflows.registry"])
