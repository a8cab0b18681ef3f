"""The Claude Code plugin, hands-free: installed from its marketplace with no install.py
step, it makes its own runtime on first use, and its PreToolUse hook approves in every turn
what install.py's rules approve for an installed pack, starting for no other tool call, in
the real Claude Code.

The plugin is a copy of this repository, installed as a user does (`claude plugin
marketplace add`, `claude plugin install sparring@sparring`) or loaded with `--plugin-dir`
(nothing installed but the runtime, and no permission rule in any settings file); a scripted
model follows the skill's SKILL.md over two turns, the second after the user answered a
question, where only the hook can approve. tests/test_hook.py holds the hook's rules one by
one, tests/test_plugin_runtime.py the runtime's build.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from support.habitat import (
    Habitat,
    Scenario,
    codex_processes,
    make_habitat,
    plugin_copy,
    run_workflow,
)
from support.installing import OFFLINE, WHEELS, shared_runtime
from support.messages_mock import MessagesMock
from support.processes import run_bounded
from support.responses_mock import ResponsesMock

pytestmark = pytest.mark.integration

MakeHabitat = Callable[..., Habitat]


@pytest.fixture
def plugin_habitat(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
                   messages_mock: MessagesMock, responses_mock: ResponsesMock,
                   codex_bin: Path) -> Iterator[MakeHabitat]:
    """Makes the habitat a test asks for (with or without the hook, with set-up files)."""
    made: list[Habitat] = []

    def make(hook: bool = True, setup: dict[str, str] | None = None) -> Habitat:
        habitat = make_habitat(tmp_path, shared_runtime(tmp_path_factory), messages_mock,
                               responses_mock, codex_bin, "plugin", setup, permissions=hook)
        assert not (habitat.project / ".claude").exists(), "no settings: the plugin's own"
        made.append(habitat)
        return habitat

    yield make
    for habitat in made:
        assert codex_processes(habitat.project) == [], "Codex or a runner is still running"


def install_from_marketplace(claude: Path, habitat: Habitat, base: Path) -> Path:
    """The plugin as a user installs it in Claude Code: its marketplace added (a clean copy
    of the repository's plugin files), then `sparring@sparring` installed for the user; no
    --plugin-dir. Returns the folder Claude Code installed it in."""
    source = plugin_copy(base / "marketplace")
    for argv in (["plugin", "marketplace", "add", str(source)],
                 ["plugin", "install", "sparring@sparring"]):
        done = run_bounded([claude, *argv], env=habitat.env, cwd=habitat.project, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads((Path(habitat.env["HOME"]) / ".claude" / "plugins" /
                         "installed_plugins.json").read_text())
    [entry] = record["plugins"]["sparring@sparring"]
    return Path(entry["installPath"])


FIRST_USE = Scenario("first-use", "think-about", "Redis or SQLite?", [], [
    {"bash": "{{launcher}} doctor --json --inbox --full", "save": {"inbox": "inbox"}},
    {"bash": "{{launcher}} init --skill think-about", "save": {"session": "session"}},
    {"text": "Two questions first: how many replicas, and what latency?", "then": "Three."},
    {"bash": "{{launcher}} stop {{session}}", "expect": {"ok": True}},
    {"text": "Stopped."}], scope="plugin")


def test_the_plugin_from_its_marketplace_makes_its_runtime_on_first_use(
        claude_each: Path, tmp_path: Path, messages_mock: MessagesMock,
        responses_mock: ResponsesMock, codex_bin: Path) -> None:
    """No install.py anywhere: no runtime exists when the skill's first runner call comes;
    the plugin makes it in the folder Claude Code keeps for its data, and every call of both
    turns runs without a prompt. All of it under a folder such as /Users/Jane O'Doe (the
    home, the marketplace, the project): the data folder's name is a shell word with a quote
    in it, and the runtime is made and found there."""
    base = tmp_path / "Jane O'Doe"
    base.mkdir()
    no_runtime = base / "no-runtime"  # XDG_DATA_HOME: install.py's runtime is not there
    habitat = make_habitat(base, no_runtime, messages_mock, responses_mock, codex_bin,
                           "plugin")
    habitat.claude_args = []  # installed, not loaded from a folder
    if OFFLINE:  # pip finds the runtime's dependencies in the test environment's wheels
        habitat.env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(WHEELS))
    installed = install_from_marketplace(claude_each, habitat, base)
    data = Path(habitat.env["HOME"]) / ".claude" / "plugins" / "data" / "sparring-sparring"
    assert not (data / "venv").exists()

    outcome = run_workflow(claude_each, habitat, FIRST_USE)

    model = outcome.model
    assert model.failures == [] and model.finished, (model.failures, outcome.run.stderr[-2000:])
    assert len(outcome.results) == 2 and outcome.denials == [], outcome.denials
    # The plugin as Claude Code runs it: its cache copy, or (2.1.332, a marketplace in a
    # local folder) that folder itself.
    root = Path(model.values["skill_dir"]).parents[1]
    assert root in (installed, base / "marketplace"), root
    assert "'" in str(data)
    assert (data / "runtime.ready").read_text() == f"{root}\n"
    assert not no_runtime.exists(), "nothing made where install.py puts its runtime"
    doctor = model.log[0].output or {}
    found = {c["name"]: c for c in doctor["checks"]}
    assert found["runtime"]["detail"].startswith(
        f"the plugin's own runtime {data / 'venv' / 'bin' / 'python'}: sparring "), found
    assert "the skills come from the plugin, nothing to install" in found["skills"]["detail"]
    assert "install.py" not in json.dumps(doctor["checks"]), doctor["checks"]


def python3_watch(folder: Path) -> Path:
    """A `python3` first on PATH that notes each start (its arguments and stdin), then runs
    the real one: the hook's command names `python3`."""
    folder.mkdir(parents=True)
    log = folder / "started"
    shim = folder / "python3"
    shim.write_text(f'#!/bin/sh\nn="{log}.$$"\ncat > "$n.in"\nprintf "%s\\n" "$*" > "$n.args"\n'
                    f'exec /usr/bin/python3 "$@" < "$n.in"\n')
    shim.chmod(0o755)
    return log


UNRELATED = Scenario("unrelated-calls", "think-about", "Redis or SQLite?", [], [
    {"bash": "{{launcher}} doctor --json --inbox", "save": {"inbox": "inbox"}},
    {"read": "{{cwd}}/app.py"},
    {"text": "Shall I go on?", "then": "Yes."},
    # The next turn: the skill's allowed-tools are gone; only the hook approves.
    {"write": "{{cwd}}/notes.md", "content": "not the runner's\n", "fails": True},
    {"bash": "git log --oneline"},  # a read-only command: Claude Code approves it itself
    {"write": "{{inbox}}/round1.yaml", "content": "QUESTION: Redis or SQLite?\n"},
    {"edit": "{{inbox}}/round1.yaml", "old": "Redis or SQLite", "new": "Redis or Postgres"},
    {"read": "{{skill_dir}}/references/verdict.md"},
    {"text": "done"}], scope="plugin")


def test_the_hook_starts_only_for_sparrings_own_calls(claude_each: Path,
                                                      plugin_habitat: MakeHabitat,
                                                      tmp_path: Path) -> None:
    """Each PreToolUse hook carries an `if` Claude Code checks first: a read of the
    project's own file, a write outside the inbox and any other command start no process;
    the runner's call, the inbox write and edit and the read of the skill's folder each
    start one, and in the later turn it alone approves them."""
    habitat = plugin_habitat()
    started = python3_watch(tmp_path / "watch")
    habitat.env["PATH"] = f"{started.parent}:{habitat.env['PATH']}"

    outcome = run_workflow(claude_each, habitat, UNRELATED)

    assert outcome.model.failures == [] and outcome.model.finished, outcome.model.failures
    values = outcome.model.values
    assert [(d["tool_name"], d["tool_input"]["file_path"]) for d in outcome.denials] == [
        ("Write", f"{values['cwd']}/notes.md")]
    assert "Redis or Postgres" in (Path(values["inbox"]) / "round1.yaml").read_text()
    hooks = [json.loads(Path(str(args)[:-len(".args")] + ".in").read_text())
             for args in started.parent.glob("started.*.args")
             if "scripts/hook.py" in args.read_text()]
    calls = sorted((h["tool_name"], h["tool_input"].get("command") or
                    h["tool_input"].get("file_path")) for h in hooks)
    assert calls == sorted([
        ("Bash", f"{values['launcher']} doctor --json --inbox"),
        ("Write", f"{values['inbox']}/round1.yaml"),
        ("Edit", f"{values['inbox']}/round1.yaml"),
        ("Read", f"{values['skill_dir']}/references/verdict.md")]), calls


def as_plugin(name: str) -> Scenario:
    return dataclasses.replace(Scenario.load(name), scope="plugin")


def doctor_in_full(scenario: Scenario) -> Scenario:
    """The scenario with its doctor printing every check (`--full`: the same shape, approved
    alike), for a test that reads them."""
    steps = [{**step, "bash": step["bash"] + " --full"}
             if step.get("bash", "").endswith(" doctor --json --inbox") else step
             for step in scenario.steps]
    return dataclasses.replace(scenario, steps=steps)


def test_the_plugin_runs_a_whole_think_about_hands_free(claude_each: Path,
                                                       plugin_habitat: MakeHabitat) -> None:
    """Over two turns: the user answers think-about's questions, then the debate runs to its
    report; in the second turn only the plugin's hook approves the runner, the inbox and the
    skill's folder."""
    scenario = doctor_in_full(as_plugin("think-about-clarified"))
    habitat = plugin_habitat(setup=scenario.setup)

    outcome = run_workflow(claude_each, habitat, scenario)

    model = outcome.model
    assert model.failures == [] and model.finished, (model.failures, outcome.run.stderr[-2000:])
    assert len(outcome.results) == 2 and outcome.denials == [], outcome.denials
    assert outcome.result.get("is_error") is False, outcome.result
    assert model.values["skill_dir"].startswith(habitat.claude_args[1] + "/skills/")
    doctor = next(e.output for e in model.log if e.tool == "Bash" and "doctor" in e.input[
        "command"])
    assert doctor is not None and doctor["ready"] is True, doctor
    found = {c["name"]: c for c in doctor["checks"]}
    assert "the plugin's PreToolUse hook" in found["permissions"]["detail"]
    [report] = habitat.project.glob("docs/decisions/*-think-about-*.md")
    text = report.read_text(encoding="utf-8")
    assert "Consensus" in text
    # Claude's model only as Claude Code named it to the plugin's SessionStart hook: under
    # `claude -p` it names none (test_claude_model.py: interactively it does)
    front = yaml.safe_load(text.split("---\n", 2)[1])
    asked = {r.body.get("model") for r in habitat.messages.messages_requests()
             if isinstance(r.body, dict)}
    [maker] = front["decision-makers"]
    assert maker[len("Claude ("):-1] in {*asked, "its model is not recorded"}, (maker, asked)


def test_the_plugin_runs_hands_free_under_a_folder_with_a_space_and_a_quote(
        claude_bin: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        messages_mock: MessagesMock, responses_mock: ResponsesMock, codex_bin: Path) -> None:
    """A home such as /Users/Jane O'Doe: the plugin (and the project) under it, the launcher
    called in double quotes. The skill's own `allowed-tools` do not approve it there in the
    first turn (Claude Code matches no rule holding the quote), so the plugin's hook does, in
    both turns."""
    scenario = as_plugin("think-about-clarified")
    base = tmp_path / "Jane O'Doe"
    base.mkdir()
    habitat = make_habitat(base, shared_runtime(tmp_path_factory), messages_mock,
                           responses_mock, codex_bin, "plugin", scenario.setup)

    outcome = run_workflow(claude_bin, habitat, scenario)

    model = outcome.model
    assert model.failures == [] and model.finished, (model.failures, outcome.run.stderr[-2000:])
    assert len(outcome.results) == 2 and outcome.denials == [], outcome.denials
    assert "'" in model.values["skill_dir"] and any(
        e.tool == "Bash" and e.input["command"].startswith('"') for e in model.log)
    assert list(habitat.project.glob("docs/decisions/*-think-about-*.md"))
    assert codex_processes(habitat.project) == [], "Codex or a runner is still running"


def test_without_its_hook_the_plugin_stops_to_ask_after_the_first_turn(
        claude_bin: Path, plugin_habitat: MakeHabitat) -> None:
    """The control: a plugin that has no hook. The skill's allowed-tools cover the turn it was
    invoked in; in the next, each runner call, each write into the inbox and each read of the
    skill's folder (outside the project) asks."""
    habitat = plugin_habitat(hook=False)
    scenario = Scenario("no-hook", "think-about", "Redis or SQLite?", [], [
        {"bash": "{{launcher}} doctor --json --inbox", "save": {"inbox": "inbox"}},
        {"bash": "{{launcher}} init --skill think-about", "save": {"session": "session"}},
        {"text": "Two questions first.", "then": "Three replicas."},
        {"bash": "{{launcher}} status {{session}}", "fails": True},
        {"write": "{{inbox}}/round1.yaml", "content": "QUESTION: Redis?\n", "fails": True},
        {"read": "{{skill_dir}}/references/verdict.md", "fails": True},
        {"bash": "{{launcher}} stop {{session}}", "fails": True},
        {"text": "I need your approval to go on."}], scope="plugin")

    outcome = run_workflow(claude_bin, habitat, scenario)

    assert outcome.model.failures == [] and outcome.model.finished, outcome.model.failures
    assert outcome.results[0]["permission_denials"] == []
    denied = outcome.results[1]["permission_denials"]
    assert [d["tool_name"] for d in denied] == ["Bash", "Write", "Read", "Bash"], denied
    session = habitat.project / ".sparring" / "sessions"
    for run in session.glob("*/session.json"):  # nothing stopped it: the user was not asked
        assert json.loads(run.read_text())["turns"] == []


# Calls the hook must leave to the user in a later turn, where it alone could approve them.
ASKED = ["{{launcher}} render --list",
         "{{launcher}} guard revert --session {{session}}",
         "{{launcher}} guard check --session {{session}}",
         "{{launcher}} start {{session}} --sandbox read-only --vars-file {{inbox}}/q.yaml",
         "{{launcher}} status {{session}} && {{launcher}} status {{session}}",
         "{{launcher}} status {{session}}; id",
         "{{launcher}} status {{session}} | head -1",
         "{{launcher}} status $(echo {{session}})",
         "SPARRING_SANDBOX=danger-full-access {{launcher}} status {{session}}",
         "cd / && {{launcher}} status {{session}}",
         "{{launcher}} status {{session}} > {{inbox}}/out.json",
         "{{launcher}}  status {{session}}"]
OUTSIDE_THE_HOOK = Scenario("outside-the-hook", "dual-model", "Redis or SQLite?", [], [
    {"bash": "{{launcher}} doctor --json --inbox", "save": {"inbox": "inbox"}},
    {"bash": "{{launcher}} init --skill dual-model", "save": {"session": "session"}},
    {"write": "{{inbox}}/q.yaml", "content": "QUESTION: Redis or SQLite?\n"},
    {"text": "Shall I go on?", "then": "Yes."},
    # The next turn: only the plugin's hook may approve.
    *[{"bash": command, "fails": True} for command in ASKED],
    {"write": "{{cwd}}/notes.md", "content": "not in the inbox\n", "fails": True},
    {"write": "{{cwd}}/.sparring/sessions/notes.md", "content": "x\n", "fails": True},
    {"read": "{{skill_dir}}/../../install.py", "fails": True},
    {"write": "{{inbox}}/q2.yaml", "content": "QUESTION: Redis?\n"},
    {"read": "{{skill_dir}}/references/runner.md"},
    {"bash": "{{launcher}} status {{session}}", "expect": {"ok": True}},
    {"bash": "{{launcher}} stop {{session}}", "expect": {"ok": True}},
    {"text": "done"}], scope="plugin")


def test_what_the_hook_must_not_allow_still_asks(claude_each: Path,
                                                plugin_habitat: MakeHabitat) -> None:
    """Verbs no rule approves, --sandbox, chained, piped, substituted or redirected commands,
    a variable set for one command, writes outside the inbox, reads outside the skill's
    folder: Claude Code asks (in `-p`, refuses), and what the rules allow goes on."""
    habitat = plugin_habitat()

    outcome = run_workflow(claude_each, habitat, OUTSIDE_THE_HOOK)

    model = outcome.model
    assert model.failures == [] and model.finished, model.failures
    assert outcome.results[0]["permission_denials"] == []
    values = model.values
    wanted = [c.replace("{{launcher}}", values["launcher"]).replace("{{session}}",
              values["session"]).replace("{{inbox}}", values["inbox"])
              .replace("{{cwd}}", values["cwd"]) for c in ASKED]
    denied = outcome.results[1]["permission_denials"]
    assert [d["tool_input"].get("command") for d in denied if d["tool_name"] == "Bash"] == wanted
    paths = [os.path.normpath(d["tool_input"]["file_path"]) for d in denied
             if d["tool_name"] != "Bash"]  # 2.1.332 shows a path with `..` resolved
    assert paths == [f"{values['cwd']}/notes.md", f"{values['cwd']}/.sparring/sessions/notes.md",
                     os.path.normpath(f"{values['skill_dir']}/../../install.py")]
    assert not (habitat.project / "notes.md").exists()
    assert habitat.responses.responses_requests() == [], "Codex never started"


def test_where_the_hook_approves_the_runner_still_refuses(claude_each: Path,
                                                         plugin_habitat: MakeHabitat) -> None:
    """The hook approves `start`, a verb the skill runs; the project's committed sparring.yaml
    asks for a sandbox the user never allowed, and the runner refuses: nothing starts."""
    habitat = plugin_habitat(setup={"sparring.yaml": "sandbox: danger-full-access\n"})
    scenario = Scenario("hook-and-runner", "think-about", "Redis or SQLite?", [], [
        {"bash": "{{launcher}} doctor --json --inbox", "save": {"inbox": "inbox"},
         "expect": {"ready": False}, "fails": True},  # not ready: doctor exits 1
        {"bash": "{{launcher}} init --skill think-about", "save": {"session": "session"}},
        {"write": "{{inbox}}/round1.yaml", "content": "QUESTION: Redis or SQLite?\n"},
        {"text": "The project asks for a wider sandbox. Try anyway?", "then": "Yes."},
        {"bash": "{{launcher}} start {{session}} --template think-about/round1 --vars-file "
         "{{inbox}}/round1.yaml", "fails": True,
         "expect": {"error.code": "sandbox_not_allowed"}},
        {"bash": "{{launcher}} stop {{session}}", "expect": {"ok": True}},
        {"text": "Codex did not start: only you can widen its sandbox."}], scope="plugin")

    outcome = run_workflow(claude_each, habitat, doctor_in_full(scenario))

    assert outcome.model.failures == [] and outcome.model.finished, outcome.model.failures
    assert outcome.denials == [], "the hook approved it; the runner is what refused"
    assert habitat.responses.responses_requests() == []
    assert not list((habitat.project / ".sparring" / "sessions").glob("*/turns/*"))
    doctor = outcome.model.log[0].output or {}
    assert json.dumps(doctor).count("danger-full-access") >= 1
