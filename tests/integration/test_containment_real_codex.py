"""What a debate turn runs the real Codex CLI (pinned npm package) without, against the
Responses mock: its command line turns sub-agents, memories and hooks off and the real codex
takes it; a hook the project declares (`.codex/hooks.json`, the project trusted and the hook
reviewed, as Codex asks) runs with plain `codex exec` and not in a debate turn, not even
when the user keeps their own hooks on (sparring/config.py, the switches; the unit cases are
in tests/test_containment.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sparring.store.sessions import resolve
from support.responses_mock import ResponsesMock, text

pytestmark = pytest.mark.integration

FEATURES = ("multi_agent", "multi_agent_v2", "memories", "hooks")
# What codex would look up on the network at startup (plugins, their marketplaces, update
# checks): off, so that nothing leaves the loopback.
OFFLINE_TOP = "check_for_update_on_startup = false\n"
OFFLINE_TABLES = """
[features]
plugins = false
remote_plugin = false
apps = false
api_key_model_discovery = false
cli_daybreak = false
daemon_auto_start = false

[analytics]
enabled = false
"""


def offline(codex_home: Path, repo: Path) -> None:
    """Codex's config kept on the loopback, and the project trusted (as a user who works in
    it would have it): its `.codex/` layer, hooks included, loads."""
    config = codex_home / "config.toml"
    config.write_text(OFFLINE_TOP + config.read_text() + OFFLINE_TABLES
                      + f'\n[projects.{json.dumps(str(repo.resolve()))}]\n'
                      'trust_level = "trusted"\n')


def declare_hook(repo: Path, marker: Path, folder: Path | None = None) -> None:
    """A hook as codex 0.171.0 reads one: `hooks.json` in the project's `.codex/` (or in
    `folder`, the user's CODEX_HOME), run when a session starts and when a prompt is
    submitted, writing `marker`."""
    command = {"type": "command", "command": f"touch {marker}"}
    hooks = {event: [{"hooks": [command]}] for event in ("SessionStart", "UserPromptSubmit")}
    folder = folder or repo / ".codex"
    folder.mkdir(exist_ok=True)
    (folder / "hooks.json").write_text(json.dumps({"hooks": hooks}))


def trust_hooks(codex_bin: Path, env: dict[str, str], repo: Path, codex_home: Path) -> int:
    """Trust every hook codex lists for `repo`, as a user reviewing them with `/hooks` does:
    the hash codex reports (`hooks/list` of its app server) written as `trusted_hash`."""
    server = subprocess.Popen([str(codex_bin), "app-server"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                              cwd=repo)
    assert server.stdin is not None and server.stdout is not None
    requests = [{"id": 1, "method": "initialize",
                 "params": {"clientInfo": {"name": "sparring-tests", "version": "0"}}},
                {"method": "initialized"},
                {"id": 2, "method": "hooks/list", "params": {"cwds": [str(repo)]}}]
    for request in requests:
        server.stdin.write((json.dumps(request) + "\n").encode())
    server.stdin.flush()
    listed: Any = None
    while listed is None:
        line = server.stdout.readline()
        assert line, "codex app-server ended without listing the hooks"
        message = json.loads(line)
        listed = message["result"] if message.get("id") == 2 else None
    server.stdin.close()
    server.wait(timeout=30)
    hooks = [h for entry in listed["data"] for h in entry["hooks"]]
    with (codex_home / "config.toml").open("a") as config:
        for hook in hooks:
            config.write(f"\n[hooks.state.{json.dumps(hook['key'])}]\n"
                         f"trusted_hash = {json.dumps(hook['currentHash'])}\n")
    return len(hooks)


def plain_exec(codex_bin: Path, env: dict[str, str], repo: Path) -> None:
    """`codex exec` as a user runs it outside sparring."""
    done = subprocess.run([str(codex_bin), "exec", "--json", "--skip-git-repo-check", "-s",
                           "read-only", "-C", str(repo), "-"], input=b"Redis or SQLite?",
                          capture_output=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def debate_turn(sparring: Any) -> dict[str, Any]:
    sid = sparring("init", "--skill", "deep-discussion").out["session"]
    started = sparring("start", sid, input=b"Redis or SQLite?")
    assert started.exit_code == 0, started.raw
    ended: dict[str, Any] = sparring("wait", sid, "--timeout", "60", "--full").out
    return ended


def test_a_debate_turns_command_line_turns_sub_agents_memories_and_hooks_off(
        real_codex: Path, codex_home: Path, codex_env: dict[str, str],
        responses_mock: ResponsesMock, sparring: Any, repo: Path) -> None:
    offline(codex_home, repo)
    responses_mock.script(text("outside sparring"), text("Round one."), text("Round two."))
    plain_exec(real_codex, codex_env, repo)
    (outside,) = responses_mock.responses_requests()
    assert "spawn_agent" in json.dumps(outside.body), "codex offers sub-agents by default"

    sid = sparring("init", "--skill", "deep-discussion").out["session"]
    assert sparring("start", sid, input=b"Redis or SQLite?").exit_code == 0
    first = sparring("wait", sid, "--timeout", "60").out
    assert sparring("resume", sid, input=b"And the cache?").exit_code == 0
    second = sparring("wait", sid, "--timeout", "60").out

    assert first["status"] == "completed" and second["status"] == "completed", second
    assert second["review"]["text"] == "Round two."
    for turn in resolve(sid, repo).load()["turns"]:
        argv = turn["argv"]
        off = {argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "--disable"}
        assert off == set(FEATURES), argv
    # codex took them: neither round offered the model a sub-agent
    for request in responses_mock.responses_requests()[1:]:
        assert "spawn_agent" not in json.dumps(request.body)
        assert "multi_agent_v1" not in {tool.get("name") for tool in request.body["tools"]}


def test_a_project_hook_runs_with_plain_codex_exec_and_not_in_a_debate_turn(
        real_codex: Path, codex_home: Path, codex_env: dict[str, str],
        responses_mock: ResponsesMock, sparring: Any, repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    offline(codex_home, repo)
    declare_hook(repo, marker)
    assert trust_hooks(real_codex, codex_env, repo, codex_home) == 2
    responses_mock.script(text("outside sparring"), text("Round one."))

    plain_exec(real_codex, codex_env, repo)
    assert marker.exists(), "the project's hook runs when codex runs outside sparring"
    marker.unlink()

    ended = debate_turn(sparring)

    assert ended["status"] == "completed", ended
    assert ended["review"]["text"] == "Round one."
    assert not marker.exists(), "the project's hook ran during a debate turn"


def test_with_hooks_kept_on_the_users_hook_runs_and_the_projects_never(
        real_codex: Path, codex_home: Path, codex_env: dict[str, str],
        responses_mock: ResponsesMock, sparring: Any, repo: Path, tmp_path: Path) -> None:
    """`codex_hooks: true` in the user's config file: their own hook (`$CODEX_HOME/hooks.json`)
    runs in a debate turn; the project's, trusted and reviewed as well, does not."""
    ours, theirs = tmp_path / "user-hook-ran", tmp_path / "project-hook-ran"
    offline(codex_home, repo)
    declare_hook(repo, theirs)
    declare_hook(codex_home, ours, folder=codex_home)
    assert trust_hooks(real_codex, codex_env, repo, codex_home) == 4
    kept = Path.home() / ".config" / "sparring" / "config.yaml"
    kept.parent.mkdir(parents=True)
    kept.write_text("codex_hooks: true\n")
    kept.chmod(0o600)
    responses_mock.script(text("outside sparring"), text("Round one."), text("Round two."))
    plain_exec(real_codex, codex_env, repo)
    assert ours.exists() and theirs.exists(), "both hooks run outside sparring"
    ours.unlink()
    theirs.unlink()

    sid = sparring("init", "--skill", "deep-discussion").out["session"]
    assert sparring("start", sid, input=b"Redis or SQLite?").exit_code == 0
    assert sparring("wait", sid, "--timeout", "60").out["status"] == "completed"
    assert ours.exists() and not theirs.exists()
    ours.unlink()
    assert sparring("resume", sid, input=b"And the cache?").exit_code == 0
    ended = sparring("wait", sid, "--timeout", "60").out

    assert ended["status"] == "completed" and ended["review"]["text"] == "Round two.", ended
    assert ours.exists() and not theirs.exists(), "resumed, the same"


def test_with_hooks_kept_on_a_codex_folder_between_root_and_cwd_never_runs(
        real_codex: Path, codex_home: Path, codex_env: dict[str, str],
        responses_mock: ResponsesMock, sparring: Any, repo: Path, tmp_path: Path) -> None:
    """Codex reads a `.codex/` layer in every folder from the project's root down to the
    working folder: one in a folder between them, trusted and reviewed, runs with plain
    `codex exec` there and not in a debate turn started in the deeper folder."""
    between, cwd = repo / "services", repo / "services" / "api"
    cwd.mkdir(parents=True)
    marker = tmp_path / "between-hook-ran"
    offline(codex_home, repo)
    declare_hook(between, marker)
    assert trust_hooks(real_codex, codex_env, cwd, codex_home) == 2
    kept = Path.home() / ".config" / "sparring" / "config.yaml"
    kept.parent.mkdir(parents=True)
    kept.write_text("codex_hooks: true\n")
    kept.chmod(0o600)
    responses_mock.script(text("outside sparring"), text("Round one."))
    plain_exec(real_codex, codex_env, cwd)
    assert marker.exists(), "the folder's hook runs outside sparring"
    marker.unlink()

    sid = sparring("init", "--skill", "deep-discussion", "--cwd", "services/api").out["session"]
    assert sparring("start", sid, input=b"Redis or SQLite?").exit_code == 0
    ended = sparring("wait", sid, "--timeout", "60").out
    assert ended["status"] == "completed" and ended["review"]["text"] == "Round one.", ended
    assert not marker.exists(), "a hook between the root and the working folder ran"
