"""The repository keeps its promises: two commands, the layout, clean code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_test_command() -> str:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    commands = {b.strip() for b in blocks if "tests/run.py" in b}
    assert len(commands) == 1, "the README names exactly one test command"
    return commands.pop()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_test_command() in ci
    assert ci[-1] == readme_test_command(), "the test command is the last thing CI runs"
    assert "set -euo pipefail" in ci


def test_the_ci_workflow_runs_it_on_linux_and_macos() -> None:
    """The public repository's CI runs `.ci/run`, which ends in the README's test command, on
    each supported system."""
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    [job] = workflow["jobs"].values()
    systems = {entry["os"].split("-")[0] for entry in job["strategy"]["matrix"]["include"]}
    assert systems == {"ubuntu", "macos"}
    assert job["runs-on"] == "${{ matrix.os }}"
    assert [step["run"] for step in job["steps"] if "run" in step] == [".ci/run"]


def test_layout_of_the_design_card() -> None:
    for name in ("skills", "scripts", "templates", "references", "tests", "pyproject.toml",
                 "README.md", ".ci/run"):
        assert (ROOT / name).exists(), name


def test_every_package_is_one_the_installed_runtime_gets() -> None:
    """pyproject.toml lists the packages a (non-editable) install copies: one missing is an
    ImportError in the runtime the skills run, and in no test that imports from the clone."""
    text = (ROOT / "pyproject.toml").read_text()
    listed = re.search(r"^packages = \[(.*?)\]", text, re.S | re.M)
    assert listed is not None
    packages = set(re.findall(r'"([\w.]+)"', listed.group(1)))
    scripts = ROOT / "scripts"
    found = {".".join(p.parent.relative_to(scripts).parts)
             for p in (scripts / "sparring").rglob("__init__.py")}
    assert packages - {"sparring.templates"} == found


def test_ruff_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "install.py", "scripts", "tests",
                           "bench", "docs"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
