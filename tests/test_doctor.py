"""`sparring doctor`: a verdict, and a hint for every problem."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from sparring import __version__
from support.installing import (
    MARKER,
    ROOT,
    SKILLS,
    install_env,
    run_install,
    runtime_of,
    shared_runtime,
)


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
    assert "0.169.0" in found["codex_version"]["detail"]
    assert found["codex_flags"]["ok"] and found["project"]["ok"]


def test_missing_codex_is_not_ready_with_the_install_hint(sparring: Any, repo: Path,
                                                          monkeypatch: Any) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
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
    assert f"install.py --project {repo}`" in found["hint"]
    assert found["hint"] in out["hints"]


def test_the_clone_the_launcher_runs_from_counts_and_names_its_installer(
        sparring: Any, repo: Path, fake_codex: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # As when a plugin's (or a clone's) skill calls its own launcher.
    monkeypatch.setenv("SPARRING_LAUNCHER", str(ROOT / "skills" / SKILLS[0] / "sparring"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no runtime anywhere

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
    monkeypatch.setenv("PATH", "/usr/bin:/bin")

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
    monkeypatch.setenv("PATH", f"{fake_claude(tmp_path, '2.1.150').parent}:/usr/bin:/bin")
    out = sparring("doctor").out
    found = checks(out)["claude_code"]
    assert not found["ok"] and out["ready"] is False
    assert "older than 2.1.197" in found["hint"]
    assert "npm install -g @anthropic-ai/claude-code" in found["hint"]
    assert found["hint"] in out["hints"]


def test_doctor_prints_the_inbox_ready_for_claude_to_write(sparring: Any, repo: Path) -> None:
    out = sparring("doctor").out
    assert out["inbox"] == str(repo / ".sparring" / "inbox")
    assert (repo / ".sparring" / ".gitignore").is_file()


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
    out = sparring("doctor").out
    found = checks(out)["permissions"]
    assert out["ready"] is False and found["ok"] is False
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


def test_plugin_skills_get_the_rules_to_add_by_hand(
        sparring: Any, repo: Path, fake_codex: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_LAUNCHER", str(ROOT / "skills" / SKILLS[0] / "sparring"))

    found = checks(sparring("doctor").out)["permissions"]

    assert found["ok"] is False
    assert "~/.claude/settings.json" in found["hint"]
    launcher = f"{ROOT / 'skills' / SKILLS[0]}/sparring"
    assert f"permissions.allow Bash({launcher} doctor *)" in found["hint"]
    assert f"Bash({launcher} render" not in found["hint"]  # no verb the skill does not run
    assert f"Bash({launcher} *)" not in found["hint"]
    assert f"permissions.ask Bash({launcher} *--sandbox*)" in found["hint"]
    assert "Edit(.sparring/inbox/**)" in found["hint"]
