"""The suite needs nothing from the machine: no git identity, no pip outside a virtual
environment, no ensurepip (tests/run.py makes the environment it runs in)."""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from support.barepath import BARE_PATH
from support.gitrepo import IDENTITY, git
from support.installing import make_project

ROOT = Path(__file__).resolve().parents[1]


def hide_git_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As on a stock CI runner: no global or system config, and git may not guess one."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key, value in (("COUNT", "1"), ("KEY_0", "user.useConfigOnly"),
                       ("VALUE_0", "true")):
        monkeypatch.setenv(f"GIT_CONFIG_{key}", value)
    for key in IDENTITY:
        monkeypatch.delenv(key, raising=False)


def test_the_suites_git_helpers_bring_their_own_identity(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    hide_git_identity(monkeypatch, tmp_path)
    control = tmp_path / "control"
    control.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=control, check=True)
    bare = subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "x"], cwd=control,
                          capture_output=True, text=True, check=False)
    assert bare.returncode != 0, "this machine's git still finds an identity somewhere"

    project = make_project(tmp_path / "project")  # what the module-scoped fixtures use
    (project / "app.py").write_text("print('changed')\n")
    git(project, "stash", "-q")  # a stash is a commit too
    git(project, "commit", "-q", "--allow-empty", "-m", "second")

    assert git(project, "log", "--format=%an <%ae>").splitlines() == [
        "Sparring Tests <tests@sparring.invalid>"] * 2


def test_ci_hides_gits_global_and_system_config() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "export GIT_CONFIG_GLOBAL=/dev/null" in ci
    assert "export GIT_CONFIG_NOSYSTEM=1" in ci
    assert "user.useConfigOnly" in ci


# -- tests/run.py: the README's test command -----------------------------------------------


def load_runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_tests", ROOT / "tests" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_ensurepip_it_stops_at_once_and_says_what_to_install(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    runner = load_runner()
    runner.ensurepip_available = lambda: False  # Debian/Ubuntu without python3-venv
    monkeypatch.setenv("SPARRING_TEST_VENV", str(tmp_path / "venv"))

    assert runner.main([]) == 1

    err = capsys.readouterr().err
    assert err.startswith(f"tests/run.py: {sys.executable} has no ensurepip")
    assert "sudo apt install python3-venv" in err and "another Python 3.10+" in err
    assert "install.py" in err  # why no workaround would do: the installer needs it too
    assert not (tmp_path / "venv").exists()


def test_a_failed_venv_leaves_nothing_half_made(tmp_path: Path) -> None:
    runner = load_runner()
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the environment should go\n")

    with pytest.raises(runner.SetupFailed, match=r"-m venv .* failed"):
        runner.prepare(blocker / "venv")
    assert blocker.read_text() == "a file where the environment should go\n"


def test_an_install_cut_short_is_done_again_at_the_next_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stamp that spares the next run the install is written only once the test tools and
    the runtime's wheels are both in: an environment with a current stamp but no wheels (an
    older tests/run.py made it) installs again, and a fetch that fails leaves no stamp, so
    the suite's install.py runs never go offline without their wheels."""
    runner = load_runner()
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"  # this interpreter, which has sparring installed
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    (venv / runner.STAMP).write_text(runner.fingerprint(), encoding="utf-8")
    ran: list[list[str]] = []

    def cut_short(argv: list[str], failure: str) -> None:
        ran.append(argv)
        if "wheel" in argv:  # pip makes the folder, then fails (the network, say)
            Path(argv[argv.index("-w") + 1]).mkdir()
            raise runner.SetupFailed(failure)

    monkeypatch.setattr(runner, "run", cut_short)
    with pytest.raises(runner.SetupFailed, match="could not fetch the runtime's dependencies"):
        runner.prepare(venv)
    assert [argv[3] for argv in ran] == ["install", "wheel"]
    assert not (venv / runner.STAMP).exists() and not runner.installed(venv)

    monkeypatch.setattr(runner, "run", lambda argv, failure: ran.append(argv))
    runner.prepare(venv)
    assert "click>=8.1" in ran[-1]  # pyproject.toml's dependencies, as the package names them
    assert runner.installed(venv)


def test_prepare_makes_the_environment_and_runs_no_test(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--prepare` (what .ci/run runs while npm installs the real binaries beside it) makes the
    environment and stops; with any other argument, pytest runs, and is given it."""
    runner = load_runner()
    monkeypatch.setenv("SPARRING_TEST_VENV", str(tmp_path / "venv"))
    prepared: list[Path] = []
    monkeypatch.setattr(runner, "prepare", lambda venv: prepared.append(venv) or venv / "python")
    called: list[list[str]] = []
    monkeypatch.setattr(runner.subprocess, "call", lambda argv, cwd: called.append(argv) or 0)

    assert runner.main([runner.PREPARE]) == 0
    assert prepared == [tmp_path / "venv"] and called == []

    assert runner.main(["-q", "tests/test_repo.py"]) == 0
    assert prepared[-1] == tmp_path / "venv"
    assert called and called[0][-2:] == ["-q", "tests/test_repo.py"]


# What .ci/run runs, in a copy of it: `npm` and `python3` are stand-ins that note each call in
# CALLS; an npm install into FAIL_PREFIX fails, one into SLOW_PREFIX takes 30 s (its pid in
# NPM_PID), and `tests/run.py --prepare` fails when PREPARE_FAILS is set.
_NPM = """#!/bin/sh
prefix=$3
if [ "$prefix" = "$SLOW_PREFIX" ]; then echo $$ > "$NPM_PID"; exec sleep 30; fi
sleep 0.5
[ "$prefix" = "$FAIL_PREFIX" ] && exit 1
echo "npm $prefix" >> "$CALLS"
"""
_PYTHON3 = """#!/bin/sh
echo "python3 $*" >> "$CALLS"
if [ "$*" = "tests/run.py --prepare" ] && [ -n "$PREPARE_FAILS" ]; then
  while [ -n "$SLOW_PREFIX" ] && [ ! -s "$NPM_PID" ]; do sleep 0.05; done  # npm is running
  exit 4
fi
exit 0
"""


def run_ci(tmp_path: Path, **env: str) -> tuple[int, list[str]]:
    """.ci/run, copied into tmp_path, with the stand-ins first on PATH: its exit status and
    the calls noted, in order."""
    (tmp_path / ".ci").mkdir()
    ci = tmp_path / ".ci" / "run"
    ci.write_bytes((ROOT / ".ci" / "run").read_bytes())
    ci.chmod(0o755)
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    for name, text in (("npm", _NPM), ("python3", _PYTHON3)):
        (stand_ins / name).write_text(text)
        (stand_ins / name).chmod(0o755)
    calls = tmp_path / "calls"
    calls.touch()
    done = subprocess.run([str(ci)], capture_output=True, text=True, timeout=20, env={
        "PATH": f"{stand_ins}:{BARE_PATH}", "CALLS": str(calls),
        "NPM_PID": str(tmp_path / "npm.pid"), "FAIL_PREFIX": "", "SLOW_PREFIX": "", **env})
    return done.returncode, calls.read_text().splitlines()


def test_ci_makes_the_environment_while_npm_installs_and_waits_for_all(
        tmp_path: Path) -> None:
    code, calls = run_ci(tmp_path)
    assert code == 0
    assert calls[0] == "python3 tests/run.py --prepare"  # beside the installs, not after
    assert sorted(calls[1:4]) == ["npm .ci/node", "npm .ci/node131", "npm .ci/node197"]
    assert calls[4:] == ["python3 tests/run.py"]  # the suite, once all are in


@pytest.mark.parametrize("prefix", [".ci/node", ".ci/node197", ".ci/node131"])
def test_ci_stops_when_an_npm_install_fails(tmp_path: Path, prefix: str) -> None:
    code, calls = run_ci(tmp_path, FAIL_PREFIX=prefix)
    assert code != 0
    assert "python3 tests/run.py" not in calls


def test_ci_stops_when_the_environment_cannot_be_made_and_ends_npm(tmp_path: Path) -> None:
    import psutil

    code, calls = run_ci(tmp_path, PREPARE_FAILS="1", SLOW_PREFIX=".ci/node197")
    assert code == 4 and "python3 tests/run.py" not in calls
    npm = int((tmp_path / "npm.pid").read_text())
    with contextlib.suppress(psutil.NoSuchProcess):  # ended with it, not left to run its 30 s
        psutil.Process(npm).wait(timeout=5)


def test_ensurepip_is_found_where_venv_looks_for_it() -> None:
    import sysconfig

    expected = (Path(sysconfig.get_path("stdlib")) / "ensurepip" / "__main__.py").is_file()
    assert load_runner().ensurepip_available() is expected


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {f"{n.module}.{a.name}" for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module for a in n.names}
    return imported


def test_the_runner_uses_only_the_standard_library() -> None:
    """tests/run.py, and sparring/host.py, which it loads to refuse native Windows."""
    imported = _imports(ROOT / "tests" / "run.py")
    assert {name for name in imported if name.startswith("sparring")} == {"sparring.host"}
    imported |= _imports(ROOT / "scripts" / "sparring" / "host.py")
    roots = {name.split(".")[0] for name in imported} - {"sparring"}
    assert roots <= set(sys.stdlib_module_names), roots - set(sys.stdlib_module_names)
