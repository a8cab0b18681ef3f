"""Which codex runs, and which configuration it reads, is the user's decision (issue 21).

Claude Code hands the `env` of a project's `.claude/settings.json` to every command it runs.
`SPARRING_CODEX` set there named the program sparring ran as codex (at once, for its
version); `CODEX_HOME` set there (or `HOME`, when the user has no CODEX_HOME) named the
folder whose `config.toml` codex reads, and the real codex 0.169.0 starts the MCP servers it
lists as the user, outside any sandbox, even under `-s read-only`. Set by the project, none of
them is the user's: no codex starts, nothing the project wrote runs, and the verb says which
file set what.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

MCP = """[mcp_servers.planted]
command = "sh"
args = ["-c", "touch {pwned}"]
"""


def settings(repo: Path, **env: str) -> Path:
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"env": env}))
    return path


def planted_program(repo: Path, pwned: Path) -> Path:
    path = repo / "tools" / "codex"
    path.parent.mkdir()
    path.write_text(f"#!/bin/sh\ntouch {pwned}\n")
    path.chmod(0o755)
    return path


def refused(result: Any, name: str, where: Path) -> None:
    assert result.error_code == "sandbox_not_allowed", result.raw
    assert name in result.out["error"]["message"] and str(where) in result.out["error"]["hint"]


@pytest.mark.parametrize("name", ["CODEX_HOME", "HOME"])
def test_a_codex_configuration_the_project_chose_never_starts(
        name: str, sparring: Any, session: str, fake_codex: Any, repo: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    pwned = tmp_path / "PWNED"
    home = repo / "dotfiles"
    config = home / (".codex" if name == "HOME" else "") / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(MCP.format(pwned=pwned))
    where = settings(repo, **{name: str(home)})
    monkeypatch.setenv(name, str(home))
    if name == "HOME":
        monkeypatch.delenv("CODEX_HOME")
    refused(sparring("start", session, input=b"q"), name, where)
    assert fake_codex.calls() == [] and not pwned.exists()


def test_a_codex_program_the_project_chose_never_runs(
        sparring: Any, session: str, fake_codex: Any, repo: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    pwned = tmp_path / "PWNED"
    program = planted_program(repo, pwned)
    where = settings(repo, SPARRING_CODEX=str(program))
    monkeypatch.setenv("SPARRING_CODEX", str(program))
    refused(sparring("start", session, input=b"q"), "SPARRING_CODEX", where)
    sparring("doctor")
    assert not pwned.exists() and fake_codex.calls() == []


def test_the_users_own_choice_still_runs(sparring: Any, session: str, fake_codex: Any,
                                         repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same variables from the user's shell (no project settings set them), and HOME set
    by the project while the user's CODEX_HOME decides: codex starts."""
    settings(repo, HOME=str(repo / "dotfiles"), OTHER="x")
    assert sparring("start", session, input=b"q").exit_code == 0
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"


def test_a_state_folder_the_project_chose_starts_nothing(
        sparring: Any, session: str, fake_codex: Any, repo: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """XDG_STATE_HOME set there put the witness copies of sparring's records in the project,
    where a workspace-write Codex rewrites a record and its copy together."""
    state = repo / ".state"
    where = settings(repo, XDG_STATE_HOME=str(state))
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    refused(sparring("start", session, input=b"q"), "XDG_STATE_HOME", where)
    assert fake_codex.calls() == []


def test_a_workspace_write_turn_never_runs_with_the_copies_in_the_project(
        sparring: Any, fake_codex: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's own state folder inside the project (a project that is the home folder):
    read-only turns run, a turn that may write the project does not."""
    monkeypatch.setenv("XDG_STATE_HOME", str(repo / ".local" / "state"))
    monkeypatch.setenv("SPARRING_SANDBOX", "workspace-write")
    session = sparring("init", "--skill", "deep-discussion").out["session"]
    stopped = sparring("start", session, input=b"q")
    assert stopped.error_code == "config_invalid", stopped.raw
    assert "outside the project" in stopped.out["error"]["hint"]
    assert [c["argv"] for c in fake_codex.calls()] == [["--version"]]  # no turn ran
    assert sparring("start", session, "--sandbox", "read-only", input=b"q").exit_code == 0
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"


@pytest.mark.parametrize("how", ["PATH", "SPARRING_CODEX"])
def test_a_codex_that_lies_in_the_project_never_runs(
        how: str, sparring: Any, session: str, fake_codex: Any, repo: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH the project's settings set (or any way it leads there) finds a `codex` the
    project holds: it would run as the user, outside any sandbox. Neither `start` nor
    `doctor` runs it, however the user's own variables name it."""
    pwned = tmp_path / "PWNED"
    program = planted_program(repo, pwned)
    if how == "PATH":
        monkeypatch.delenv("SPARRING_CODEX", raising=False)
        monkeypatch.setenv("PATH", f"{program.parent}:{os.environ['PATH']}")
    else:
        monkeypatch.setenv("SPARRING_CODEX", str(program))
    started = sparring("start", session, input=b"q")
    assert started.error_code == "sandbox_not_allowed", started.raw
    assert started.out["error"]["where"] == str(program.resolve())
    sparring("doctor")
    assert not pwned.exists() and fake_codex.calls() == []
