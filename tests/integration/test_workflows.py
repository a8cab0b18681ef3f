"""Whole workflows, hands-free, in the real Claude Code.

Each scenario is a headless `claude -p "/<skill> …"` run in the default permission mode (no
--allowedTools, no skipped permissions): a scripted model follows the skill's SKILL.md tool
call by tool call (tests/integration/workflows/*.json), the installed skill's runner drives
the real Codex CLI against the Responses mock, and the test checks what a user would see:
no permission prompt (`permission_denials` empty), no failed tool call, the runner's
decision, the decision record with its sections, and no Codex left running.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparring import __version__
from support.binaries import CLAUDE_OLD_VERSION
from support.habitat import (
    CLEAN_PATH,
    WORKFLOW_TIMEOUT_S,
    Habitat,
    Outcome,
    Scenario,
    codex_behaviour,
    codex_processes,
    commit_setup,
    make_habitat,
    run_workflow,
)
from support.installing import ROOT, make_project, shared_runtime
from support.messages_mock import MessagesMock
from support.processes import run_bounded
from support.responses_mock import MOCK_KEY_ENV, ResponsesMock, Text, messages
from support.scripted_model import ScriptedModel

pytestmark = pytest.mark.integration


@pytest.fixture
def habitat(request: pytest.FixtureRequest, tmp_path: Path,
            tmp_path_factory: pytest.TempPathFactory, messages_mock: MessagesMock,
            responses_mock: ResponsesMock, codex_bin: Path) -> Iterator[Habitat]:
    """Installed where the test's scenario says (`--project` unless it says `user`)."""
    params = getattr(request.node, "callspec", None)
    name = params.params.get("name") if params else None
    scenario = Scenario.load(name) if name else None
    made = make_habitat(tmp_path, shared_runtime(tmp_path_factory), messages_mock,
                        responses_mock, codex_bin, scenario.scope if scenario else "project",
                        scenario.setup if scenario else None)
    yield made
    assert codex_processes(made.project) == [], "Codex or a runner is still running"


def assert_hands_free(outcome: Outcome, scenario: Scenario) -> None:
    model = outcome.model
    assert model.failures == [], f"{scenario.name}: {model.failures}\n{outcome.run.stderr[-2000:]}"
    assert model.finished, f"{scenario.name} stopped at step {model.position}: {outcome.result}"
    assert outcome.denials == [], f"{scenario.name}: Claude Code asked for permission"
    assert [e for e in model.log if e.is_error and not scenario.steps[e.step].get("fails")] == []
    assert outcome.result.get("is_error") is False, outcome.result


def assert_records(habitat: Habitat, scenario: Scenario) -> None:
    for wanted in scenario.files:
        found = sorted(habitat.project.glob(wanted["glob"]))
        assert found, f"{scenario.name}: no {wanted['glob']}"
        text = found[-1].read_text(encoding="utf-8")
        for section in wanted.get("contains", []):
            assert section in text, f"{found[-1].name} lacks {section!r}"
        for absent in wanted.get("lacks", []):
            assert absent not in text, f"{found[-1].name} has {absent!r}"


def assert_claudes_model(habitat: Habitat) -> None:
    """A turn records only a model Claude Code named: one of its own requests' (under
    `claude -p` it names none to the SessionStart hook, so none is recorded;
    test_claude_model.py runs it interactively, where it does)."""
    asked = {r.body.get("model") for r in habitat.messages.messages_requests()
             if isinstance(r.body, dict)}
    recorded = {t.get("claude_model") for f in habitat.project.glob(".sparring/sessions/*/"
                                                                   "session.json")
                for t in json.loads(f.read_text(encoding="utf-8"))["turns"]}
    assert recorded <= asked | {None}, (recorded, asked)


# Every scripted workflow there: each workflow's common runs, and the unusual ones (over two
# turns: the user answers a question, then the debate runs; when Codex fails: a round
# recovered once, a stand-in round; Codex, given a writable sandbox, changes a file and the
# user has it undone; a debate picked up in a new conversation). A new workflow's scenario
# runs by being there; one that stops midway runs as the first half of the scenario that
# picks it up (`after`), not again on its own.
_ALL = sorted(p.stem for p in (Path(__file__).parent / "workflows").glob("*.json"))
_PICKED_UP = {Scenario.load(name).after for name in _ALL}
SCENARIOS = [name for name in _ALL if name not in _PICKED_UP]
# One of each workflow, and the one over two turns (install.py's rules then), run in a
# project under "My Projects/" (the skills installed there too): Claude Code approves a
# path with a space only in double quotes. The first runs without install.py's settings in
# the current Claude Code, where only the skills' own rules approve.
SPACED = ("think-about-consensus", "dual-model-deeper-dive", "arch-debate-agreed",
          "think-about-clarified", "deep-discussion-none")
SKILL_RULES_ONLY = "think-about-consensus"
# Every scenario in the current Claude Code; in 2.1.197 (the last for Node < 22) those
# five, whole: each real run takes seconds, so each one checks a case no other run does.
# The pairs that pick a debate up in a new conversation (one per workflow, two `claude -p`
# each) run in the current one only: the five already prove each workflow in 2.1.197.
RUNS = [*((name, "current") for name in SCENARIOS),
        *((name, CLAUDE_OLD_VERSION) for name in SPACED)]


@pytest.mark.parametrize(("name", "version"), RUNS, ids=[f"{v}-{n}" for n, v in RUNS])
def test_a_whole_workflow_runs_hands_free(
        name: str, version: str, request: pytest.FixtureRequest, tmp_path: Path,
        tmp_path_factory: pytest.TempPathFactory, messages_mock: MessagesMock,
        responses_mock: ResponsesMock, codex_bin: Path) -> None:
    claude: Path = request.getfixturevalue(
        "claude_bin" if version == "current" else "claude_bin_197")
    scenario = Scenario.load(name)
    spaced = name in SPACED
    permissions = not (name == SKILL_RULES_ONLY and version == "current")
    base = tmp_path / "My Projects" if spaced else tmp_path
    base.mkdir(exist_ok=True)
    habitat = make_habitat(base, shared_runtime(tmp_path_factory), messages_mock,
                           responses_mock, codex_bin, scenario.scope, scenario.setup,
                           permissions)
    if not permissions:
        assert not (habitat.project / ".claude" / "settings.local.json").exists()

    outcome = run_workflow(claude, habitat, scenario)

    assert_hands_free(outcome, scenario)
    assert_records(habitat, scenario)
    assert_claudes_model(habitat)
    assert habitat.responses.pending == 0, "Codex answered every round it was asked"
    if scenario.calls is not None:
        calls = [e.input["command"] for e in outcome.model.log if e.tool == "Bash"]
        assert len(calls) == scenario.calls, calls
    if outcome.before is not None:
        assert_picked_up(habitat, outcome, scenario)
    if spaced:
        assert " " in str(habitat.project)
        assert any(e.tool == "Bash" and e.input["command"].startswith('"')
                   for e in outcome.model.log), "the launcher was called in double quotes"
    assert codex_processes(habitat.project) == [], "Codex or a runner is still running"


def assert_picked_up(habitat: Habitat, outcome: Outcome, scenario: Scenario) -> None:
    """A scenario `after` another: the first conversation stopped midway, hands-free too; a
    new one (another Claude Code session) found the session with `status --open`, went on
    from the step the runner recorded, and Codex went on on the same thread."""
    before, stopped = outcome.before, Scenario.load(scenario.after or "")
    assert before is not None
    assert_hands_free(before, stopped)
    assert_records(habitat, stopped)
    assert before.result["session_id"] != outcome.result["session_id"], "a new conversation"
    row, following = picked_up_row(outcome, scenario.skill)
    assert following in re.findall(r"`([^`]+)`", row["next"]), (
        f"{scenario.name}: went on with {following!r}, not the step recorded: {row['next']}")
    folder = habitat.project / ".sparring" / "sessions" / row["session"]
    data = json.loads((folder / "session.json").read_text(encoding="utf-8"))
    assert max(t["round"] for t in data["turns"]) > row["rounds"], "it went on past that round"
    assert {t["thread_id"] for t in data["turns"]} == {data["thread_id"]}
    asked = habitat.responses.responses_requests()
    assert scenario.codex and {r.header("thread-id") for r in asked} == {data["thread_id"]}, \
        "Codex went on on the same thread"
    # Codex's first answer (after the commands it ran to read the code, if any)
    first_answer = next(b for b in map(codex_behaviour, stopped.codex) if isinstance(b, Text))
    assert isinstance(first_answer.reply, str)
    assert first_answer.reply in messages(asked[-1], "assistant"), "with what it said before"


def picked_up_row(outcome: Outcome, skill: str) -> tuple[dict[str, Any], str]:
    """The new conversation's first runner call, `status --open` (SKILL.md's "Picking up
    where it stopped"): the open session of this skill, and the runner call that came next."""
    calls = [e for e in outcome.model.log if e.tool == "Bash"]
    launcher = outcome.model.values["launcher"]
    assert calls[0].input["command"] == f"{launcher} status --open", calls[0].input
    [row] = [r for r in (calls[0].output or {})["sessions"] if r["skill"] == skill]
    return row, calls[1].input["command"]


def readme_section(heading: str) -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    return readme.split(f"\n## {heading}", 1)[1].split("\n## ", 1)[0]


def readme_headless_command() -> list[str]:
    """The `claude -p` line the README tells a user to run unattended."""
    block = re.search(r"```sh\n(.*?)```", readme_section("Unattended:"), re.S)
    assert block, "the README's headless section has no command"
    [line] = [x for x in block.group(1).splitlines() if x.startswith("claude -p ")]
    return shlex.split(line)


def test_the_readmes_headless_command_runs_a_whole_debate(claude_bin: Path,
                                                          habitat: Habitat) -> None:
    argv = readme_headless_command()
    scenario = Scenario.load("think-about-consensus")
    assert argv[2].startswith("/think-about ")
    commit_setup(habitat.project, scenario.setup)  # the code its debate cites
    for answer in scenario.codex:
        habitat.responses.script(codex_behaviour(answer))
    model = ScriptedModel(scenario.steps, {"cwd": str(habitat.project)})
    habitat.messages.drive(model)

    run = run_bounded([claude_bin, *argv[1:]], env=habitat.env, cwd=habitat.project,
                      timeout=WORKFLOW_TIMEOUT_S)

    result = json.loads(run.stdout)
    assert run.returncode == 0 and result["is_error"] is False, run.stderr[-2000:]
    assert result["permission_denials"] == []
    assert model.finished and model.failures == []
    assert result["result"] == scenario.steps[-1]["text"]
    assert_records(habitat, scenario)


# Launcher calls the skills never make: each must still reach the user (denied in `-p`).
OUTSIDE = ["{{launcher}} render --list",
           "{{launcher}} guard revert --session {{session}}",
           "{{launcher}} guard check --session {{session}}",
           "{{launcher}} start {{session}} --sandbox read-only --vars-file {{inbox}}/q.yaml",
           "{{launcher}} start {{session}} --vars-file {{inbox}}/q.yaml --sandbox=workspace-write",
           # The user's own variable, set by Claude for one command: never without asking.
           "SPARRING_SANDBOX=danger-full-access {{launcher}} status {{session}}",
           "env SPARRING_SANDBOX=danger-full-access {{launcher}} status {{session}}",
           "export SPARRING_SANDBOX=danger-full-access && {{launcher}} status {{session}}"]
NOT_THE_RULES = Scenario("outside-the-rules", "dual-model", "Redis or SQLite?", [], [
    {"bash": "{{launcher}} doctor --json --inbox", "save": {"inbox": "inbox"}},
    {"bash": "{{launcher}} init --skill dual-model", "save": {"session": "session"}},
    {"write": "{{inbox}}/q.yaml", "content": "QUESTION: Redis or SQLite?\n"},
    *[{"bash": command, "fails": True} for command in OUTSIDE],
    {"bash": "{{launcher}} status {{session}}", "expect": {"ok": True}},
    {"text": "Shall I go on?", "then": "Yes."},
    # The next turn: only install.py's rules in Claude Code's settings apply.
    *[{"bash": command, "fails": True} for command in OUTSIDE],
    {"bash": "{{launcher}} stop {{session}}", "expect": {"ok": True}},
    {"text": "done"}])


def test_a_launcher_call_outside_the_skills_verbs_asks_the_user(claude_each: Path,
                                                               habitat: Habitat) -> None:
    """The installed rules and the skill's allowed-tools approve the runner only with the
    verbs the skill runs: `render`, `guard revert`, `guard check` and any call naming
    --sandbox are refused in `-p` (Claude Code would ask), in the skill's turn and after; so
    is setting SPARRING_SANDBOX for one command, whichever way it is written."""
    outcome = run_workflow(claude_each, habitat, NOT_THE_RULES)

    assert outcome.model.failures == [] and outcome.model.finished, outcome.model.failures
    denied = [d["tool_input"]["command"] for d in outcome.denials]
    launcher = outcome.model.values["launcher"]
    wanted = [c.replace("{{launcher}}", launcher)
              .replace("{{session}}", outcome.model.values["session"])
              .replace("{{inbox}}", outcome.model.values["inbox"]) for c in OUTSIDE]
    assert denied == wanted * 2
    ran = [e for e in outcome.model.log if e.tool == "Bash" and e.input["command"] in wanted]
    assert ran and all(e.output is None for e in ran), "no runner output: nothing ran"
    assert habitat.responses.responses_requests() == [], "Codex never started"
    assert not list((habitat.project / ".sparring" / "sessions").glob("*/turns/*"))


def on_a_users_machine(home: Path, tmp_path: Path) -> tuple[str, list[Path]]:
    """What a user's machine holds beside a fresh one: another tool's skill and a Codex
    folder in HOME, a `.sparring` left in HOME and in the temporary folder above the project,
    and a Claude Code and a Codex installed globally (later on PATH than the ones the user
    runs; each leaves a mark if it is ever started). The PATH part, and what must stay
    untouched."""
    (home / ".claude" / "skills" / "someone-elses").mkdir(parents=True)
    (home / ".claude" / "skills" / "someone-elses" / "SKILL.md").write_text(
        "---\nname: someone-elses\ndescription: not sparring's\n---\nHello.\n")
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text('model = "someone-elses"\n')
    stray = [home / ".sparring" / "sessions", tmp_path / ".sparring" / "sessions"]
    for folder in stray:
        folder.mkdir(parents=True)
    installed = tmp_path / "usr-local-bin"
    installed.mkdir()
    for name in ("claude", "codex", "sparring"):
        program = installed / name
        program.write_text(f"#!/bin/sh\ntouch {tmp_path}/global-{name}-ran\nexit 3\n")
        program.chmod(0o755)
    return str(installed), stray


@pytest.mark.parametrize("machine", ["fresh", "a user's"])
def test_the_readmes_first_command_installs_the_pack_and_runs_a_debate(
        claude_bin: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        messages_mock: MessagesMock, responses_mock: ResponsesMock, codex_bin: Path,
        machine: str) -> None:
    """The first of the README's two commands for a fresh machine, as written, in a clone:
    install.py into a project, then a whole think-about, headless, in the real Claude Code;
    again on a user's machine (on_a_users_machine), which changes nothing of it."""
    [line] = [x.strip() for x in readme_section("Two commands for a fresh machine").splitlines()
              if x.strip().startswith("python3 install.py ")]
    scenario = Scenario.load("think-about-consensus")
    project = commit_setup(make_project(tmp_path / "your-repo"), scenario.setup)
    for answer in scenario.codex:
        responses_mock.script(codex_behaviour(answer))
    model = ScriptedModel(scenario.steps, {"cwd": str(project)})
    messages_mock.drive(model)
    home = tmp_path / "home"
    env = {**messages_mock.claude_env(home)}
    installed, stray = on_a_users_machine(home, tmp_path) if machine != "fresh" else ("", [])
    env = {**env,
           "PATH": ":".join(filter(None, (str(claude_bin.parent), CLEAN_PATH,
                                          str(Path(sys.executable).parent), installed))),
           "XDG_DATA_HOME": str(shared_runtime(tmp_path_factory)),
           "SPARRING_CODEX": str(codex_bin), MOCK_KEY_ENV: "dummy", "SPARRING_STARTSECS": "5",
           "CODEX_HOME": str(responses_mock.codex_home(tmp_path / "codex-home"))}

    run = run_bounded(["bash", "-ec", line.replace("/path/to/your/repo", str(project))],
                      env=env, cwd=ROOT, timeout=WORKFLOW_TIMEOUT_S)

    assert run.returncode == 0 and not run.timed_out, run.stdout[-3000:] + run.stderr[-3000:]
    assert f"sparring {__version__} installed in {project}/.claude/skills; doctor: ready" in \
        run.stdout, run.stdout
    assert model.finished and model.failures == [], model.failures
    assert run.stdout.rstrip().endswith(scenario.steps[-1]["text"]), run.stdout[-1000:]
    habitat = Habitat(project, env, messages_mock, responses_mock)
    assert_records(habitat, scenario)
    assert codex_processes(project) == []
    assert [list(folder.iterdir()) for folder in stray] == [[] for _ in stray]
    assert not list(tmp_path.glob("global-*-ran")), "a globally installed program ran"
