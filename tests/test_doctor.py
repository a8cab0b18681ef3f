"""`sparring doctor`: a verdict, and a hint for every problem."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from sparring import __version__
from support.barepath import BARE_PATH
from support.installing import (
    MARKER,
    ROOT,
    SKILLS,
    install_env,
    run_install,
    runtime_of,
    shared_runtime,
)
from support.terminal import on_a_terminal


def checks(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in out["checks"]}


@pytest.fixture
def installed(repo: Path, tmp_path_factory: pytest.TempPathFactory,
              monkeypatch: pytest.MonkeyPatch) -> Path:
    """`install.py --project repo` with the session's runtime, which doctor then sees."""
    data = shared_runtime(tmp_path_factory)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    done = run_install("--project", repo, env=install_env(data))
    assert done.returncode == 0, done.stdout + done.stderr
    return data


def write_marker(folder: Path, version: str) -> None:
    folder.mkdir(parents=True)
    (folder / MARKER).write_text(json.dumps({"tool": "sparring", "version": version,
                                             "files": {}}))


def test_ready_with_a_codex_that_accepts_every_flag(sparring: Any, repo: Path,
                                                    fake_codex: Any, installed: Path) -> None:
    fake_codex.log_in()
    result = sparring("doctor")
    assert result.exit_code == 0
    assert result.out["ready"] is True, result.out
    found = checks(result.out)
    assert "0.171.0" in found["codex_version"]["detail"]
    assert found["codex_flags"]["ok"] and found["project"]["ok"]


def test_a_codex_older_than_sparring_drives_is_refused_by_doctor_and_start(
        sparring: Any, repo: Path, fake_codex: Any, monkeypatch: Any) -> None:
    """Below the minimum (codex.MINIMUM_VERSION, measured: 0.131.0 rejects a flag sparring
    passes on resume), doctor is not ready and `start` refuses before anything runs, each in
    one line naming the version and the upgrade command."""
    fake_codex.log_in()
    monkeypatch.setenv("FAKE_CODEX_VERSION", "0.131.0")
    out = sparring("doctor").out
    found = checks(out)["codex_version"]
    assert out["ready"] is False and found["level"] == "problem"
    assert found["detail"] == ("codex-cli 0.131.0 is older than 0.132.0, the oldest release "
                               "sparring drives")
    assert out["hints"][0] == "upgrade codex: `npm install -g @openai/codex@latest`"
    session = sparring("init", "--skill", "think-about").out["session"]
    refused = sparring("start", session, input=b"Redis or SQLite?")
    assert refused.error_code == "codex_too_old", refused.raw
    error = refused.out["error"]
    assert "\n" not in error["message"] and error["message"].startswith("codex 0.131.0 (")
    assert error["message"].endswith(") is older than 0.132.0, the oldest release sparring "
                                     "drives")
    assert error["hint"].startswith("upgrade codex: `npm install -g @openai/codex@latest`")
    assert fake_codex.turn_calls() == []
    monkeypatch.setenv("FAKE_CODEX_VERSION", "0.132.0")
    assert checks(sparring("doctor").out)["codex_version"]["ok"]


def test_the_efforts_the_installed_codex_accepts_are_checked(
        sparring: Any, repo: Path, fake_codex: Any, monkeypatch: Any) -> None:
    """doctor reads the catalog shipped with codex (`codex debug models --bundled`): the
    pinned codex accepts every effort sparring offers; one that lacks some is a warning
    naming them."""
    fake_codex.log_in()
    found = checks(sparring("doctor").out)["codex_efforts"]
    assert found["ok"], found
    assert found["detail"] == ("codex accepts low, medium, high, xhigh, max, ultra for the "
                               "models it knows; sparring offers low, medium, high, xhigh")
    monkeypatch.setenv("FAKE_CODEX_EFFORTS", "low,medium,high")
    out = sparring("doctor").out
    found = checks(out)["codex_efforts"]
    assert found["level"] == "warning" and found["hint"] in out["warnings"]
    assert found["hint"].startswith("a turn asked for xhigh fails or runs at another effort")


def test_missing_codex_is_not_ready_with_the_install_hint(sparring: Any, repo: Path,
                                                          monkeypatch: Any) -> None:
    monkeypatch.setenv("PATH", BARE_PATH)
    out = sparring("doctor").out
    assert out["ready"] is False
    assert "npm install -g @openai/codex" in out["hints"][0]


def test_a_codex_lacking_a_flag_we_pass_is_named(sparring: Any, repo: Path,
                                                 tmp_path: Path, monkeypatch: Any) -> None:
    old = tmp_path / "old-codex"
    old.write_text("#!/bin/sh\n"
                   'if [ "$1" = "--version" ]; then echo "codex-cli 0.40.0"; exit 0; fi\n'
                   "echo '  --json  Print events'\necho '  -c, --config <key=value>'\n"
                   "echo '  -s, --sandbox <MODE>'\n")
    old.chmod(old.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SPARRING_CODEX", str(old))
    out = sparring("doctor").out
    flags = checks(out)["codex_flags"]
    assert out["ready"] is False and not flags["ok"]
    assert "--output-schema" in flags["detail"] and "--skip-git-repo-check" in flags["detail"]
    assert "upgrade codex" in flags["hint"]


def test_a_codex_not_logged_in_is_not_ready_and_says_codex_login(
        sparring: Any, repo: Path, fake_codex: Any, installed: Path) -> None:
    out = sparring("doctor").out

    login = checks(out)["codex_login"]
    assert out["ready"] is False and login["ok"] is False
    assert login["detail"].startswith("Not logged in (`codex login status`")
    assert "run `codex login`" in login["hint"] and login["hint"] in out["hints"]

    fake_codex.log_in()
    login = checks(sparring("doctor").out)["codex_login"]
    assert login["ok"] and login["detail"].startswith("API key configured - sk-tests***56789")


def test_a_custom_model_provider_or_codex_api_key_needs_no_login(
        sparring: Any, repo: Path, fake_codex: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ["CODEX_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text('model = "gpt-5.5"\nmodel_provider = "azure"\n\n'
                                      '[model_providers.azure]\nname = "Azure"\n')
    login = checks(sparring("doctor").out)["codex_login"]
    assert login["ok"] and "model provider 'azure'" in login["detail"]

    (home / "config.toml").write_text('[profiles.x]\nmodel_provider = "azure"\n')
    assert checks(sparring("doctor").out)["codex_login"]["ok"] is False  # not the top level

    monkeypatch.setenv("CODEX_API_KEY", "sk-from-the-environment")
    login = checks(sparring("doctor").out)["codex_login"]
    assert login["ok"] and "CODEX_API_KEY" in login["detail"]


def test_invalid_config_is_reported(sparring: Any, repo: Path, fake_codex: Any) -> None:
    (repo / "sparring.yaml").write_text("efort: high\n")
    out = sparring("doctor").out
    assert out["ready"] is False
    assert "unknown setting 'efort'" in checks(out)["config"]["detail"]


def test_doctor_says_which_sandbox_codex_would_run_in(sparring: Any, repo: Path, fake_codex: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox a start would use, and a sparring.yaml asking for more than the user
    allows (every start would fail): not ready, with where the user may allow it."""
    assert "Codex's sandbox: read-only (from the default" in checks(
        sparring("doctor").out)["config"]["detail"]
    (repo / "sparring.yaml").write_text("sandbox: workspace-write\n")
    out = sparring("doctor").out
    assert out["ready"] is False and "asks for Codex's sandbox workspace-write" in checks(
        out)["config"]["detail"]
    assert "SPARRING_SANDBOX" in checks(out)["config"]["hint"]
    monkeypatch.setenv("SPARRING_SANDBOX", "danger-full-access")
    found = checks(sparring("doctor").out)["config"]
    assert found["ok"] and "Codex's sandbox: workspace-write (from the project's sparring.yaml; " \
        "the user allows at most danger-full-access, by SPARRING_SANDBOX in the user's " \
        "environment)" in found["detail"]


# -- the installation: where the skills are, and the runtime ------------------------------


def test_reports_where_the_skills_are_installed_and_the_runtime(sparring: Any, repo: Path,
                                                                 fake_codex: Any,
                                                                 installed: Path) -> None:
    found = checks(sparring("doctor").out)

    skills, runtime = found["skills"], found["runtime"]
    assert skills["ok"] and runtime["ok"]
    listed = ", ".join(f"{name} {__version__}" for name in SKILLS)
    assert f"project {repo}/.claude/skills: {listed}" in skills["detail"]
    assert "/.claude/skills: none" in skills["detail"]  # the user folder
    venv_python = runtime_of(installed).python
    assert f"private runtime {venv_python}: sparring {__version__}" in runtime["detail"]
    assert f"built from {ROOT}" in runtime["detail"]


def test_skills_in_the_user_folder_count(sparring: Any, repo: Path, fake_codex: Any,
                                         tmp_path_factory: pytest.TempPathFactory,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    data = shared_runtime(tmp_path_factory)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    assert run_install("--user", env=install_env(data)).returncode == 0

    found = checks(sparring("doctor").out)["skills"]

    assert found["ok"]
    assert f"user {Path.home()}/.claude/skills: {SKILLS[0]} {__version__}" in found["detail"]
    assert f"project {repo}/.claude/skills: none" in found["detail"]


def test_skills_installed_nowhere_is_a_problem_with_the_install_command(
        sparring: Any, repo: Path, fake_codex: Any) -> None:
    out = sparring("doctor").out

    found = checks(out)["skills"]
    assert out["ready"] is False and found["ok"] is False
    assert checks(out)["duplicates"]["detail"] == \
        "no skills installed for the user or in this project"
    assert checks(out)["updates"]["detail"] == "nothing installed from a clone to compare with it"
    assert f"install.py --project {repo}`" in found["hint"]
    assert found["hint"] in out["hints"]


def test_the_clone_the_launcher_runs_from_counts_and_names_its_installer(
        sparring: Any, repo: Path, fake_codex: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # As when a plugin's (or a clone's) skill calls its own launcher.
    monkeypatch.setenv("SPARRING_LAUNCHER", str(ROOT / "skills" / SKILLS[0] / "sparring"))
    monkeypatch.setenv("PATH", BARE_PATH)  # no runtime anywhere

    found = checks(sparring("doctor").out)

    assert found["skills"]["ok"]
    assert f"in use from {ROOT / 'skills'}" in found["skills"]["detail"]
    assert found["runtime"]["hint"] == \
        f"create it: run `python3 {ROOT / 'install.py'} --runtime-only`"


def test_skills_of_another_version_are_a_problem(sparring: Any, repo: Path, fake_codex: Any,
                                                 installed: Path) -> None:
    write_marker(Path.home() / ".claude" / "skills" / "think-about", "0.0.1")

    found = checks(sparring("doctor").out)["skills"]

    assert found["ok"] is False
    assert "user" in found["detail"] and "think-about 0.0.1" in found["detail"]
    assert "version 0.0.1" in found["hint"] and "reinstall" in found["hint"]
    assert f"python3 {ROOT / 'install.py'} --project {repo}" in found["hint"]


def test_no_runtime_is_a_problem_with_the_command_that_makes_one(
        sparring: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", BARE_PATH)

    found = checks(sparring("doctor").out)["runtime"]

    assert found["ok"] is False
    assert "sparring/venv does not exist" in found["detail"]
    assert found["hint"].startswith("create it: ")
    assert "install.py --runtime-only`" in found["hint"]


def test_a_runtime_of_another_version_is_a_problem(sparring: Any, repo: Path, fake_codex: Any,
                                                   tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    old = tmp_path / "old-python"
    old.write_text("#!/bin/sh\necho 0.0.9\n")
    old.chmod(old.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SPARRING_PYTHON", str(old))

    found = checks(sparring("doctor").out)["runtime"]

    assert found["ok"] is False
    assert f"SPARRING_PYTHON {old} has sparring 0.0.9, this is {__version__}" == found["detail"]
    assert found["hint"].startswith("update it: ")


def test_a_broken_runtime_is_a_problem(sparring: Any, repo: Path, fake_codex: Any,
                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python = runtime_of(tmp_path / "data").python
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\nexit 1\n")
    python.chmod(0o755)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))

    found = checks(sparring("doctor").out)["runtime"]

    assert found["ok"] is False and "cannot import sparring" in found["detail"]
    assert found["hint"].startswith("repair it: ")


def fake_claude(tmp_path: Path, version: str) -> Path:
    path = tmp_path / "claude-bin" / "claude"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332", "2.2.0"])
def test_a_claude_code_the_skills_are_proven_in_is_fine(
        sparring: Any, repo: Path, tmp_path: Path, monkeypatch: Any, version: str) -> None:
    monkeypatch.setenv("CLAUDE_CODE_EXECPATH", str(fake_claude(tmp_path, version)))
    found = checks(sparring("doctor").out)["claude_code"]
    assert found["ok"], found
    assert f": {version};" in found["detail"] and "running this command" in found["detail"]


def test_an_older_claude_code_than_proven_is_named_with_the_upgrade(
        sparring: Any, repo: Path, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("PATH", f"{fake_claude(tmp_path, '2.1.150').parent}:{BARE_PATH}")
    out = sparring("doctor").out
    found = checks(out)["claude_code"]
    assert not found["ok"] and found["level"] == "warning"
    assert "older than 2.1.197" in found["hint"]
    assert "npm install -g @anthropic-ai/claude-code" in found["hint"]
    assert found["hint"] in out["warnings"] and found["hint"] not in out["hints"]


def test_doctor_prints_the_inbox_ready_for_claude_to_write(sparring: Any, repo: Path) -> None:
    """The skills ask for the inbox (`--inbox`): it is made, self-ignoring."""
    out = sparring("doctor", "--json", "--inbox").out
    assert out["inbox"] == str(repo / ".sparring" / "inbox")
    assert (repo / ".sparring" / "inbox").is_dir()
    assert (repo / ".sparring" / ".gitignore").is_file()


def test_a_doctor_nobody_asked_for_an_inbox_creates_nothing(sparring: Any, repo: Path) -> None:
    """A person's doctor, or install.py's (in the clone, for a --user install), leaves the
    folder it runs in as it was."""
    out = sparring("doctor").out
    assert out["inbox"] == str(repo / ".sparring" / "inbox")
    assert not (repo / ".sparring").exists()


# -- permissions: the skills allowed in every turn, not only the first ----------------------


def test_the_rules_install_wrote_make_the_permissions_check_pass(
        sparring: Any, repo: Path, fake_codex: Any, installed: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    launcher = repo / ".claude" / "skills" / SKILLS[0] / "sparring"
    monkeypatch.setenv("SPARRING_LAUNCHER", str(launcher))

    found = checks(sparring("doctor").out)["permissions"]

    assert found["ok"], found
    settings = repo / ".claude" / "settings.local.json"
    allow = json.loads(settings.read_text())["permissions"]["allow"]
    settings.write_text(json.dumps({"permissions": {"allow": allow}}))  # no ask rule
    assert checks(sparring("doctor").out)["permissions"]["ok"] is False
    settings.write_text('{"permissions": {"allow": []}}\n')
    fake_codex.log_in()
    out = sparring("doctor").out
    found = checks(out)["permissions"]
    assert found["ok"] is False and found["level"] == "warning"
    assert out["ready"] is True, "a debate runs: Claude Code asks instead"
    assert out["verdict"].startswith("ready, with") and found["hint"] in out["warnings"]
    assert "after a skill's first turn" in found["detail"]
    assert f"python3 {ROOT / 'install.py'} --project {repo}" in found["hint"]


def test_rules_in_the_users_settings_count_for_a_project_install(
        sparring: Any, repo: Path, fake_codex: Any, installed: Path) -> None:
    local = repo / ".claude" / "settings.local.json"
    rules = json.loads(local.read_text())["permissions"]
    local.unlink()
    user = Path.home() / ".claude" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"permissions": rules}))

    assert checks(sparring("doctor").out)["permissions"]["ok"]


def test_the_plugins_hook_stands_for_the_rules(
        sparring: Any, repo: Path, fake_codex: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin's own skills are approved by its PreToolUse hook, not by settings."""
    monkeypatch.setenv("SPARRING_LAUNCHER", str(ROOT / "skills" / SKILLS[0] / "sparring"))

    found = checks(sparring("doctor").out)["permissions"]

    assert found["ok"], found
    assert f"the plugin's PreToolUse hook ({ROOT / 'hooks' / 'hooks.json'})" in found["detail"]


def test_skills_of_a_clone_without_the_hook_get_the_rules_to_add_by_hand(
        sparring: Any, repo: Path, fake_codex: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "skills", clone / "skills", symlinks=True)
    shutil.copytree(ROOT / "scripts", clone / "scripts", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (clone / "install.py").write_text("")
    monkeypatch.setenv("SPARRING_LAUNCHER", str(clone / "skills" / SKILLS[0] / "sparring"))

    found = checks(sparring("doctor").out)["permissions"]

    assert found["ok"] is False and found["level"] == "warning"
    assert "~/.claude/settings.json" in found["hint"]
    launcher = f"{clone / 'skills' / SKILLS[0]}/sparring"
    assert f"permissions.allow Bash({launcher} doctor *)" in found["hint"]
    assert f"Bash({launcher} render" not in found["hint"]  # no verb the skill does not run
    assert f"Bash({launcher} *)" not in found["hint"]
    assert f"permissions.ask Bash({launcher} *--sandbox*)" in found["hint"]
    assert "Edit(.sparring/inbox/**)" in found["hint"]


# -- for a person, and for Claude ----------------------------------------------------------


def run_doctor_on_a_terminal(cwd: Path, *args: str) -> str:
    return on_a_terminal(cwd, "doctor", *args)[1]


def test_a_person_at_a_terminal_reads_text_and_a_program_gets_json(
        sparring: Any, repo: Path, fake_codex: Any, installed: Path) -> None:
    fake_codex.log_in()
    text = run_doctor_on_a_terminal(repo)

    assert text.startswith(f"sparring {__version__} doctor: ready"), text
    assert not text.lstrip().startswith("{")
    for name in ("python", "codex_login", "skills", "permissions", "runtime", "claude_code"):
        assert re.search(rf"^  (ok|warning|PROBLEM) +{name} ", text, re.M), (name, text)
    assert "{" not in text.splitlines()[0]
    as_json = json.loads(run_doctor_on_a_terminal(repo, "--json"))
    assert as_json["verb"] == "doctor" and as_json["ready"] is True
    piped = sparring("doctor")  # stdout is not a terminal: JSON, as Claude reads it
    assert piped.out["checks"] and piped.raw.startswith("{")
    forced = sparring("doctor", "--text")
    assert forced.out == {} and forced.raw.startswith(f"sparring {__version__} doctor: ")


def test_the_text_names_each_problem_with_its_hint_and_says_what_next(
        sparring: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", BARE_PATH)  # no codex, no claude, no runtime
    text = sparring("doctor", "--text").raw

    assert re.search(r"^sparring \S+ doctor: not ready: \d problem\(s\)", text)
    assert re.search(r"^  PROBLEM  codex +codex was not found on PATH$", text, re.M), text
    assert re.search(r"^ {25}-> install Codex: `npm install -g @openai/codex`", text, re.M)
    assert re.search(r"^  warning  claude_code +Claude Code is not running this command", text,
                     re.M), text
    assert text.rstrip().splitlines()[-2].startswith("Next: install Codex: `npm install -g")


def test_doctor_exits_non_zero_when_not_ready_so_a_script_can_test_it(
        sparring: Any, repo: Path, fake_codex: Any, installed: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake_codex.log_in()
    assert sparring("doctor").exit_code == 0
    assert sparring("doctor", "--text").exit_code == 0
    monkeypatch.setenv("PATH", BARE_PATH)  # no codex: not ready
    for form in ("--json", "--text"):
        run = sparring("doctor", form)
        assert run.exit_code == 1, (form, run.raw)
    skills = sparring("doctor", "--json", "--inbox")  # what the skills read is all there
    assert skills.exit_code == 1 and skills.out["ok"] is True
    assert skills.out["ready"] is False and skills.out["hints"], skills.out


def test_the_text_wraps_at_spaces_and_never_inside_a_path_or_a_command(
        sparring: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / ("a-folder-name-long-enough-to-pass-the-line-" * 2) / "repo"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    monkeypatch.setenv("PATH", BARE_PATH)  # no codex, no runtime: hints with paths
    monkeypatch.setattr("shutil.get_terminal_size", lambda: os.terminal_size((60, 24)))
    text = sparring("doctor", "--text").raw

    words = set(text.split())
    assert any(str(deep) in word for word in words), text  # the path whole, on one line
    assert "`npm install -g @openai/codex`" in text  # a command whole, on one line
    for line in text.splitlines():  # past the width only what cannot be cut: one word
        body = line[25:] if line.startswith("  ") else line  # after the check's columns
        alone = re.sub(r"`[^`]*`", "code", body.strip().removeprefix("-> "))
        assert len(line) <= 60 or " " not in alone.strip(), line


# -- blocking and advisory ---------------------------------------------------------------------


def test_codex_missing_blocks_and_says_install_then_log_in(sparring: Any, repo: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", BARE_PATH)
    out = sparring("doctor").out
    found = checks(out)["codex"]
    assert out["ready"] is False and found["level"] == "problem"
    assert found["hint"] == ("install Codex: `npm install -g @openai/codex` (or set "
                             "SPARRING_CODEX to it), then log it in: `codex login`")
    assert out["hints"][0] == found["hint"]


def test_claude_code_absent_says_so_and_does_not_block(sparring: Any, repo: Path,
                                                      fake_codex: Any, installed: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fake_codex.log_in()
    codex_bin = Path(str(shutil.which("codex"))).parent  # the fake's, first on PATH
    monkeypatch.setenv("PATH", f"{codex_bin}:{BARE_PATH}")  # whatever the machine installed
    out = sparring("doctor").out
    found = checks(out)["claude_code"]
    assert found["ok"] is False and found["level"] == "warning"
    assert "`claude` is not on PATH" in found["detail"]
    assert "npm install -g @anthropic-ai/claude-code" in found["hint"]
    assert out["ready"] is True and found["hint"] in out["warnings"]


def test_every_failing_check_is_a_problem_or_a_warning_never_both(
        sparring: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sparring.commands.doctor import ADVISORY

    monkeypatch.setenv("PATH", BARE_PATH)
    out = sparring("doctor").out
    for found in out["checks"]:
        wanted = "ok" if found["ok"] else \
            "warning" if found["name"] in ADVISORY else "problem"
        assert found["level"] == wanted, found
    assert out["hints"] == [c["hint"] for c in out["checks"] if c["level"] == "problem"]
    assert out["warnings"] == [c["hint"] for c in out["checks"] if c["level"] == "warning"]
    assert out["ready"] is not any(c["level"] == "problem" for c in out["checks"])


# -- installed twice, and older than the clone ---------------------------------------------------


def test_skills_installed_for_the_user_and_the_project_are_a_warning(
        sparring: Any, repo: Path, fake_codex: Any, installed: Path, tmp_path: Path) -> None:
    once = checks(sparring("doctor").out)["duplicates"]
    assert once["ok"] and once["detail"] == f"installed once, in {repo}/.claude/skills"
    done = run_install("--user", env=install_env(installed), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr

    found = checks(sparring("doctor").out)["duplicates"]

    assert found["ok"] is False and found["level"] == "warning"
    assert f"installed twice: for your user ({Path.home()}/.claude/skills) and in this " \
        f"project ({repo}/.claude/skills)" in found["detail"]
    assert "Claude Code runs the user's copy" in found["detail"]
    assert f"python3 {ROOT / 'install.py'} --user --uninstall" in found["hint"]
    assert f"python3 {ROOT / 'install.py'} --project {repo} --uninstall" in found["hint"]


def test_skills_older_than_their_clone_are_a_warning_until_installed_again(
        sparring: Any, repo: Path, fake_codex: Any, tmp_path: Path,
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    data = shared_runtime(tmp_path_factory)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    clone = tmp_path / "clone"
    for name in ("skills", "references", "scripts", "templates"):
        shutil.copytree(ROOT / name, clone / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("install.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, clone / name)
    installer = clone / "install.py"
    assert run_install("--project", repo, env=install_env(data),
                       installer=installer).returncode == 0
    assert checks(sparring("doctor").out)["updates"]["ok"]
    skill_md = clone / "skills" / SKILLS[0] / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nA new paragraph.\n")

    found = checks(sparring("doctor").out)["updates"]

    assert found["ok"] is False and found["level"] == "warning"
    assert f"{SKILLS[0]} older than the clone {clone}" in found["detail"]
    assert f"`python3 {clone}/install.py --project {repo}`" in found["hint"]
    assert run_install("--project", repo, env=install_env(data),
                       installer=installer).returncode == 0
    assert checks(sparring("doctor").out)["updates"]["ok"]


def test_the_skills_doctor_prints_what_they_act_on_and_full_prints_every_check(
        sparring: Any, repo: Path) -> None:
    """Before a debate Claude acts on `ready`, the hints and the inbox: the checks stay out
    of its context unless asked for with --full."""
    brief = sparring("doctor", "--json", "--inbox").out
    full = sparring("doctor", "--json", "--inbox", "--full").out

    assert "checks" not in brief and {"ready", "hints", "warnings", "inbox"} <= set(brief)
    assert brief["ready"] == full["ready"] and brief["hints"] == full["hints"]
    assert {c["name"] for c in full["checks"]} >= {"python", "codex", "project"}
    assert "checks" in sparring("doctor", "--json").out  # a person's doctor: every check


# -- the Claude Code plugin -------------------------------------------------------------------


def as_the_plugin(monkeypatch: pytest.MonkeyPatch, data: Path) -> None:
    """A runner call of the plugin's own skill in Claude Code: its launcher, and the data
    folder its SessionStart hook named."""
    monkeypatch.setenv("SPARRING_LAUNCHER", str(ROOT / "skills" / SKILLS[0] / "sparring"))
    monkeypatch.setenv("SPARRING_PLUGIN_DATA", str(data))


def test_a_plugin_user_is_told_the_skills_come_from_the_plugin_and_nothing_to_install(
        sparring: Any, repo: Path, fake_codex: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    as_the_plugin(monkeypatch, tmp_path / "plugin-data")
    monkeypatch.setenv("PATH", BARE_PATH)  # no runtime anywhere yet

    out = sparring("doctor", "--full").out
    found = checks(out)

    assert found["skills"]["ok"] and found["duplicates"]["ok"], found["skills"]
    assert f"in use from the plugin, {ROOT}" in found["skills"]["detail"]
    assert "the skills come from the plugin, nothing to install" in found["skills"]["detail"]
    assert "--project" not in json.dumps(out), "no advice to install the skills a second time"
    assert found["runtime"]["hint"] == (
        f"create it: the plugin's next runner call makes its runtime anew in "
        f"{tmp_path / 'plugin-data'} (remove {tmp_path / 'plugin-data' / 'runtime.ready'} "
        "first if it is there); no install.py step")


def test_the_plugin_beside_installed_copies_is_a_duplicate_to_keep_one_of(
        sparring: Any, repo: Path, fake_codex: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    write_marker(repo / ".claude" / "skills" / "think-about", __version__)
    as_the_plugin(monkeypatch, tmp_path / "plugin-data")

    found = checks(sparring("doctor").out)["duplicates"]

    assert found["ok"] is False and found["level"] == "warning"
    assert f"the plugin ({ROOT}) brings the skills, and think-about are installed as well" \
        in found["detail"]
    assert f"install.py --project {repo} --uninstall" in found["hint"]
    assert "/plugin uninstall sparring@sparring" in found["hint"]


def test_a_plugin_claude_code_installed_counts_where_no_skill_launcher_runs(
        sparring: Any, repo: Path, fake_codex: Any) -> None:
    """`sparring doctor` typed at a terminal: the plugin is Claude Code's record of it."""
    record = Path.home() / ".claude" / "plugins" / "installed_plugins.json"
    record.parent.mkdir(parents=True)
    cache = Path.home() / ".claude" / "plugins" / "cache" / "sparring" / "sparring" / "0.1.0"
    record.write_text(json.dumps({"version": 2, "plugins": {"sparring@sparring": [
        {"scope": "user", "installPath": str(cache), "version": "0.1.0"}]}}))

    found = checks(sparring("doctor").out)["skills"]

    assert found["ok"], found
    assert f"the Claude Code plugin: sparring@sparring ({cache})" in found["detail"]
