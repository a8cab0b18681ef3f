"""Run the test suite from nothing: `python3 tests/run.py [pytest arguments]`.

Works whatever kind of python3 runs it (standard library only, Python 3.10+): it makes a
project-local virtual environment, `.venv/`, installs the package and its test tools into it
(`pip install -e '.[test]'`, again only when pyproject.toml changed), and runs pytest there.
So a distribution Python that refuses `pip install` outside a virtual environment
(externally-managed-environment, as on current Debian, Ubuntu and Homebrew) is fine.

A Python without `ensurepip` (Debian/Ubuntu without the python3-venv package) cannot put pip
into a new virtual environment. Then the environment is made without pip and this Python's
own pip installs into it (`pip --python`); when there is no pip either, it stops with what to
install. `SPARRING_TEST_VENV` names another folder for the environment.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAMP = ".sparring-test-stamp"  # what the environment was last installed for
NO_VENV_HINT = (
    "install the venv module (Debian/Ubuntu: `sudo apt install python3-venv`), or pip "
    "(`sudo apt install python3-pip`), or run this command with another Python 3.10+"
)


class SetupFailed(Exception):
    """The environment could not be made; the message says what to do."""


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 10):  # noqa: UP036 (any python3 may run this file)
        print(f"sparring's tests need Python 3.10 or newer; this is {sys.version.split()[0]}",
              file=sys.stderr)
        return 1
    venv = Path(os.environ.get("SPARRING_TEST_VENV") or ROOT / ".venv")
    try:
        python = prepare(venv)
    except SetupFailed as exc:
        print(f"tests/run.py: {exc}", file=sys.stderr)
        return 1
    return subprocess.call([str(python), "-m", "pytest", *argv], cwd=ROOT)


def prepare(venv: Path) -> Path:
    """The environment's python, made and installed as needed."""
    python = venv / "bin" / "python"
    pip = _pip_for(venv, python) if python.exists() else create(venv)
    wanted = _fingerprint()
    stamp = venv / STAMP
    if not stamp.is_file() or stamp.read_text(encoding="utf-8") != wanted:
        say(f"installing sparring and its test tools into {venv}")
        run([*pip, "install", "-q", "-e", f"{ROOT}[test]"], "pip could not install the "
            "package and its test tools (its output is above)")
        stamp.write_text(wanted, encoding="utf-8")
    return python


def create(venv: Path) -> list[str]:
    """Make the environment; returns the pip command that installs into it."""
    say(f"creating a virtual environment in {venv}")
    if ensurepip_available():
        done = _quiet([sys.executable, "-m", "venv", str(venv)])
        if done.returncode == 0:
            return [str(venv / "bin" / "python"), "-m", "pip"]
        shutil.rmtree(venv, ignore_errors=True)  # half made: start over without pip
    if not system_pip_available():
        raise SetupFailed(f"{sys.executable} can make no virtual environment with pip in it "
                          f"(no ensurepip) and has no pip of its own: {NO_VENV_HINT}")
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)],
        f"{sys.executable} -m venv could not create {venv}")
    (venv / "pip-from-outside").write_text(sys.executable + "\n", encoding="utf-8")
    return [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]


def _pip_for(venv: Path, python: Path) -> list[str]:
    """How to install into an existing environment (one made without pip keeps using the
    Python that made it)."""
    outside = venv / "pip-from-outside"
    if outside.is_file():
        return [outside.read_text(encoding="utf-8").strip(), "-m", "pip", "--python",
                str(python)]
    return [str(python), "-m", "pip"]


def ensurepip_available() -> bool:
    """Whether `python -m venv` can put pip in (Debian ships ensurepip in python3-venv)."""
    return (Path(sysconfig.get_path("stdlib")) / "ensurepip" / "__main__.py").is_file()


def system_pip_available() -> bool:
    return _quiet([sys.executable, "-m", "pip", "--version"]).returncode == 0


def _fingerprint() -> str:
    """Reinstall when the dependencies or the interpreter change."""
    pyproject = (ROOT / "pyproject.toml").read_bytes()
    return f"{hashlib.sha256(pyproject).hexdigest()} {sys.version.split()[0]} {ROOT}\n"


def _quiet(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          check=False)


def run(argv: list[str], failure: str) -> None:
    if subprocess.call(argv, stdin=subprocess.DEVNULL) != 0:
        raise SetupFailed(failure)


def say(text: str) -> None:
    print(f"tests/run.py: {text}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
