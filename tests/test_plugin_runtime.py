"""The Claude Code plugin makes its own runtime on first use, in the folder Claude Code keeps
for its data, with no install.py step (installer/plugin.py, run by the launcher): built
offline here from the wheels tests/run.py fetched, as the install tests build theirs.

The launcher runs a plugin runtime only once its seal names the plugin root it runs from; a
build that failed, or one killed halfway, leaves nothing that passes for whole. The real
Claude Code route (its SessionStart hook naming the folder): tests/integration/test_plugin.py.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from sparring import claude
from sparring.installer import layout
from sparring.installer.plugin import sealed
from support.gitrepo import git
from support.habitat import plugin_copy
from support.installing import BARE_PATH, ROOT, SKILLS, install_env

LAUNCHER = ROOT / "scripts" / "launcher.sh"


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    """The plugin as Claude Code holds it: a copy of the repository's plugin files."""
    return plugin_copy(tmp_path / "plugin")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    git(path, "init", "-q")
    return path


def plugin_env(tmp_path: Path, data: Path, **extra: str) -> dict[str, str]:
    """What a Bash call of Claude Code running the plugin has: the data folder its
    SessionStart hook named, no runtime install.py made, no `sparring` on PATH; pip offline."""
    env = install_env(tmp_path / "no-runtime", tmp_path / "home", PATH=BARE_PATH)
    return {**env, layout.PLUGIN_DATA: str(data), **extra}


def launch(plugin: Path, env: dict[str, str], cwd: Path, *args: str,
           skill: str = SKILLS[0]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(plugin / "skills" / skill / layout.LAUNCHER), *args], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The one JSON object the call printed (pip's output goes to its log, never here)."""
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_the_first_runner_call_makes_the_runtime_in_the_plugins_data_folder(
        tmp_path: Path, plugin: Path, project: Path) -> None:
    data = tmp_path / "claude-home" / "plugins" / "data" / "sparring-sparring"
    env = plugin_env(tmp_path, data)

    first = launch(plugin, env, project, "doctor", "--json", "--full")

    out = answer(first)  # not ready: no codex here (doctor exits 1 then)
    assert out["ok"] is True and out["verb"] == "doctor", first.stdout + first.stderr
    checks = {c["name"]: c for c in out["checks"]}
    assert checks["runtime"]["ok"], checks["runtime"]
    assert checks["runtime"]["detail"].startswith(
        f"the plugin's own runtime {data / 'venv' / 'bin' / 'python'}: sparring ")
    assert "the skills come from the plugin, nothing to install" in checks["skills"]["detail"]
    assert "install.py" not in json.dumps(out["checks"]), "no install.py step to advise"
    assert (data / layout.PLUGIN_READY).read_text() == f"{plugin}\n"
    assert sealed(data, str(plugin))
    assert not (tmp_path / "no-runtime").exists(), "nothing in install.py's runtime folder"
    assert not (tmp_path / "home" / ".local" / "bin").exists(), "no command linked"
    python = data / "venv" / "bin" / "python"
    made = python.parent.stat().st_ino

    again = launch(plugin, env, project, "status")

    assert again.returncode == 0 and answer(again)["verb"] == "status", again.stdout
    assert python.parent.stat().st_ino == made, "the second call builds nothing"


def test_a_second_call_during_the_first_build_waits_and_builds_nothing(
        tmp_path: Path, plugin: Path, project: Path) -> None:
    data = tmp_path / "data"
    env = plugin_env(tmp_path, data)
    argv = [str(plugin / "skills" / SKILLS[0] / layout.LAUNCHER), "status"]
    first = subprocess.Popen(argv, env=env, cwd=project, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (data / "venv").is_dir() and time.monotonic() < deadline:
        time.sleep(0.05)  # the first call is building: its venv exists, its seal does not
    assert not (data / layout.PLUGIN_READY).exists(), "built too fast to overlap"
    mark = data / "venv" / "made-by-the-first-call"
    mark.write_text("")  # a build started again would remove the venv, and this with it

    second = launch(plugin, env, project, "status")
    out, _ = first.communicate(timeout=300)

    assert first.returncode == 0 and json.loads(out)["verb"] == "status", out
    assert second.returncode == 0 and answer(second)["verb"] == "status", second.stdout
    assert mark.exists(), "the second call built nothing: it waited, then ran the first's"
    assert sealed(data, str(plugin))


def test_a_failed_build_says_why_and_leaves_nothing_that_passes_for_whole(
        tmp_path: Path, plugin: Path, project: Path) -> None:
    data = tmp_path / "data"
    no_wheels = tmp_path / "no-wheels"
    no_wheels.mkdir()
    offline = plugin_env(tmp_path, data, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(no_wheels))

    failed = launch(plugin, offline, project, "status")

    assert failed.returncode == 1
    out = answer(failed)
    assert set(out) == {"schema_version", "ok", "verb", "error"} and out["ok"] is False
    error = out["error"]
    assert error["code"] == "runtime_build_failed", error
    assert str(data) in error["message"] and "pip could not install" in error["message"]
    assert str(data / "pip.log") in error["hint"] and "SPARRING_PYTHON" in error["hint"]
    assert not (data / "venv").exists() and not (data / layout.PLUGIN_READY).exists()

    # What a build killed halfway leaves: a venv, no seal. It never runs; the next call,
    # with the wheels within reach again, builds the runtime whole.
    half = data / "venv" / "bin" / "python"
    half.parent.mkdir(parents=True)
    half.write_text("#!/bin/sh\necho HALF\n")
    half.chmod(0o755)
    done = launch(plugin, plugin_env(tmp_path, data), project, "status")

    assert done.returncode == 0 and answer(done)["verb"] == "status", done.stdout
    assert sealed(data, str(plugin))


def test_a_seal_for_another_plugin_root_builds_anew(tmp_path: Path, plugin: Path,
                                                   project: Path) -> None:
    """A plugin update is a new root (Claude Code's cache keeps one folder per version):
    the runtime the old version sealed is built again for the new one."""
    data = tmp_path / "data"
    python = data / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\necho OLD\n")
    python.chmod(0o755)
    (data / layout.PLUGIN_READY).write_text(f"{tmp_path / 'plugin-0.0.9'}\n")

    done = launch(plugin, plugin_env(tmp_path, data), project, "status")

    assert done.returncode == 0 and answer(done)["verb"] == "status", done.stdout
    assert (data / layout.PLUGIN_READY).read_text() == f"{plugin}\n"


def test_a_data_folder_the_project_holds_builds_and_runs_nothing(
        tmp_path: Path, plugin: Path, project: Path) -> None:
    """SPARRING_PLUGIN_DATA is a variable a project's settings may set too: one leading into
    the project gets the launcher's runtime_in_project error, before any build."""
    inside = project / "data"

    done = launch(plugin, plugin_env(tmp_path, inside), project, "status")

    assert done.returncode == 1
    error = answer(done)["error"]
    assert error["code"] == "runtime_in_project" and layout.PLUGIN_DATA in error["message"]
    assert not (inside / "venv").exists()


def test_an_installed_copy_never_takes_the_plugins_runtime(tmp_path: Path, plugin: Path,
                                                          project: Path) -> None:
    """Only the plugin's own launcher builds or runs it: a skill folder install.py made
    (its marker), even in a tree that looks like the plugin's, in a session where the
    plugin is also enabled goes its own way."""
    folder = plugin / "skills" / SKILLS[0]
    assert (plugin / ".claude-plugin" / "plugin.json").is_file()
    (folder / layout.MARKER).write_text("{}\n")
    data = tmp_path / "data"

    done = subprocess.run([str(folder / layout.LAUNCHER), "status"],
                          env=plugin_env(tmp_path, data), cwd=project, capture_output=True,
                          text=True, timeout=60, check=False)

    assert done.returncode == 1 and answer(done)["error"]["code"] == "runtime_missing"
    assert not data.exists()


def session_start(tmp_path: Path, event: str, **variables: str) -> str:
    """What the launcher's --session-start, run as Claude Code runs a SessionStart hook (the
    event on stdin), appends to the session's environment file; it prints nothing."""
    env_file = tmp_path / "session-env.sh"
    env_file.write_text("")
    env = {"PATH": BARE_PATH, "CLAUDE_ENV_FILE": str(env_file), **variables}
    done = subprocess.run(["sh", str(LAUNCHER), "--session-start"], env=env, input=event,
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done
    return env_file.read_text()


def seen_by_bash(env_file_text: str, tmp_path: Path, variable: str) -> str:
    """The variable as the session's next Bash call has it (the file sourced first)."""
    env_file = tmp_path / "sourced.sh"
    env_file.write_text(env_file_text)
    shown = subprocess.run(["sh", "-c", f'. "{env_file}"; printf %s "${variable}"'],
                           capture_output=True, text=True, timeout=30, check=True)
    return shown.stdout


@pytest.mark.parametrize("value, written", [
    ("/home/u/.claude/plugins/data/sparring-sparring",
     "export SPARRING_PLUGIN_DATA=/home/u/.claude/plugins/data/sparring-sparring\n"),
    ("/home/u/My Data/sparring-inline",
     "export SPARRING_PLUGIN_DATA=\"/home/u/My Data/sparring-inline\"\n"),
    ("/Users/Jane O'Doe/.claude/plugins/data/sparring-sparring",
     "export SPARRING_PLUGIN_DATA=\"/Users/Jane O'Doe/.claude/plugins/data/sparring-sparring\"\n"),
    ("/home/u/$HOME `id` \\ \"x\"!",
     "export SPARRING_PLUGIN_DATA='/home/u/$HOME `id` \\ \"x\"!'\n"),
    ("/home/u/line\nbreak", ""),
    ("relative/data", ""),
    ("", "")])
def test_the_session_start_hook_names_the_data_folder_to_every_bash_call(
        tmp_path: Path, value: str, written: str) -> None:
    found = session_start(tmp_path, "", CLAUDE_PLUGIN_DATA=value)

    assert found == written
    if written:  # what the Bash call then has: the folder, exactly
        assert seen_by_bash(found, tmp_path, "SPARRING_PLUGIN_DATA") == value


EVENT = {"session_id": "5c1f", "transcript_path": "/home/u/.claude/projects/p/5c1f.jsonl",
         "cwd": "/home/u/app", "hook_event_name": "SessionStart", "source": "startup",
         "agent_type": None}


@pytest.mark.parametrize("model, kept", [
    ("claude-opus-4-5-20251101", True),
    ("claude-sonnet-4-5[1m]", True),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", True),
    ("claude-sonnet-4-5@20250929", True),
    ("claude'; touch /tmp/x; '", False),
    ("claude $(id)", False),
    ("x" * 100, True),
    ("x" * 101, False),
    ("", False)])
def test_the_session_start_hook_names_claudes_model_to_every_bash_call(
        tmp_path: Path, model: str, kept: bool) -> None:
    """Claude Code tells only a SessionStart hook its model; the runner reads it back by the
    same rule (claude.py), so a name the hook kept is the one a turn records."""
    titled = {**EVENT, "model": model, "session_title": 'say "model":"evil" please'}

    found = session_start(tmp_path, json.dumps(titled))

    if not kept:  # nothing written, so nothing the next Bash call would run
        assert found == ""
    else:
        assert seen_by_bash(found, tmp_path, claude.MODEL_VARIABLE) == model
    assert claude.model({claude.MODEL_VARIABLE: model}) == (model if kept else None)


def test_the_session_start_hook_reads_the_events_own_model_key(tmp_path: Path) -> None:
    """A title or a path that spells a "model" key in its text is not the event's key, nor
    is one nested further on; an environment file it cannot write is no error it prints."""
    event = json.dumps({**EVENT, "cwd": '/home/u/"model":"evil"', "model": "claude-real",
                        "session_title": '"model": "evil"'})
    assert seen_by_bash(session_start(tmp_path, event), tmp_path,
                        claude.MODEL_VARIABLE) == "claude-real"
    assert session_start(tmp_path, json.dumps({**EVENT, "cwd": '"model":"evil"'})) == ""
    nested = json.dumps({**EVENT, "model": "claude-real", "agent": {"model": "other"}},
                        separators=(",", ":"))
    assert seen_by_bash(session_start(tmp_path, nested), tmp_path,
                        claude.MODEL_VARIABLE) == "claude-real"
    unwritable = subprocess.run(
        ["sh", str(LAUNCHER), "--session-start"], input=nested, capture_output=True,
        text=True, timeout=30, check=False,
        env={"PATH": BARE_PATH, "CLAUDE_ENV_FILE": str(tmp_path / "no" / "such" / "file"),
             "CLAUDE_PLUGIN_DATA": "/data"})
    assert (unwritable.returncode, unwritable.stdout, unwritable.stderr) == (0, "", "")


def test_the_session_start_hook_never_appends_through_a_link(tmp_path: Path) -> None:
    """An environment file that is a link (to a shell's profile, say) is left as it is, and
    what it points at too; no error is printed."""
    profile = tmp_path / "profile.sh"
    profile.write_text("# mine\n")
    link = tmp_path / "env-file"
    link.symlink_to(profile)
    event = json.dumps({**EVENT, "model": "claude-real"})
    done = subprocess.run(
        ["sh", str(LAUNCHER), "--session-start"], input=event, capture_output=True,
        text=True, timeout=30, check=False,
        env={"PATH": BARE_PATH, "CLAUDE_ENV_FILE": str(link), "CLAUDE_PLUGIN_DATA": "/data"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert profile.read_text() == "# mine\n" and link.is_symlink()


def test_the_launcher_spells_the_plugins_names_as_the_layout_does() -> None:
    launcher = LAUNCHER.read_text()
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    assert f'"$plugin/{layout.PLUGIN_READY}"' in launcher
    assert f"${{{layout.PLUGIN_DATA}:-}}" in launcher
    assert f"export {layout.PLUGIN_DATA}=" in launcher
    assert f"export {claude.MODEL_VARIABLE}=" in launcher
    [group] = hooks["SessionStart"]
    assert [h["command"] for h in group["hooks"]] == [
        'sh "${CLAUDE_PLUGIN_ROOT}/scripts/launcher.sh" --session-start']


def test_doctor_names_a_plugin_runtime_older_than_the_plugins_sources(
        tmp_path: Path, plugin: Path, project: Path) -> None:
    """A plugin folder whose sources changed under the same root (one loaded with
    --plugin-dir from a clone): the seal still holds, so doctor says what builds it anew, and
    the next call does."""
    data = tmp_path / "data"
    env = plugin_env(tmp_path, data)
    assert launch(plugin, env, project, "status").returncode == 0
    module = plugin / "scripts" / "sparring" / "limits.py"
    module.write_text(module.read_text() + "\n# changed\n")

    out = answer(launch(plugin, env, project, "doctor", "--json", "--full"))

    found = {c["name"]: c for c in out["checks"]}["updates"]
    assert found["ok"] is False, found
    assert found["detail"] == f"the runtime is older than the clone {plugin}"
    assert found["hint"] == (f"update: the plugin's next runner call makes its runtime anew in "
                             f"{data} (remove {data / layout.PLUGIN_READY} first if it is "
                             "there); no install.py step")
    (data / layout.PLUGIN_READY).unlink()
    rebuilt = answer(launch(plugin, env, project, "doctor", "--json", "--full"))
    assert {c["name"]: c for c in rebuilt["checks"]}["updates"]["ok"], rebuilt
