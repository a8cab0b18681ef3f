"""A whole workflow in its habitat: the real Claude Code, driven by a scripted model, running
the installed skill, whose runner drives the real Codex CLI against the Responses mock.

Used by tests/integration/test_workflows.py and bench/workflow_bench.py. A scenario file
(tests/integration/workflows/<name>.json) holds the skill and its arguments, Codex's answers in
order, the scripted model's steps (support/scripted_model.py), the files the run must leave
behind, where the skills are installed (`scope`: `project`, the default, `user`, or `plugin`:
the Claude Code plugin, its skills named `sparring:<skill>`), files committed in the project
first (`setup`), variables of the user's own shell Claude Code starts in (`user_env`:
`SPARRING_SANDBOX`, the one place besides their config file where the user widens Codex's
sandbox), the runner verbs the user approves when Claude Code asks in a later turn
(`user_allows`: `guard revert`, which no installed rule approves; in `-p` nobody is asked, so
the harness passes them with `--allowedTools`, as the user's "yes"), `after`: a scenario run
first in the same project, in a conversation of its own (the one that stopped midway, which
this one picks up), `says`: what the user types instead of the slash command (plain words:
the scripted model then invokes the skill with Claude Code's Skill tool), `calls`: the Bash
calls the conversation takes (a long turn watched through one `wait`), and `"bench": false`
for a failure path bench/workflow_bench.py leaves out.

A scenario may span several turns, as a debate does when Claude asks the user something: a
`text` step with `then` ends Claude's turn, and the harness answers as the user would, with
`claude -p --resume <session> "<then>"`. Skills' `allowed-tools` cover only the turn the skill
was invoked in; what install.py writes into Claude Code's settings covers the later ones (for
the plugin, its PreToolUse hook does).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from support.gitrepo import git
from support.installing import ROOT, install_env, make_project, run_install
from support.loopback_server import Behaviour
from support.messages_mock import MessagesMock
from support.processes import Finished, run_bounded
from support.responses_mock import (
    MOCK_KEY_ENV,
    Delayed,
    ResponsesMock,
    rate_limited,
    shell_call,
    status,
    text,
)
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
    scope: str = "project"
    setup: dict[str, str] = field(default_factory=dict)  # files committed in the project
    user_env: dict[str, str] = field(default_factory=dict)  # the user's shell
    user_allows: list[str] = field(default_factory=list)  # verbs the user says yes to
    after: str | None = None  # a scenario run first, in its own conversation, in the project
    says: str | None = None  # the user's words, for a conversation without a slash command
    calls: int | None = None  # the Bash calls the whole conversation takes, when pinned

    @classmethod
    def load(cls, name: str) -> Scenario:
        data = json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
        return cls(name, data["skill"], data["args"], data["codex"], data["steps"],
                   data.get("files", []), data.get("scope", "project"), data.get("setup", {}),
                   data.get("user_env", {}), data.get("user_allows", []), data.get("after"),
                   data.get("says"), data.get("calls"))

    @property
    def codex_silence(self) -> float:
        """The seconds the mock keeps Codex waiting (`delay`), over the whole scenario: a
        long turn's, which the run's time limit allows on top of its own."""
        return sum(float(a["delay"]) for a in self.codex if isinstance(a, dict) and "delay" in a)

    @property
    def prompt(self) -> str:
        if self.says is not None:
            return self.says
        skill = f"sparring:{self.skill}" if self.scope == "plugin" else self.skill
        return f"/{skill} {self.args}".rstrip()


@dataclass
class Habitat:
    """A git project with the skills installed, and the environment Claude Code runs in."""

    project: Path
    env: dict[str, str]
    messages: MessagesMock
    responses: ResponsesMock
    claude_args: list[str] = field(default_factory=list)  # e.g. --plugin-dir DIR, every turn


def plugin_copy(dest: Path, hooks: bool = True) -> Path:
    """The Claude Code plugin as a clone of the repository holds it (links kept); without
    its hooks when `hooks` is False."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in (".claude-plugin", "skills", "references", "scripts", "templates",
                 *(["hooks"] if hooks else [])):
        shutil.copytree(ROOT / name, dest / name, symlinks=True, ignore=ignore)
    for name in ("install.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    return dest


def make_habitat(base: Path, data: Path, messages: MessagesMock, responses: ResponsesMock,
                 codex: Path, scope: str = "project", setup: dict[str, str] | None = None,
                 permissions: bool = True) -> Habitat:
    """A project with the skills installed as a user would: `install.py --project` (its
    settings in the project), or `--user` into the home Claude Code then runs with, or the
    Claude Code plugin (`plugin`: a copy of it, loaded with --plugin-dir; nothing installed
    but the runtime). `setup` files are committed in the project first (a sparring.yaml,
    say). `permissions=False` installs with --no-permissions (for the plugin: a copy without
    its hook): only the skills' own `allowed-tools` approve."""
    project = commit_setup(make_project(base / "project"), setup or {})
    home = base / "home"
    (base / "install-home").mkdir()
    extra = [] if permissions else ["--no-permissions"]
    claude_args: list[str] = []
    if scope == "plugin":
        plugin = plugin_copy(base / "sparring", hooks=permissions)
        claude_args = ["--plugin-dir", str(plugin)]
        done = None
    elif scope == "user":
        home.mkdir(exist_ok=True)
        done = run_install("--user", *extra, env=install_env(data, home), cwd=project)
    else:
        done = run_install("--project", project, *extra,
                           env=install_env(data, base / "install-home"))
    assert done is None or done.returncode == 0, done.stdout + done.stderr
    codex_home = responses.codex_home(base / "codex-home")
    env = {**messages.claude_env(home), "PATH": CLEAN_PATH,
           "XDG_DATA_HOME": str(data), "SPARRING_CODEX": str(codex),
           "CODEX_HOME": str(codex_home), MOCK_KEY_ENV: "dummy",
           # A codex that fails at once must be seen failing within the start window even on
           # a busy machine; one that answers is not waited for (it ends sooner).
           "SPARRING_STARTSECS": "5"}
    return Habitat(project, env, messages, responses, claude_args)


def commit_setup(project: Path, setup: dict[str, str]) -> Path:
    """A scenario's `setup` files (a sparring.yaml, the code its debate cites), committed in
    the project."""
    for name, content in setup.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(content, encoding="utf-8")
        git(project, "add", name)
    if setup:
        git(project, "commit", "-q", "-m", "scenario set-up")
    return project


@dataclass
class Outcome:
    run: Finished  # the last `claude -p`
    result: dict[str, Any]  # its JSON result
    model: ScriptedModel
    results: list[dict[str, Any]] = field(default_factory=list)  # one per turn
    before: Outcome | None = None  # the conversation the scenario came `after`

    @property
    def denials(self) -> list[Any]:
        """Every permission Claude Code refused or would have asked for, in every turn."""
        return [d for r in self.results or [self.result]
                for d in r.get("permission_denials", ["(no result)"])]

    def bash_outputs(self) -> list[dict[str, Any]]:
        return [e.output or {} for e in self.model.log if e.tool == "Bash"]


def codex_behaviour(answer: Any) -> Behaviour:
    """How the Responses mock answers one Codex request: the answer as text (JSON for an
    object), or `{"mock": "rate_limited"}` (HTTP 429, no Retry-After: codex gives up at
    once), `{"mock": "bad_request"}` (HTTP 400), `{"mock": "shell", "cmd": "…"}` (Codex runs a
    command in its sandbox; its next request takes the next answer); either with `"delay": S`
    (`{"delay": S, "mock": ...}`, or `{"delay": S, "answer": ...}` for an answer): the mock
    is silent that long first, as a model thinking (a long turn)."""
    if isinstance(answer, dict) and "delay" in answer:
        rest = {k: v for k, v in answer.items() if k != "delay"}
        return Delayed(float(answer["delay"]), codex_behaviour(rest.get("answer", rest)))
    if isinstance(answer, dict) and "mock" in answer:
        if answer["mock"] == "shell":
            return shell_call(answer["cmd"])
        return {"rate_limited": rate_limited, "bad_request": lambda: status(400)}[answer["mock"]]()
    return text(answer if isinstance(answer, str) else json.dumps(answer))


def run_workflow(claude: Path, habitat: Habitat, scenario: Scenario,
                 cwd: Path | None = None) -> Outcome:
    """The scenario's conversation (and the one it comes `after`, first: a new `claude -p`,
    whose outcome is kept in `before`)."""
    before = None
    if scenario.after:
        before = run_workflow(claude, habitat, Scenario.load(scenario.after), cwd)
    outcome = _converse(claude, habitat, scenario, cwd)
    outcome.before = before
    return outcome


def _converse(claude: Path, habitat: Habitat, scenario: Scenario,
              cwd: Path | None = None) -> Outcome:
    for answer in scenario.codex:
        habitat.responses.script(codex_behaviour(answer))
    where = cwd or habitat.project
    model = ScriptedModel(scenario.steps, {"cwd": str(where)})
    habitat.messages.drive(model)
    argv = [claude, "-p", scenario.prompt, *habitat.claude_args, "--output-format", "json"]
    env = {**habitat.env, **scenario.user_env}
    results = []
    while True:
        run = run_bounded(argv, env=env, cwd=where,
                          timeout=WORKFLOW_TIMEOUT_S + scenario.codex_silence)
        assert not run.timed_out, f"{scenario.name}: Claude Code timed out\n{run.stderr[-3000:]}"
        try:
            result = json.loads(run.stdout)
        except ValueError:
            result = {}
        results.append(result)
        reply = model.take_reply()
        if reply is None or "session_id" not in result:
            return Outcome(run, result, model, results)
        # The user answers; Claude Code goes on in the same conversation, a new turn.
        argv = [claude, "-p", "--resume", result["session_id"], reply, *habitat.claude_args,
                *_approved(model, scenario.user_allows), "--output-format", "json"]


def _approved(model: ScriptedModel, verbs: list[str]) -> list[str]:
    """`--allowedTools` for the runner verbs the user approves (the launcher as the scripted
    model spells it: in double quotes when its path has a space)."""
    launcher = model.values.get("launcher")
    if not verbs or launcher is None:
        return []
    word = f'"{launcher}"' if " " in launcher else launcher
    return ["--allowedTools", ",".join(f"Bash({word} {verb} *)" for verb in verbs)]


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
