"""Run the test suite from nothing: `python3 tests/run.py [pytest arguments]`.

Works whatever kind of python3 runs it (standard library only, Python 3.10+): it makes a
project-local virtual environment, `.venv/`, installs the package and its test tools into it
(`pip install -e '.[test]'`, and the runtime's dependencies as wheels into `.venv/wheels/`, for
the suite's install.py runs to take offline; again only when pyproject.toml changed, or the
last install did not finish), and runs pytest there,
two workers per core (pytest-xdist; `-n 0` runs in one process). So a distribution Python that
refuses `pip install` outside a virtual environment (externally-managed-environment, as on
current Debian, Ubuntu and Homebrew) is fine.

A Python without `ensurepip` (Debian/Ubuntu without the python3-venv package) cannot put pip
into a virtual environment. The tests need that, and so does install.py, which makes one for the
skills' runtime; so then it stops at once and says what to install, or to run this file with
another Python. `SPARRING_TEST_VENV` names another folder for the environment.

`python3 tests/run.py --prepare` makes the environment and stops there, running no test:
.ci/run makes it so while npm installs the real binaries beside it.
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
WHEELS = "wheels"  # in the environment: the runtime's dependencies, for install.py offline
PREPARE = "--prepare"  # the only argument: make the environment, run no test
# The installed package's own dependencies, without the optional ones (`extra == ...`).
_REQUIREMENTS = ("from importlib.metadata import requires\n"
                 "print(*(r for r in requires('sparring') or [] if 'extra ==' not in r), "
                 "sep='\\n')")
NO_ENSUREPIP = (
    "{python} has no ensurepip, so it cannot put pip into a virtual environment; the tests "
    "need one, and so does install.py (for the skills' runtime). Install Python's venv "
    "support (Debian/Ubuntu: `sudo apt install python3-venv`, or python3.X-venv for the "
    "version `python3 --version` names), or run this file with another Python 3.10+: "
    "`/path/to/python3 tests/run.py`"
)


class SetupFailed(Exception):
    """The environment could not be made; the message says what to do."""


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 10):  # noqa: UP036 (any python3 may run this file)
        print(f"sparring's tests need Python 3.10 or newer; this is {sys.version.split()[0]}",
              file=sys.stderr)
        return 1
    sys.path.insert(0, str(ROOT / "scripts"))
    from sparring import host  # standard library only

    if host.native_windows():
        print(f"tests/run.py: {host.NATIVE_WINDOWS}", file=sys.stderr)
        return 1
    venv = Path(os.environ.get("SPARRING_TEST_VENV") or ROOT / ".venv")
    try:
        python = prepare(venv)
    except SetupFailed as exc:
        print(f"tests/run.py: {exc}", file=sys.stderr)
        return 1
    if argv == [PREPARE]:
        return 0
    return subprocess.call([str(python), "-m", "pytest", *parallel(argv), *argv], cwd=ROOT)


def parallel(argv: list[str]) -> list[str]:
    """Two pytest workers per core (pytest-xdist), unless the arguments choose otherwise: the
    suite is mostly waiting on subprocesses (codex, git, Claude Code, a turn's start window),
    so one worker per core left a third of two cores idle (5.3 min; with two, 4.0 min)."""
    chosen = any(a in ("-n", "--numprocesses", "--pdb") or a.startswith(("-n", "--numprocesses="))
                 for a in argv) or "no:xdist" in argv
    workers = 2 * (os.cpu_count() or 1)
    return [] if chosen else ["-n", str(workers), "--dist", "worksteal"]


def prepare(venv: Path) -> Path:
    """The environment's python, made and installed as needed."""
    python = venv / "bin" / "python"
    if not python.exists():
        create(venv)
    if not installed(venv):
        say(f"installing sparring and its test tools into {venv}")
        (venv / STAMP).unlink(missing_ok=True)  # until both steps below are done
        run([str(python), "-m", "pip", "install", "-q", "-e", f"{ROOT}[test]"],
            "pip could not install the package and its test tools (its output is above)")
        fetch_wheels(python, venv / WHEELS)
        (venv / STAMP).write_text(fingerprint(), encoding="utf-8")
    return python


def installed(venv: Path) -> bool:
    """Whether `venv` holds what this pyproject.toml and interpreter need, wheels included
    (the stamp is written only once the install and the wheels are done; an environment an
    older tests/run.py made has no wheels)."""
    stamp = venv / STAMP
    return (stamp.is_file() and stamp.read_text(encoding="utf-8") == fingerprint()
            and (venv / WHEELS).is_dir())


def fetch_wheels(python: Path, wheels: Path) -> None:
    """A wheel of each of the runtime's dependencies (pyproject.toml's, as the installed
    package names them) into `wheels`: the suite's install.py runs take them from there, with
    no index (tests/support/installing.py), so no test reaches the network, nor waits on it."""
    shutil.rmtree(wheels, ignore_errors=True)
    listed = subprocess.run([str(python), "-c", _REQUIREMENTS], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, check=False)
    if listed.returncode != 0:
        raise SetupFailed(f"could not read sparring's dependencies:\n{listed.stderr.strip()}")
    wanted = listed.stdout.splitlines()
    if wanted:
        run([str(python), "-m", "pip", "wheel", "-q", "-w", str(wheels), *wanted],
            "pip could not fetch the runtime's dependencies (its output is above)")
    wheels.mkdir(exist_ok=True)


def create(venv: Path) -> None:
    if not ensurepip_available():
        raise SetupFailed(NO_ENSUREPIP.format(python=sys.executable))
    say(f"creating a virtual environment in {venv}")
    done = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)  # half made: the next run starts over
        raise SetupFailed(f"`{sys.executable} -m venv {venv}` failed:\n"
                          f"{(done.stdout + done.stderr).strip()}")


def ensurepip_available() -> bool:
    """Whether `python -m venv` can put pip in (Debian ships ensurepip in python3-venv)."""
    return (Path(sysconfig.get_path("stdlib")) / "ensurepip" / "__main__.py").is_file()


def fingerprint() -> str:
    """Reinstall when the dependencies or the interpreter change."""
    pyproject = (ROOT / "pyproject.toml").read_bytes()
    return f"{hashlib.sha256(pyproject).hexdigest()} {sys.version.split()[0]} {ROOT}\n"


def run(argv: list[str], failure: str) -> None:
    if subprocess.call(argv, stdin=subprocess.DEVNULL) != 0:
        raise SetupFailed(failure)


def say(text: str) -> None:
    print(f"tests/run.py: {text}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
