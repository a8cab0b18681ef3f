"""A whole workflow in its habitat: the real Claude Code, driven by a scripted model, running
the installed skill, whose runner drives the real Codex CLI against the Responses mock.

Used by tests/integration/test_workflows.py and bench/workflow_bench.py. A scenario file
(tests/integration/workflows/<name>.json) holds the skill and its arguments, Codex's
answers in order, the scripted model's steps (support/scripted_model.py), and the files the
run must leave behind.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from support.installing import install_env, make_project, run_install
from support.messages_mock import MessagesMock
from support.processes import Finished, run_bounded
from support.responses_mock import MOCK_KEY_ENV, ResponsesMock, text
from support.scripted_model import ScriptedModel

SCENARIOS = Path(__file__).resolve().parents[1] / "integration" / "workflows"
CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin"  # Claude Code, git, node; no `sparring`
WORKFLOW_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Scenario:
    name: str
    skill: str
    args: str
    codex: list[Any]
    steps: list[dict[str, Any]]
    files: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, name: str) -> Scenario:
        data = json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
        return cls(name, data["skill"], data["args"], data["codex"], data["steps"],
                   data.get("files", []))

    @property
    def prompt(self) -> str:
        return f"/{self.skill} {self.args}".rstrip()


@dataclass
class Habitat:
    """A git project with the skills installed, and the environment Claude Code runs in."""

    project: Path
    env: dict[str, str]
    messages: MessagesMock
    responses: ResponsesMock


def make_habitat(base: Path, data: Path, messages: MessagesMock, responses: ResponsesMock,
                 codex: Path) -> Habitat:
    project = make_project(base / "project")
    (base / "install-home").mkdir()
    done = run_install("--project", project, env=install_env(data, base / "install-home"))
    assert done.returncode == 0, done.stdout + done.stderr
    codex_home = responses.codex_home(base / "codex-home")
    env = {**messages.claude_env(base / "home"), "PATH": CLEAN_PATH,
           "XDG_DATA_HOME": str(data), "SPARRING_CODEX": str(codex),
           "CODEX_HOME": str(codex_home), MOCK_KEY_ENV: "dummy"}
    return Habitat(project, env, messages, responses)


@dataclass
class Outcome:
    run: Finished
    result: dict[str, Any]
    model: ScriptedModel

    @property
    def denials(self) -> list[Any]:
        return list(self.result.get("permission_denials", ["(no result)"]))

    def bash_outputs(self) -> list[dict[str, Any]]:
        return [e.output or {} for e in self.model.log if e.tool == "Bash"]


def run_workflow(claude: Path, habitat: Habitat, scenario: Scenario,
                 cwd: Path | None = None) -> Outcome:
    for answer in scenario.codex:
        habitat.responses.script(text(answer if isinstance(answer, str) else json.dumps(answer)))
    where = cwd or habitat.project
    model = ScriptedModel(scenario.steps, {"cwd": str(where)})
    habitat.messages.drive(model)
    run = run_bounded([claude, "-p", scenario.prompt, "--output-format", "json"],
                      env=habitat.env, cwd=where, timeout=WORKFLOW_TIMEOUT_S)
    assert not run.timed_out, f"{scenario.name}: Claude Code timed out\n{run.stderr[-3000:]}"
    try:
        result = json.loads(run.stdout)
    except ValueError:
        result = {}
    return Outcome(run, result, model)


def codex_processes(project: Path) -> list[str]:
    """Codex (or a runner of ours) still alive for this project."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "cwd"]):
        try:
            line = " ".join(proc.info["cmdline"] or [])
            ours = str(project) in line + " " + (proc.info["cwd"] or "")
            if ours and proc.pid != os.getpid() and ("codex" in line or "sparring" in line):
                found.append(f"{proc.pid}: {line[:200]}")
        except psutil.Error:
            continue
    return found
