"""Every command the README tells a user to type is run by a test.

The README's commands are its ```sh blocks, line by line, and the lines typed into Claude Code
(fenced lines that start with `/`). Each one is either run here, in a sandbox, exactly as the
README writes it (only the placeholders filled in), or named with the test that runs it, or
says honestly why no test can run it. A command added to the README without one of these
fails `test_every_readme_command_is_accounted_for`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.gitrepo import git_env
from support.installing import copy_runtime, make_project

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FAKE_BIN = ROOT / "tests" / "support" / "bin"

RUN_HERE = "run here"
# Run by another test (file::function), or not runnable by a test, and why.
ELSEWHERE = {
    "npm install -g @openai/codex":
        "not run by a test: it installs from the npm registry; .ci/run installs the same "
        "package, pinned (@openai/codex@0.169.0), and the integration tests drive it",
    "codex login":
        "tests/integration/test_runner_real_codex.py::"
        "test_doctor_tells_whether_the_real_codex_is_logged_in_and_the_fake_agrees "
        "(the browser sign-in needs the network; that test logs the real codex in with a key "
        "and reads `codex login status`, as doctor does)",
    "claude":
        "tests/integration/test_workflows.py::test_a_whole_workflow_runs_hands_free "
        "(the interactive session cannot be typed into here; the same skills run headless in "
        "the real Claude Code)",
    "/think-about Should the session store move from Redis to SQLite?":
        "tests/integration/test_workflows.py::test_a_whole_workflow_runs_hands_free "
        "(scenario think-about-consensus types exactly this)",
    'claude -p "/think-about --unattended Should the session store move from Redis to SQLite?" '
    "--output-format json":
        "tests/integration/test_workflows.py::"
        "test_the_readmes_headless_command_runs_a_whole_debate",
    "/plugin marketplace add <owner>/<repo>":
        "tests/integration/test_claude_code.py::test_plugin_validate_passes (adding a "
        "marketplace fetches the repository over the network; the manifests it reads are "
        "validated by the real Claude Code)",
    "/plugin install sparring@sparring":
        "tests/integration/test_claude_code.py::test_plugin_validate_passes (as above)",
    "python3 tests/run.py":
        "tests/test_repo.py::test_ci_runs_exactly_the_readme_test_command (CI runs it "
        "verbatim: it is how the whole suite runs; tests/test_from_nothing.py covers its "
        "fallbacks)",
    "export SPARRING_SANDBOX=workspace-write":
        "tests/test_sandbox.py::test_the_readmes_two_ways_to_allow_a_wider_sandbox",
    "mkdir -p ~/.config/sparring && printf 'sandbox: workspace-write\\n' > "
    "~/.config/sparring/config.yaml":
        "tests/test_sandbox.py::test_the_readmes_two_ways_to_allow_a_wider_sandbox",
    ".venv/bin/python docs/generate.py":
        "tests/test_docs.py::test_the_generated_tables_match_the_code",
}
HERE = {
    "git clone <url-of-this-repository> sparring && cd sparring",
    "python3 install.py --project /path/to/your/repo",
    "printenv OPENAI_API_KEY | codex login --with-api-key",
    "cd /path/to/your/repo",
    ".claude/skills/think-about/sparring doctor",
    "sparring doctor",
}


def readme_commands(section: str | None = None) -> list[str]:
    """The README's commands in order (of one `## section` when given), each once."""
    text = README.read_text(encoding="utf-8")
    if section is not None:
        text = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    found: list[str] = []
    for lang, body in re.findall(r"^ *```(\w*)\n(.*?)^ *```", text, re.S | re.M):
        for raw in body.splitlines():
            line = raw.strip()
            if lang == "sh":
                line = re.sub(r"\s+#.*$", "", line)
            elif not line.startswith("/") or lang in ("markdown", "yaml"):
                continue
            if line and line not in found:
                found.append(line)
    return found


def test_every_readme_command_is_accounted_for() -> None:
    commands = readme_commands()
    assert "python3 install.py --project /path/to/your/repo" in commands
    unaccounted = [c for c in commands if c not in HERE and c not in ELSEWHERE]
    assert not unaccounted, f"README commands no test runs: {unaccounted}"
    assert not (HERE & set(ELSEWHERE))
    stale = [c for c in [*HERE, *ELSEWHERE] if c not in commands]
    assert not stale, f"no longer in the README: {stale}"


@pytest.mark.parametrize("command", sorted(ELSEWHERE))
def test_the_test_named_for_a_command_exists(command: str) -> None:
    named = ELSEWHERE[command]
    if named.startswith("not run by a test"):
        assert "@openai/codex@0.169.0" in (ROOT / ".ci" / "run").read_text()
        return
    path, function = named.split(" ", 1)[0].split("::")
    assert re.search(rf"^def {function}\(", (ROOT / path).read_text(), re.M), named


def test_the_install_walkthrough_runs_from_a_fresh_clone(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    project = make_project(tmp_path / "your-repo")
    data = copy_runtime(tmp_path_factory, tmp_path / "data")
    home = tmp_path / "home-of-a-newcomer"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    python_bin = Path(sys.executable).parent  # python3 and sparring, as after `pip install .`
    env = git_env({
        "PATH": f"{FAKE_BIN}:{python_bin}:/usr/bin:/bin", "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"), "XDG_DATA_HOME": str(data),
        "OPENAI_API_KEY": "sk-newcomer-0123456789", "LANG": "C.UTF-8",
    })
    walkthrough = [*readme_commands("Install"), "sparring doctor"]
    script = [c.replace("<url-of-this-repository>", str(ROOT))
               .replace("/path/to/your/repo", str(project))
              for c in walkthrough if c in HERE]
    assert len(script) == len(HERE), script

    done = subprocess.run(["bash", "-ec", "\n".join(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False,
                          stdin=subprocess.DEVNULL)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "sparring" / "install.py").is_file()
    assert (project / ".claude" / "skills" / "think-about" / "SKILL.md").is_file()
    doctors = [json.loads(line) for line in done.stdout.splitlines()
               if line.startswith('{"schema_version"')]
    assert len(doctors) == 2, done.stdout
    for out in doctors:  # the installed launcher's, then the pip-installed command's
        assert out["ready"] is True, out
        login = next(c for c in out["checks"] if c["name"] == "codex_login")
        assert login["detail"].startswith("API key configured - sk-newco***56789")
    assert os.access(project / ".claude" / "skills" / "think-about" / "sparring", os.X_OK)
