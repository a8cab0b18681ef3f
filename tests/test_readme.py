"""Every command the README tells a user to type runs as written, or is run by a named test.

The README's commands are its ```sh blocks, line by line, the lines typed into Claude Code
(fenced lines that start with `/`), and the commands it names in running text (a code span that
starts with a program a user types: `python3 …`, `sparring …`, `codex …`, `/think-about …`).
Each one is either run here, in a sandbox, exactly as the README writes it (the placeholders
filled in), in the README's order, or named with the test that runs it, or says honestly why no
test can run it. A command added to the README without one of these fails
`test_every_readme_command_is_accounted_for`.
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
QUESTION = "Should the session store move from Redis to SQLite?"

# Run by another test (file::function), or not runnable by a test, and why.
ELSEWHERE = {
    "npm install -g @openai/codex":
        "not run by a test: it installs from the npm registry; .ci/run installs the same "
        "package, pinned (@openai/codex@0.171.0), and the integration tests drive it",
    "npm install -g @anthropic-ai/claude-code":
        "not run by a test: it installs from the npm registry; .ci/run installs the same "
        "package, pinned (@anthropic-ai/claude-code@2.1.332), and the integration tests drive it",
    "codex login":
        "tests/integration/test_runner_real_codex.py::"
        "test_doctor_tells_whether_the_real_codex_is_logged_in_and_the_fake_agrees "
        "(the browser sign-in needs the network; that test logs the real codex in with a key "
        "and reads `codex login status`, as doctor does)",
    "cd /path/to/your/repo && claude":
        "tests/integration/test_workflows.py::test_a_whole_workflow_runs_hands_free "
        "(the interactive session cannot be typed into here; the same skills run headless in "
        "the real Claude Code)",
    f"/think-about {QUESTION}":
        "tests/integration/test_workflows.py::test_a_whole_workflow_runs_hands_free "
        "(scenario think-about-consensus types exactly this)",
    f'claude -p "/think-about --unattended {QUESTION}" --output-format json':
        "tests/integration/test_workflows.py::"
        "test_the_readmes_headless_command_runs_a_whole_debate",
    "python3 install.py --project /path/to/your/repo && cd /path/to/your/repo && "
    f'claude -p "/think-about --unattended {QUESTION}"':
        "tests/integration/test_workflows.py::"
        "test_the_readmes_first_command_installs_the_pack_and_runs_a_debate",
    "sparring status --open":
        "tests/integration/test_workflows.py::test_a_whole_workflow_runs_hands_free "
        "(scenario think-about-resumed: a new conversation runs it and goes on from its "
        "`next`), and tests/test_resume.py for every workflow's next step",
    "/plugin marketplace add <this-repository-url>":
        "tests/integration/test_plugin.py::"
        "test_the_plugin_from_its_marketplace_makes_its_runtime_on_first_use (`claude plugin "
        "marketplace add`, the same step outside a session, with a local marketplace: the "
        "repository's address needs the network)",
    "/plugin install sparring@sparring":
        "tests/integration/test_plugin.py::"
        "test_the_plugin_from_its_marketplace_makes_its_runtime_on_first_use (`claude plugin "
        "install sparring@sparring`, then a skill's first call makes the runtime)",
    "sparring doctor":
        "tests/test_install.py::"
        "test_the_sparring_command_is_linked_for_a_person_and_goes_with_the_runtime",
    "sparring status":
        "tests/test_for_people.py::test_status_on_a_terminal_is_a_table_and_for_a_program_json",
    "python3 tests/run.py":
        "tests/test_repo.py::test_ci_runs_exactly_the_readme_test_command (CI runs it "
        "verbatim: it is how the whole suite runs; tests/test_from_nothing.py covers its "
        "fallbacks)",
    "export SPARRING_SANDBOX=workspace-write":
        "tests/test_sandbox.py::test_the_readmes_two_ways_to_allow_a_wider_sandbox",
    "mkdir -p ~/.config/sparring && printf 'sandbox: workspace-write\\n' > "
    "~/.config/sparring/config.yaml":
        "tests/test_sandbox.py::test_the_readmes_two_ways_to_allow_a_wider_sandbox",
}
# Run here, in this order: a newcomer's first hour, Codex first.
HERE = [
    "printenv OPENAI_API_KEY | codex login --with-api-key",
    "git clone <this-repository-url> ~/sparring && python3 ~/sparring/install.py --project "
    "/path/to/your/repo",
    "cd /path/to/your/repo && sparring doctor",
    "~/.local/bin/sparring doctor",
    "python3 ~/sparring/install.py --project /path/to/your/repo --check",
    "python3 ~/sparring/install.py --project /path/to/your/repo --uninstall",
]
# What a user types, named in running text: these programs, or a skill.
TYPED = ("python3 ", "sparring ", "~/.local/bin/sparring ", "codex ", "claude ", "git ",
         "npm ", "cd ", "printenv ")


def sections(text: str) -> dict[str, str]:
    """`## heading` -> its text (fenced blocks never hold a `## ` line: a test checks)."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def readme_commands(section: str | None = None) -> list[str]:
    """The README's commands in order (of one `## section` when given), each once."""
    text = README.read_text(encoding="utf-8")
    if section is not None:
        text = sections(text)[section]
    found: list[str] = []
    for block in re.split(r"(^ *```\w*\n.*?^ *```)", text, flags=re.S | re.M):
        fence = re.match(r" *```(\w*)\n(.*?)^ *```", block, re.S | re.M)
        if fence:
            lines = [_fenced(fence.group(1), raw.strip()) for raw in fence.group(2).splitlines()]
        else:
            lines = [span for span in re.findall(r"`([^`\n]+)`", block) if _typed(span)]
        found += [line for line in lines if line and line not in found]
    return found


def _fenced(lang: str, line: str) -> str:
    if lang == "sh":
        return re.sub(r"\s+#.*$", "", line)
    return line if line.startswith("/") and lang not in ("markdown", "yaml") else ""


def _typed(span: str) -> bool:
    return span.startswith(TYPED) or bool(re.match(r"/[a-z-]+ [A-Z]", span))


def test_every_readme_command_is_accounted_for() -> None:
    commands = readme_commands()
    assert HERE[1] in commands
    unaccounted = [c for c in commands if c not in HERE and c not in ELSEWHERE]
    assert not unaccounted, f"README commands no test runs: {unaccounted}"
    assert not (set(HERE) & set(ELSEWHERE))
    stale = [c for c in [*HERE, *ELSEWHERE] if c not in commands]
    assert not stale, f"no longer in the README: {stale}"
    assert [c for c in commands if c in HERE] == HERE, "run here in the README's own order"


def test_the_readme_is_for_users_first() -> None:
    """Short; what sparring is before how to install it; Codex before the pack; the
    developers' matters in docs/, linked; no heading hides in a fenced block."""
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) <= 12 * 1024
    order = list(sections(text))
    assert order.index("What you need") < order.index("Install") < \
        order.index("Your first debate") < order.index("Troubleshooting")
    assert text.index("npm install -g @openai/codex") < text.index("python3 ~/sparring/install.py")
    for doc in ("docs/install.md", "docs/development.md", "docs/performance.md",
                "docs/runner.md", "docs/security.md"):
        assert f"]({doc}" in text and (ROOT / doc).is_file(), doc
    for fenced in re.findall(r"^ *```\w*\n(.*?)^ *```", text, re.S | re.M):
        assert not re.search(r"^#+ ", fenced, re.M), fenced
    prose = re.sub(r"^ *```\w*\n.*?^ *```", "", text, flags=re.S | re.M)
    split = [line for line in prose.splitlines() if line.count("`") % 2]
    assert not split, f"a code span across two lines is no command to copy: {split}"
    two = sections(text)["Two commands for a fresh machine"]
    assert "main job" in two and "test suite" in two and "tests/run.py" in two


@pytest.mark.parametrize("command", sorted(ELSEWHERE))
def test_the_test_named_for_a_command_exists(command: str) -> None:
    named = ELSEWHERE[command]
    if named.startswith("not run by a test"):
        pinned = re.search(r"\((@[\w/.-]+@[\d.]+)\)", named)
        assert pinned and pinned.group(1) in (ROOT / ".ci" / "run").read_text(), named
        return
    path, function = named.split(" ", 1)[0].split("::")
    assert re.search(rf"^def {function}\(", (ROOT / path).read_text(), re.M), named


def test_a_newcomers_commands_run_as_written_from_a_fresh_clone(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Codex logged in first, then the one install command, doctor as a person types it
    (the `sparring` command install.py linked into ~/.local/bin, on a newcomer's PATH as most
    shells set it), the update check, and the uninstall, in one shell, in the README's order."""
    project = make_project(tmp_path / "your-repo")
    data = copy_runtime(tmp_path_factory, tmp_path / "data")
    home = tmp_path / "home-of-a-newcomer"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    python_bin = Path(sys.executable).parent  # a python3 with nothing of sparring's needs
    env = git_env({
        "PATH": f"{home}/.local/bin:{FAKE_BIN}:{python_bin}:/usr/bin:/bin", "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"), "XDG_DATA_HOME": str(data),
        "OPENAI_API_KEY": "sk-newcomer-0123456789", "LANG": "C.UTF-8",
    })
    script = [c.replace("<this-repository-url>", str(ROOT))
               .replace("/path/to/your/repo", str(project)) for c in HERE]
    marks = [f"echo '>>> {i}'" for i in range(len(script))]

    done = subprocess.run(["bash", "-ec", "\n".join(f"{m}\n{c}" for m, c in
                                                   zip(marks, script, strict=True))],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                          check=False, stdin=subprocess.DEVNULL)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = dict(zip(HERE, re.split(r"^>>> \d+\n", done.stdout, flags=re.M)[1:], strict=True))
    installed = out[HERE[1]].rstrip().splitlines()
    assert installed[-1].startswith(f"sparring 0.1.0 installed in {project}/.claude/skills; "), \
        installed
    assert (home / "sparring" / "install.py").is_file()
    for command in HERE[2:4]:
        doctor = json.loads(out[command])  # stdout is not a terminal here: JSON
        assert doctor["ready"] is True, (command, doctor["hints"])
        login = next(c for c in doctor["checks"] if c["name"] == "codex_login")
        assert login["detail"].startswith("API key configured - sk-newco***56789")
        skills = next(c for c in doctor["checks"] if c["name"] == "skills")
        assert f"project {project}/.claude/skills: " in skills["detail"]
    assert out[HERE[4]].rstrip().splitlines()[-1].startswith("up to date: ")
    removed = out[HERE[5]]
    assert f"sparring removed from {project}/.claude/skills" in removed
    assert not (project / ".claude" / "skills").exists()
    assert not (project / ".sparring").exists(), "nothing of ours was left in the project"
    assert os.access(home / "sparring" / "skills" / "think-about" / "sparring", os.X_OK)


def test_the_rule_counts_the_docs_give_are_the_installs() -> None:
    """60 allow and 4 ask rules for the four skills, as install.py writes them (layout.py)."""
    from sparring.installer import layout

    folders = [Path("/p/.claude/skills") / name for name in sorted(layout.SKILL_VERBS)]
    allow, ask = len(layout.rules(folders)), len(layout.ask_rules(folders))
    verbs = sum(len(layout.verbs(folder.name)) for folder in folders)
    assert f"({allow} allow rules and {ask} ask rules for the four skills" in \
        " ".join(README.read_text(encoding="utf-8").split())
    install = " ".join((ROOT / "docs" / "install.md").read_text(encoding="utf-8").split())
    assert f"**{allow} `permissions.allow` rules** ({verbs} launcher-and-verb rules" in install
    assert f"**{ask} `permissions.ask` rules**" in install
