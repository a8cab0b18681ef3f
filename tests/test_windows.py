"""Native Windows is refused at every entry point in one line naming WSL, never with a
traceback (issue 26). Windows is simulated: Python told it runs on win32 with no fcntl (as
there), the launcher's shell told it runs in Git Bash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sparring import host
from support.barepath import BARE_PATH

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "scripts" / "launcher.sh"

# Runs `how` (a module or a file) as its entry point would run it, as on native Windows.
AS_ON_WINDOWS = """
import runpy, sys
sys.platform = {platform!r}
sys.modules["fcntl"] = None  # as on Windows: `import fcntl` fails
how, target, *sys.argv[1:] = sys.argv[1:]
sys.argv[0] = target
if how == "module":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
elif how == "script":  # the `sparring` command pip makes: sparring.__main__:main
    from sparring.__main__ import main
    sys.exit(main())
else:
    runpy.run_path(target, run_name="__main__")
"""

ENTRY_POINTS = {
    "python -m sparring": ("module", "sparring", "poll", "some-session"),
    "the sparring command": ("script", "sparring", "start", "some-session"),
    "install.py": ("path", str(ROOT / "install.py"), "--user"),
    "tests/run.py": ("path", str(ROOT / "tests" / "run.py"), "-q"),
}


def as_on_windows(args: tuple[str, ...], tmp_path: Path,
                  platform: str = "win32") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", AS_ON_WINDOWS.format(platform=platform),
                           *args], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HOME": str(tmp_path)})


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_every_entry_point_refuses_native_windows_in_one_line(entry: str,
                                                               tmp_path: Path) -> None:
    done = as_on_windows(ENTRY_POINTS[entry], tmp_path)
    said = (done.stdout + done.stderr).strip()
    assert done.returncode == 1, said
    assert len(said.splitlines()) == 1, said
    assert "Traceback" not in said and "WSL" in said and "native Windows" in said
    assert host.NATIVE_WINDOWS in said
    if entry in ("python -m sparring", "the sparring command"):
        error = json.loads(done.stdout)["error"]
        assert error == {"code": "platform_unsupported", "message": host.NATIVE_WINDOWS,
                         "hint": host.WSL_HINT}
    assert not (tmp_path / ".local").exists() and not (tmp_path / ".claude").exists()


@pytest.mark.parametrize("platform", ["cygwin", "msys"])
def test_the_posix_layers_on_windows_are_refused_too(platform: str, tmp_path: Path) -> None:
    done = as_on_windows(ENTRY_POINTS["python -m sparring"], tmp_path, platform)
    assert done.returncode == 1 and json.loads(done.stdout)["error"]["code"] == (
        "platform_unsupported")


@pytest.mark.parametrize("uname", ["MINGW64_NT-10.0-22631", "MSYS_NT-10.0-22631",
                                   "CYGWIN_NT-10.0-22631"])
def test_the_launcher_refuses_native_windows_in_one_line(uname: str, tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "uname").write_text(f"#!/bin/sh\necho {uname}\n")
    (fake / "uname").chmod(0o755)
    env = {"PATH": f"{fake}:{BARE_PATH}", "HOME": str(tmp_path), "OS": "Windows_NT"}
    done = subprocess.run(["sh", str(LAUNCHER), "poll", "x"], env=env, capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 1 and done.stderr == ""
    assert len(done.stdout.splitlines()) == 1
    out = json.loads(done.stdout)
    assert out["verb"] == "launcher" and out["error"] == {
        "code": "platform_unsupported", "message": host.NATIVE_WINDOWS, "hint": host.WSL_HINT}


def test_wsl_is_linux_to_the_launcher(tmp_path: Path) -> None:
    """WSL can pass Windows' OS variable on: the launcher still asks uname, and goes on."""
    env = {"PATH": BARE_PATH, "HOME": str(tmp_path), "OS": "Windows_NT",
           "XDG_DATA_HOME": str(tmp_path / "none")}
    done = subprocess.run(["sh", str(LAUNCHER), "poll", "x"], env=env, capture_output=True,
                          text=True, timeout=30)
    assert json.loads(done.stdout)["error"]["code"] == "runtime_missing"


def test_the_sparring_command_is_the_entry_point_tested_here() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'sparring = "sparring.__main__:main"' in text


def test_only_windows_is_refused() -> None:
    assert not any(host.native_windows(p) for p in ("linux", "darwin", "freebsd14"))
    assert all(host.native_windows(p) for p in ("win32", "cygwin", "msys"))
