"""The install layout has one source, sparring/installer/layout.py (install.py and `sparring doctor`
use it); the launcher, a shell script, spells it again. These tests run the launcher against
temporary layouts made from installer/layout.py's names and prove it finds what is there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sparring.installer import layout
from sparring.installer.files import dump_json
from support.gitrepo import init
from support.installing import BARE_PATH, ROOT, SKILLS, runtime_of

LAUNCHER = ROOT / "scripts" / "launcher.sh"


def launch(launcher: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The launcher in a bare environment: nothing but `env`, PATH without any sparring."""
    bare = {"PATH": BARE_PATH, **env}
    return subprocess.run([str(launcher), *args], env=bare, capture_output=True, text=True,
                          timeout=30, check=False, cwd=launcher.parent)


def fake_python(path: Path) -> None:
    """An executable where the runtime's python belongs: it prints how it was run."""
    path.parent.mkdir(parents=True)
    path.write_text('#!/bin/sh\necho "$0 $*"\n')
    path.chmod(0o755)


def test_every_skill_runs_the_one_launcher() -> None:
    for skill in SKILLS:
        assert (ROOT / "skills" / skill / layout.LAUNCHER).resolve() == LAUNCHER


@pytest.mark.parametrize("xdg", ["set", "empty", "unset"])
def test_the_launcher_runs_the_runtime_where_installation_puts_it(tmp_path: Path,
                                                                  xdg: str) -> None:
    home = Path(os.environ["HOME"])  # the test's own (conftest): Path.home() reads it
    env = {"HOME": str(home)}
    if xdg == "set":
        env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    elif xdg == "empty":
        env["XDG_DATA_HOME"] = ""
    data = layout.data_dir(env)
    assert data == ((tmp_path / "xdg" if xdg == "set" else home / ".local" / "share") /
                    "sparring")
    python = runtime_of(data.parent).python
    fake_python(python)

    done = launch(LAUNCHER, env, "poll", "some-session")

    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{python} -I -c {layout.ENTRY} poll some-session\n"


def _install(tmp_path: Path, marker_name: str, source: Path) -> Path:
    """A skill folder as install.py leaves one in a project: the launcher and a marker
    (written as the installer writes it) naming the clone it came from."""
    folder = tmp_path / "project" / ".claude" / "skills" / SKILLS[0]
    folder.mkdir(parents=True)
    shutil.copy2(LAUNCHER, folder / layout.LAUNCHER)
    marker: dict[str, Any] = {"format": 1, "tool": "sparring", "skill": SKILLS[0],
                              "version": "0", "source": str(source), "files": {}}
    (folder / marker_name).write_bytes(dump_json(marker))
    return folder


@pytest.mark.parametrize("marker_name, knows_the_source", [
    (layout.MARKER, True), (".some-other-marker.json", False)])
def test_the_launcher_reads_the_marker_installation_names(
        tmp_path: Path, marker_name: str, knows_the_source: bool) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "install.py").write_text("# the clone's installer\n")
    folder = _install(tmp_path, marker_name, clone)
    env = {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "no-data")}

    done = launch(folder / layout.LAUNCHER, env, "poll", "x")

    assert done.returncode == 1
    out = json.loads(done.stdout)
    assert out["error"]["code"] == "runtime_missing"
    hint = out["error"]["hint"]
    assert f"it creates the runtime in {runtime_of(tmp_path / 'no-data').venv};" in hint
    assert (f"python3 {clone}/install.py --project {tmp_path / 'project'}`" in hint) is \
        knows_the_source, hint


def _planted(project: Path, variable: str, ran: Path) -> tuple[Path, Path]:
    """A program the project holds where `variable` would make the launcher run it: (the
    program, the value that leads to it)."""
    if variable == "SPARRING_PYTHON":
        program = project / "tools" / "py"
        value = program
    elif variable == "XDG_DATA_HOME":
        value = project / "data"
        program = runtime_of(value).python
    else:  # HOME, with no XDG_DATA_HOME: the runtime in its .local/share
        value = project / "home"
        program = runtime_of(value / ".local" / "share").python
    program.parent.mkdir(parents=True)
    program.write_text(f'#!/bin/sh\ntouch "{ran}"\n')
    program.chmod(0o755)
    return program, value


@pytest.mark.parametrize("variable", ["SPARRING_PYTHON", "XDG_DATA_HOME", "HOME"])
@pytest.mark.parametrize("how", ["in the project", "through a link outside it"])
def test_the_launcher_never_runs_a_python_the_project_holds(tmp_path: Path, variable: str,
                                                            how: str) -> None:
    """A cloned project's Claude Code settings may set any variable: a SPARRING_PYTHON or an
    XDG_DATA_HOME that leads into the project runs nothing, with one JSON error naming it,
    however deep in the project Claude Code runs and through whatever link outside."""
    project, ran = tmp_path / "project", tmp_path / "ran"
    init(project)
    (project / "src" / "deep").mkdir(parents=True)
    _, value = _planted(project, variable, ran)
    if how == "through a link outside it":
        (tmp_path / "elsewhere").symlink_to(value)
        value = tmp_path / "elsewhere"
    error = _refused(project, {"HOME": str(tmp_path / "home"), variable: str(value)}, ran)

    assert variable in error["message"]
    assert str(project.resolve()) in error["message"] and variable in error["hint"]


def _refused(project: Path, env: dict[str, str], ran: Path) -> dict[str, Any]:
    """The launcher's error for a `status` run in project/src/deep, the project's settings
    setting `env`: one JSON error, `runtime_in_project`, and the planted program not run."""
    _set_by(project, env)
    done = subprocess.run([str(LAUNCHER), "status"], env={"PATH": BARE_PATH, **env},
                          capture_output=True, text=True, timeout=30, check=False,
                          cwd=project / "src" / "deep")
    assert done.returncode == 1 and not ran.exists(), done.stdout + done.stderr
    error: dict[str, Any] = json.loads(done.stdout)["error"]
    assert error["code"] == "runtime_in_project"
    return error


@pytest.mark.parametrize("common", ["../nowhere", ""])
def test_a_planted_git_folder_git_would_pass_over_is_no_project_for_the_launcher(
        tmp_path: Path, common: str) -> None:
    """A `.git` below the project that git passes over (a HEAD, a commondir naming no
    repository; a HEAD alone) does not make its folder the project, as store/locate.py
    holds: a python elsewhere in the project still runs nothing."""
    project, ran = tmp_path / "project", tmp_path / "ran"
    init(project)
    planted = project / "src" / ".git"
    planted.mkdir(parents=True)
    (project / "src" / "deep").mkdir()
    (planted / "HEAD").write_text("ref: refs/heads/main\n")
    if common:
        (planted / "commondir").write_text(common + "\n")
    _, value = _planted(project, "SPARRING_PYTHON", ran)

    error = _refused(project, {"HOME": str(tmp_path / "home"), "SPARRING_PYTHON": str(value)},
                     ran)

    assert str(project.resolve()) in error["message"]


def _set_by(project: Path, env: dict[str, str], spelled: str = "{}") -> None:
    """The project's Claude Code settings set `env` (each name spelled as `spelled` says: a
    JSON escape is the same name to Claude Code)."""
    (project / ".claude").mkdir(exist_ok=True)
    entries = ", ".join(f'"{spelled.format(k)}": {json.dumps(v)}' for k, v in env.items())
    (project / ".claude" / "settings.json").write_text(f'{{"env": {{{entries}}}}}\n')


@pytest.mark.parametrize("settings", ["none", "the project's set HOME", "spelled \\u0048OME"])
def test_a_home_the_user_chose_runs_its_runtime_from_the_home_folder(
        tmp_path: Path, settings: str) -> None:
    """Claude Code started in the home folder, outside git, where HOME is not the user
    database's (a container's, a throwaway one): the runtime install.py made under it runs,
    unless a settings file names HOME (as the project's would to plant one), however spelled."""
    home, ran = tmp_path / "home", tmp_path / "ran"
    _planted(home, "HOME", ran)  # <home>/home/.local/share/sparring/venv/bin/python
    home = home / "home"
    if settings != "none":
        _set_by(home, {"HOME": str(home)}, "{}" if settings.startswith("the") else
                "\\u0048OME")
    done = subprocess.run([str(LAUNCHER), "status"], env={"PATH": BARE_PATH, "HOME": str(home)},
                          capture_output=True, text=True, timeout=30, check=False, cwd=home)
    if settings == "none":
        assert done.returncode == 0 and ran.exists(), done.stdout + done.stderr
    else:
        assert not ran.exists(), done.stdout + done.stderr
        assert json.loads(done.stdout)["error"]["code"] == "runtime_in_project"


@pytest.mark.parametrize("variable", ["SPARRING_PYTHON", "XDG_DATA_HOME", "HOME"])
@pytest.mark.parametrize("where", ["a project", "a folder that holds the user's own home"])
def test_the_launcher_runs_the_python_the_user_chose_outside_the_project(
        tmp_path: Path, variable: str, where: str) -> None:
    """The runtime the user chose runs: one outside the project, and any runtime when the
    project holds the user's own home (a home kept in git, or Claude Code run from `/` with
    no project at all): its settings are the user's own."""
    project, mine, ran = tmp_path / "project", tmp_path / "mine", tmp_path / "ran"
    init(project)
    _, value = _planted(mine, variable, ran)
    env = {"HOME": str(tmp_path / "home"), variable: str(value)}
    cwd = project if where == "a project" else Path("/")
    done = subprocess.run([str(LAUNCHER), "status"], env={"PATH": BARE_PATH, **env},
                          capture_output=True, text=True, timeout=30, check=False, cwd=cwd)
    assert done.returncode == 0 and ran.exists(), done.stdout + done.stderr


def test_a_python_the_user_chose_never_imports_the_projects_own_sparring(tmp_path: Path) -> None:
    """SPARRING_PYTHON outside the project (the system's python, say) runs isolated (`-I`):
    a `sparring` package the project holds in the working directory is never imported."""
    project, ran = tmp_path / "project", tmp_path / "ran"
    init(project)
    (project / "sparring").mkdir()
    (project / "sparring" / "__init__.py").write_text(
        f"open({str(ran)!r}, 'w').write('the project ran')\n")
    done = subprocess.run([str(LAUNCHER), "status"], capture_output=True, text=True,
                          timeout=30, check=False, cwd=project,
                          env={"PATH": BARE_PATH, "HOME": str(tmp_path / "home"),
                               "SPARRING_PYTHON": sys.executable,
                               "PYTHONPATH": str(project)})
    assert not ran.exists(), done.stdout + done.stderr


def test_a_sparring_the_project_put_on_path_never_runs(tmp_path: Path) -> None:
    """With no runtime where XDG_DATA_HOME leads (the project may set it so), the launcher
    falls back to a `sparring` on PATH: one inside the project never runs."""
    project, ran = tmp_path / "project", tmp_path / "ran"
    init(project)
    program = project / "bin" / "sparring"
    program.parent.mkdir()
    program.write_text(f'#!/bin/sh\ntouch "{ran}"\n')
    program.chmod(0o755)
    done = subprocess.run([str(LAUNCHER), "status"], capture_output=True, text=True,
                          timeout=30, check=False, cwd=project,
                          env={"PATH": f"{program.parent}:{BARE_PATH}",
                               "HOME": str(tmp_path / "home"),
                               "XDG_DATA_HOME": str(tmp_path / "nothing-here")})
    assert done.returncode == 1 and not ran.exists(), done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "runtime_in_project" and "PATH" in error["message"]
