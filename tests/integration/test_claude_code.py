"""The real Claude Code finds, expands and runs the skills install.py installed, offline.

A temporary git project gets the skills from `install.py --project`; Claude Code runs
against the loopback Messages mock with a HOME where nothing else is installed and a PATH
with no `sparring` on it, so the skills' launcher must find the runtime through
XDG_DATA_HOME. Claude Code exits 0 on several failures (reference §17): the tests check
the requests it sent, not its exit status.

Skills whose SKILL.md is not in the repository yet are skipped in the listing test, and
`/arch-debate` and `/deep-discussion` fall back to think-about, chosen at collection;
once every SKILL.md exists, all four are covered.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from sparring import __version__
from sparring.workflows import registry
from support import messages_mock as mm
from support.habitat import plugin_copy
from support.installing import (
    ROOT,
    install_env,
    make_project,
    run_install,
    runtime_of,
    shared_runtime,
)
from support.loopback_server import Exchange
from support.messages_mock import MessagesMock
from support.processes import Finished, run_bounded

pytestmark = pytest.mark.integration

ALL_SKILLS = registry.SKILLS  # one skill per workflow (tests/test_registry.py)
RUN_TIMEOUT_S = 60.0
PLUGIN_TIMEOUT_S = 120.0
QUESTION = "Should we use Redis or SQLite?"
CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin"  # Claude Code and git, but no `sparring`


def in_repo(name: str) -> bool:
    return (ROOT / "skills" / name / "SKILL.md").is_file()


def skill_or_fallback(name: str) -> str:
    """`name` once its SKILL.md exists in the repo, else think-about with the same checks."""
    return name if in_repo(name) else "think-about"


ARCH = skill_or_fallback("arch-debate")
DEEP = skill_or_fallback("deep-discussion")
PRESENT = [name for name in ALL_SKILLS if in_repo(name)]
LISTED = [pytest.param(name, marks=pytest.mark.skipif(
    not in_repo(name), reason=f"skills/{name}/SKILL.md is not in the repository yet"))
    for name in ALL_SKILLS]


@dataclass(frozen=True)
class Installed:
    project: Path
    data: Path  # XDG_DATA_HOME holding the runtime

    def skill_dir(self, name: str) -> Path:
        return self.project / ".claude" / "skills" / name


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    data = shared_runtime(tmp_path_factory)
    base = tmp_path_factory.mktemp("claude-code")
    project = make_project(base / "project")
    (base / "home").mkdir()
    done = run_install("--project", project, env=install_env(data, base / "home"))
    assert done.returncode == 0, done.stdout + done.stderr
    return Installed(project, data)


@pytest.fixture
def env(claude_env: dict[str, str], installed: Installed) -> dict[str, str]:
    env = {**claude_env, "PATH": CLEAN_PATH, "XDG_DATA_HOME": str(installed.data)}
    assert shutil.which("sparring", path=env["PATH"]) is None
    return env


# -- reading what Claude Code sent ----------------------------------------------------------


def frontmatter(skill_md: Path) -> tuple[dict[str, Any], str]:
    head, body = skill_md.read_text().removeprefix("---\n").split("\n---\n", 1)
    meta: dict[str, Any] = yaml.safe_load(head)
    return meta, body


BASE_DIR = "Base directory for this skill: "


def skill_base(request: Any) -> Path:
    """The skill folder Claude Code says it expanded (`Base directory for this skill:`)."""
    for text in mm.first_message_texts(request):
        if text.startswith(BASE_DIR):
            return Path(text[len(BASE_DIR):].split("\n", 1)[0])
    raise AssertionError(f"no skill expansion in {mm.first_message_texts(request)!r}")


def expansion(request: Any, skill_dir: Path) -> str:
    """The skill text Claude Code put in the first message, after the base-dir line."""
    prefix = f"{BASE_DIR}{skill_dir}\n\n"
    found = [t for t in mm.first_message_texts(request) if t.startswith(prefix)]
    assert found, f"no expansion of {skill_dir} in {mm.first_message_texts(request)!r}"
    return found[0][len(prefix):]


def expected_lines(body: str, args: str, skill_dir: Path) -> list[str]:
    """The body's lines as Claude Code renders them: `$ARGUMENTS` and the skill dir
    substituted. Lines with another placeholder are left out (their rendering differs
    between versions, reference §16)."""
    rendered = body.replace("${CLAUDE_SKILL_DIR}", str(skill_dir)).replace("$ARGUMENTS", args)
    return [line for line in rendered.strip().splitlines()
            if not re.search(r"\$(\d|\{|ARGUMENTS\[|[a-z_]+\b)", line)]


def assert_expands(request: Any, installed: Installed, name: str, args: str) -> None:
    texts = "\n".join(mm.first_message_texts(request))
    assert f"<command-name>/{name}</command-name>" in texts
    assert f"<command-args>{args}</command-args>" in texts
    skill_dir = installed.skill_dir(name)
    shown = expansion(request, skill_dir)
    _, body = frontmatter(skill_dir / "SKILL.md")
    position = 0
    for line in expected_lines(body, args, skill_dir):
        found = shown.find(line, position)
        assert found >= 0, f"{name}: line missing or out of order: {line!r}"
        position = found + len(line)
    assert "$ARGUMENTS" in body and args in shown, "the arguments reach the skill's text"


def first_runner_command(text: str, skill_dir: Path) -> str:
    """The first line of a code block that calls the launcher, with its heredoc if any.
    SKILL.md writes it `sparring ...` and tells Claude to call it by its full path, or
    writes `${CLAUDE_SKILL_DIR}/sparring ...` (already the full path here)."""
    launcher = f"{skill_dir}/sparring"
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith(f"{launcher} ") or line.startswith("sparring "):
                command = line if line.startswith(launcher) else launcher + line[len("sparring"):]
                heredoc = re.search(r"<<'?(\w+)'?", command)
                if heredoc:
                    end = lines.index(heredoc.group(1), i + 1)
                    command = "\n".join([command, *lines[i + 1:end + 1]])
                return command
    raise AssertionError(f"no runner command in a code block of:\n{text}")


@dataclass
class RunFirstCommand:
    """Answers the expanded skill with a Bash call of its first runner command; a doctor with
    `--full` (the same shape, approved alike), so that the tests see every check."""

    commands: list[str] = field(default_factory=list)
    skill_dirs: list[Path] = field(default_factory=list)

    def respond(self, exchange: Exchange) -> None:
        skill_dir = skill_base(exchange.request)
        command = first_runner_command(expansion(exchange.request, skill_dir), skill_dir)
        if command.endswith(" doctor --json --inbox"):
            command += " --full"
        self.skill_dirs.append(skill_dir)
        self.commands.append(command)
        mm.bash(command, "run the sparring runner").respond(exchange)


def claude_print(claude: Path, prompt: str, env: dict[str, str], cwd: Path,
                 *extra: str) -> Finished:
    run = run_bounded([claude, "-p", prompt, "--output-format", "stream-json", "--verbose",
                       *extra], env=env, cwd=cwd, timeout=RUN_TIMEOUT_S)
    assert not run.timed_out, f"timed out: {run.args}\n{run.stderr}"
    return run


def result_event(run: Finished) -> dict[str, Any]:
    [result] = [e for e in run.json_lines() if e.get("type") == "result"]
    return result


def runner_output(messages_mock: MessagesMock, not_ready: bool = False) -> dict[str, Any]:
    """The runner's JSON, as the tool_result of the request after the Bash call
    (`not_ready`: a doctor that ran and found the machine not ready, which exits 1: Claude
    Code shows its output after an `Exit code 1` line)."""
    requests = messages_mock.messages_requests()
    assert len(requests) >= 2, f"no request after the tool call ({len(requests)} sent)"
    [result] = mm.last_user_tool_results(requests[1])
    text = mm.tool_result_text(result)
    if not_ready and result.get("is_error") and text.startswith("Exit code 1\n"):
        text = text.partition("\n")[2]
    else:
        assert result.get("is_error") is False, f"the Bash call failed or was denied: {text}"
    out: dict[str, Any] = json.loads(text)
    return out


# -- the tests ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def listings() -> dict[Path, str]:
    """The skill listing each Claude Code sent in its first request for `claude -p hello` in
    the installed project, by binary: one run per version for the four skills' tests."""
    return {}


@pytest.mark.parametrize("name", LISTED)
def test_the_listing_names_each_skill_with_its_description(
        name: str, claude_each: Path, messages_mock: MessagesMock, env: dict[str, str],
        installed: Installed, listings: dict[Path, str]) -> None:
    meta, _ = frontmatter(installed.skill_dir(name) / "SKILL.md")

    if claude_each not in listings:
        claude_print(claude_each, "hello", env, installed.project)
        listings[claude_each] = mm.skill_listing(messages_mock.messages_requests()[0])

    assert f"- {name}: {meta['description']}" in listings[claude_each]


def test_arch_debate_expands_with_the_question(claude_each: Path, messages_mock: MessagesMock,
                                               env: dict[str, str],
                                               installed: Installed) -> None:
    claude_print(claude_each, f"/{ARCH} {QUESTION}", env, installed.project)

    [request] = messages_mock.messages_requests()
    assert_expands(request, installed, ARCH, QUESTION)


def test_deep_discussion_receives_its_effort(claude_each: Path, messages_mock: MessagesMock,
                                             env: dict[str, str], installed: Installed) -> None:
    claude_print(claude_each, f"/{DEEP} high", env, installed.project)

    [request] = messages_mock.messages_requests()
    assert_expands(request, installed, DEEP, "high")


@pytest.mark.parametrize("name", PRESENT)
def test_the_first_runner_command_runs_without_a_permission_prompt(
        name: str, claude_each: Path, messages_mock: MessagesMock, env: dict[str, str],
        installed: Installed) -> None:
    skill_dir = installed.skill_dir(name)
    first = RunFirstCommand()
    messages_mock.script(first)
    args = "high" if name == "deep-discussion" else QUESTION

    # Default permission mode: no --allowedTools, no --dangerously-skip-permissions.
    run = claude_print(claude_each, f"/{name} {args}", env, installed.project)

    [command] = first.commands
    assert first.skill_dirs == [skill_dir]
    assert command.startswith(f"{skill_dir}/sparring ")
    out = runner_output(messages_mock, not_ready=True)  # no codex here: doctor exits 1
    assert out["ok"] is True, out
    assert result_event(run).get("permission_denials") == []
    if out["verb"] == "doctor":  # it ran on the runtime found through XDG_DATA_HOME
        runtime = next(c for c in out["checks"] if c["name"] == "runtime")
        assert runtime["ok"] and str(runtime_of(installed.data).venv) in runtime["detail"]


def test_plugin_validate_passes(claude_each: Path, env: dict[str, str], tmp_path: Path) -> None:
    run = run_bounded([claude_each, "plugin", "validate", ROOT], env=env, cwd=tmp_path,
                      timeout=RUN_TIMEOUT_S)

    assert run.returncode == 0, run.stdout + run.stderr
    assert "Validation passed" in run.stdout


def test_plugin_validate_strict_finds_no_warning(claude_bin: Path, env: dict[str, str],
                                                 tmp_path: Path) -> None:
    run = run_bounded([claude_bin, "plugin", "validate", "--strict", ROOT], env=env,
                      cwd=tmp_path, timeout=RUN_TIMEOUT_S)

    assert run.returncode == 0, run.stdout + run.stderr
    for name in PRESENT:
        assert f"skills: sparring:{name}" in run.stdout


# -- the Claude Code plugin, installed from its marketplace -----------------------------------


def plugin_source(dest: Path) -> Path:
    """What a git clone of the repository holds, links kept (a local marketplace is copied
    whole, ignored files too: the .ci binaries alone are more than a gigabyte)."""
    return plugin_copy(dest)


def claude_cli(claude: Path, env: dict[str, str], cwd: Path, *args: str) -> None:
    run = run_bounded([claude, *args], env=env, cwd=cwd, timeout=PLUGIN_TIMEOUT_S)
    assert run.returncode == 0 and not run.timed_out, run.stdout + run.stderr


def test_the_plugin_from_its_marketplace_runs_on_the_data_dir_runtime(
        claude_bin: Path, messages_mock: MessagesMock, env: dict[str, str], tmp_path: Path,
        installed: Installed) -> None:
    source = plugin_source(tmp_path / "sparring-clone")
    project = make_project(tmp_path / "plugin-project")
    claude_cli(claude_bin, env, project, "plugin", "marketplace", "add", str(source))
    claude_cli(claude_bin, env, project, "plugin", "install", "sparring@sparring")
    first = RunFirstCommand()
    messages_mock.script(first)

    run = claude_print(claude_bin, f"/sparring:think-about {QUESTION}", env, project)

    request = messages_mock.messages_requests()[0]
    assert "- sparring:think-about: " in mm.skill_listing(request)
    # A marketplace on a local path serves the plugin from that folder (observed: not from
    # its copy under ~/.claude/plugins/cache); from GitHub it would be a clone in the cache.
    skill_dir = skill_base(request)
    assert skill_dir in (source / "skills" / "think-about",
                         *Path(env["HOME"], ".claude", "plugins").rglob("skills/think-about"))
    assert QUESTION in expansion(request, skill_dir)
    assert first.commands[0].startswith(f"{skill_dir}/sparring ")
    out = runner_output(messages_mock, not_ready=True)  # no codex here: doctor exits 1
    assert out["ok"] is True and result_event(run).get("permission_denials") == []
    found = {c["name"]: c for c in out["checks"]}
    assert found["skills"]["ok"], found["skills"]
    assert f"in use from the plugin, {skill_dir.parents[1]} (Claude Code names them " \
        "sparring:<skill>): the skills come from the plugin, nothing to install" \
        in found["skills"]["detail"]
    assert found["runtime"]["ok"] and f"sparring {__version__}" in found["runtime"]["detail"]


def test_the_plugin_without_a_runtime_names_its_own_installer(
        claude_bin: Path, env: dict[str, str], tmp_path: Path) -> None:
    """The launcher of the plugin's installed copy run outside Claude Code (no data folder
    named: the plugin cannot make its own runtime there), before any runtime exists."""
    source = plugin_source(tmp_path / "sparring-clone")
    claude_cli(claude_bin, env, tmp_path, "plugin", "marketplace", "add", str(source))
    claude_cli(claude_bin, env, tmp_path, "plugin", "install", "sparring@sparring")
    [launcher] = Path(env["HOME"], ".claude", "plugins").rglob("skills/think-about/sparring")
    bare = {**env, "XDG_DATA_HOME": str(tmp_path / "empty")}

    done = subprocess.run([str(launcher), "doctor"], env=bare, capture_output=True, text=True,
                          timeout=30, check=False)

    out = json.loads(done.stdout)
    assert done.returncode == 1 and out["error"]["code"] == "runtime_missing"
    installer = launcher.parents[2] / "install.py"
    assert f"`python3 {installer} --runtime-only`" in out["error"]["hint"]
    dry = subprocess.run([sys.executable, str(installer), "--runtime-only", "--dry-run"],
                         env=install_env(tmp_path / "empty"), capture_output=True, text=True,
                         timeout=60, check=False)
    assert dry.returncode == 0 and "would create runtime" in dry.stdout, dry


# -- doctor, in Claude Code and without it ------------------------------------------------------


def first_doctor(claude: Path, messages_mock: MessagesMock, env: dict[str, str],
                 project: Path, name: str = "think-about") -> tuple[dict[str, Any], list[Path],
                                                                    Finished]:
    """`/<name>` in Claude Code: the skill's first runner command (doctor) and its output."""
    first = RunFirstCommand()
    messages_mock.script(first)
    run = claude_print(claude, f"/{name} {QUESTION}", env, project)
    assert first.commands and " doctor --json --inbox" in first.commands[0], first.commands
    return runner_output(messages_mock, not_ready=True), first.skill_dirs, run


def test_doctor_names_the_claude_code_it_runs_in_and_says_when_there_is_none(
        claude_each: Path, messages_mock: MessagesMock, env: dict[str, str],
        installed: Installed) -> None:
    """Inside Claude Code the skill's doctor names that very Claude Code and its version;
    run by a person where no `claude` is on PATH, it says so, as a warning, not a block."""
    out, _, run = first_doctor(claude_each, messages_mock, env, installed.project)

    inside = {c["name"]: c for c in out["checks"]}["claude_code"]
    version = subprocess.run([str(claude_each), "--version"], capture_output=True, text=True,
                             timeout=60, check=True).stdout.split()[0]
    assert inside["ok"] and inside["level"] == "ok", inside
    assert f"(running this command): {version};" in inside["detail"]
    assert result_event(run).get("permission_denials") == []

    launcher = installed.skill_dir("think-about") / "sparring"
    outside = subprocess.run([str(launcher), "doctor", "--json"], cwd=installed.project,
                             env={k: v for k, v in env.items() if k != "CLAUDE_CODE_EXECPATH"},
                             capture_output=True, text=True, timeout=120, check=False)
    found = {c["name"]: c for c in json.loads(outside.stdout)["checks"]}["claude_code"]
    assert found["ok"] is False and found["level"] == "warning", found
    assert "`claude` is not on PATH" in found["detail"]
    assert found["hint"] not in json.loads(outside.stdout)["hints"], "it does not block"


def test_a_user_and_a_project_install_run_the_users_copy_and_doctor_warns(
        claude_each: Path, messages_mock: MessagesMock, env: dict[str, str], tmp_path: Path,
        installed: Installed) -> None:
    """Installed twice, the skills are listed twice (2.1.197) or once (2.1.332), and Claude
    Code runs the user's copy either way: the project's own is passed over. install.py and
    doctor say so."""
    project = make_project(tmp_path / "twice")
    home = Path(env["HOME"])
    for args in (["--project", project], ["--user"]):
        done = run_install(*args, env=install_env(installed.data, home), cwd=project)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "doctor warning: duplicates: " in done.stdout, done.stdout

    out, skill_dirs, run = first_doctor(claude_each, messages_mock, env, project)

    assert skill_dirs == [home / ".claude" / "skills" / "think-about"], "the user's copy ran"
    listing = mm.skill_listing(messages_mock.messages_requests()[0])
    assert listing.count("- think-about: ") in (1, 2)
    found = {c["name"]: c for c in out["checks"]}["duplicates"]
    assert found["level"] == "warning" and "installed twice" in found["detail"], found
    assert found["hint"] in out["warnings"] and found["hint"] not in out["hints"]
    assert result_event(run).get("permission_denials") == []
