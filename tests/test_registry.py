"""The workflow registry (workflows/registry.py): every workflow has all its parts, the
modules that used to keep their own copy of the model read it from there, and the verbs
dispatch through it (a toy fifth workflow, registered from outside, runs through the real
command line)."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparring import answers, config, templates
from sparring.workflows import registry as workflows
from sparring.workflows import report
from sparring.workflows.registry import SKILLS, WORKFLOWS
from sparring.workflows.workflow import PARTS, Workflow

ROOT = Path(__file__).resolve().parents[1]


def test_the_registry_holds_a_workflow_for_each_skill_and_no_other() -> None:
    shipped = tuple(sorted(p.parent.name for p in ROOT.glob("skills/*/SKILL.md")))
    assert shipped == SKILLS
    assert len(SKILLS) >= 4 and set(WORKFLOWS) == set(SKILLS)
    for name in SKILLS:
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
    # What the verbs call: `sparring report` writes with the report part (the one report
    # writer), or the workflow keeps its records with its own verbs; a structured round
    # says what follows a verdict; a status poll adds has its key.
    report = flow.part("report")
    assert (report is None) == (flow.records_hint is not None)
    assert report is None or "reports.publish(" in inspect.getsource(report)
    assert (flow.part("after_verdict") is None) == (flow.answer_schema is None)
    assert (flow.part("status") is None) == (flow.status_key is None)
    assert callable(flow.part("go_on"))
    assert bool(flow.command) == bool(flow.verbs)
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


@pytest.mark.parametrize("flow", list(WORKFLOWS.values()), ids=list(WORKFLOWS))
def test_every_part_and_verb_is_a_function_of_the_workflows_own_package(flow: Workflow) -> None:
    """The registry names them (so that reading it loads no workflow's code): each name is
    a function in the workflow's own package, which the layering test holds to importing
    only what the workflows share."""
    for spec in [*flow.parts.values(), *(verb.function for verb in flow.verbs)]:
        found = flow.function(spec)
        assert callable(found) and found.__module__.startswith(f"{flow.package}."), spec
    assert set(flow.parts) <= set(PARTS)


def test_reading_the_registry_loads_no_workflows_code() -> None:
    """The registry loads the workflows' declarations; their parts and verbs are named,
    and imported when called."""
    code = ("import sys, json; import sparring.workflows.registry; "
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    loaded = json.loads(done.stdout)
    assert {flow.package for flow in WORKFLOWS.values()} <= set(loaded)
    assert [name for name in loaded for flow in WORKFLOWS.values()
            if name.startswith(f"{flow.package}.")] == []


# --- a fifth workflow, registered from outside: the registry really dispatches ----------

def _reload() -> None:
    """The command line is made from the registry when it loads: load it again."""
    import sparring.cli.main
    import sparring.cli.verbs

    importlib.reload(sparring.cli.verbs)  # `init --skill` names every workflow
    importlib.reload(sparring.cli.main)


@pytest.fixture
def toy() -> Iterator[None]:
    from support.toy_workflow import WORKFLOW

    workflows.register(WORKFLOW)
    _reload()
    try:
        yield
    finally:
        workflows.unregister("toy")
        _reload()
        assert "toy" not in workflows.WORKFLOWS


def test_a_toy_workflow_runs_through_the_real_command_line(
        toy: None, sparring: Any, fake_codex: Any, repo: Path, tmp_path: Path) -> None:
    """Its own verbs, its sparring.yaml section, its status in wait's object, its way on
    after `guard accept`, and `sparring report` sending it to its own records: each comes
    from its package through the registry, and nothing else in sparring names it."""
    (repo / "sparring.yaml").write_text("toy:\n  max_rounds: 7\n")
    made = sparring("toy", "new")
    assert made.exit_code == 0, made.raw
    sid = made.out["session"]
    assert made.out["max_rounds"] == 7 and sid.startswith("toy-")
    assert sparring("init", "--skill", "toy").out["skill"] == "toy"

    fake_codex.mode("ok", reply="Heard you.")
    said = sparring("toy", "say", sid, input=b"Hello, Codex.")
    assert said.exit_code == 0, said.raw
    assert said.out["verb"] == "toy say" and said.out["turn"] == 1
    done = sparring("wait", sid, "--timeout", "30").out
    assert done["status"] == "completed"
    assert done["toy"] == {"said": ["Hello, Codex."], "heard": "Heard you."}
    assert sparring("toy", "status", sid).out["heard"] == "Heard you."

    fake_codex.mode("writes_file", write_path="notes.txt")
    assert sparring("toy", "say", sid, input=b"Again.").exit_code == 0
    changed = sparring("wait", sid, "--timeout", "30").out
    toy_on = f"say something again: `sparring toy say {sid} --file FILE`"
    # The violation as the turn recorded it names `guard accept`, which prints the go-on
    # part rebuilt from the session (never a record's text); a refused verb names it too.
    assert changed["guard"]["violation"]["hint"].endswith(
        f"`sparring guard accept {sid}`; it prints the next step")
    refused = sparring("toy", "say", sid, input=b"Once more.")
    assert refused.error_code == "guard_violation" and refused.out["error"]["hint"].endswith(
        toy_on)
    assert sparring("guard", "accept", sid).out["next"] == toy_on

    kept = sparring("report", sid)
    assert kept.error_code == "invalid_transition"
    assert kept.out["error"]["hint"] == f"`sparring toy status {sid}` is all it keeps"


# `python -m sparring` with the toy registered first, as a test can (nothing else can).
_WITH_TOY = ("import sys; from sparring.workflows import registry; "
             "from support.toy_workflow import WORKFLOW; registry.register(WORKFLOW); "
             "from sparring.cli.main import main; sys.exit(main())")


def test_python_m_sparring_runs_the_toy_workflow_registered_in_its_process(
        repo: Path, fake_codex: Any) -> None:
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}

    def run(*argv: str, code: str = _WITH_TOY) -> tuple[int, dict[str, Any]]:
        done = subprocess.run([sys.executable, "-c", code, *argv], cwd=repo, env=env,
                              capture_output=True, text=True, check=False, timeout=60)
        return done.returncode, json.loads(done.stdout)

    code, made = run("toy", "new")
    assert code == 0 and made["verb"] == "toy new" and made["max_rounds"] == 2, made
    code, shown = run("toy", "status", made["session"])
    assert code == 0 and shown == {**shown, "said": [], "heard": None}
    code, listed = run("status")
    assert [row["skill"] for row in listed["sessions"]] == ["toy"]
    # No variable adds a workflow: the environment of a project's .claude/settings.json
    # reaches every verb, and a workflow is code.
    plain = "import sys; from sparring.cli.main import main; sys.exit(main())"
    env["SPARRING_WORKFLOWS"] = "support.toy_workflow:WORKFLOW"
    code, refused = run("toy", "status", made["session"], code=plain)
    assert code == 2 and refused["error"]["code"] == "usage_error", refused
