"""install.py: the skills as plain marked files, the private runtime, idempotence, uninstall.

Creating a virtual environment and pip installing takes seconds, so one runtime is made per
session by `install.py --runtime-only` (which is itself the proof that install.py creates a
runtime from nothing) and shared where a test only needs a runtime that is up to date. A test
that removes or rebuilds the runtime works on a copy of it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparring import __version__
from sparring.quoting import shell_word
from sparring.workflows import registry
from support.binaries import missing
from support.installing import (
    BARE_PATH,
    INSTALL,
    MARKER,
    OFFLINE,
    ROOT,
    SKILLS,
    WHEELS,
    copy_runtime,
    install_env,
    log_in_codex,
    make_project,
    run_install,
    runtime_of,
    runtime_state,
    shared_runtime,
    with_claude,
)

Snapshot = dict[str, tuple[str, int, int]]


def snapshot(top: Path) -> Snapshot:
    """Every file and link under `top`: content hash, mtime and mode."""
    found = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            digest = "" if path.is_dir() or path.is_symlink() else \
                hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(top))] = (digest, info.st_mtime_ns, info.st_mode)
    return found


def source_files(skill: str) -> dict[str, Path]:
    """The repo's files of a skill, links resolved, as install.py should copy them."""
    top = ROOT / "skills" / skill
    found = {}
    for folder, _, files in os.walk(top, followlinks=True):
        for name in files:
            path = Path(folder) / name
            found[path.relative_to(top).as_posix()] = path.resolve()
    return found


def marker_of(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / MARKER).read_text())
    return data


def code_of(text: str) -> str:
    fenced = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return "\n".join(fenced + inline)


def named_commands(text: str) -> set[tuple[str, ...]]:
    """`sparring VERB [WORD]` in a document's code; WORD is a subcommand for groups and is
    harmless otherwise (click shows the command's help whatever argument precedes --help)."""
    found = re.findall(r"(?:^|[\s/])sparring ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?", code_of(text),
                       re.M)
    return {(verb, sub) if sub else (verb,) for verb, sub in found}


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_runtime(tmp_path_factory)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


@pytest.fixture
def env(runtime: Path, tmp_path: Path) -> dict[str, str]:
    made = with_claude(install_env(runtime), tmp_path / "claude-bin")
    log_in_codex(made)  # so the final doctor can say ready
    return made


@pytest.fixture
def own_runtime(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return copy_runtime(tmp_path_factory, tmp_path / "data")


@pytest.fixture
def own_env(own_runtime: Path, tmp_path: Path) -> dict[str, str]:
    """As `env`, with a runtime of this test's own: for a test that compares the runtime's
    files before and after, since every other worker's install rewrites the shared one's
    runtime.json."""
    made = with_claude(install_env(own_runtime), tmp_path / "claude-bin")
    log_in_codex(made)
    return made


def installed(project: Path, env: dict[str, str]) -> Path:
    done = run_install("--project", project, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return project / ".claude" / "skills"


# -- install -------------------------------------------------------------------------------------


def test_the_repo_has_the_four_skills() -> None:
    assert set(SKILLS) == set(registry.SKILLS)  # one skill per workflow, and no other
    assert {"dual-model", "think-about"} <= set(SKILLS)


def test_installs_each_skill_as_plain_files_with_a_marker(project: Path,
                                                          env: dict[str, str]) -> None:
    done = run_install("--project", project, env=env)

    assert done.returncode == 0, done.stdout + done.stderr
    target = project / ".claude" / "skills"
    assert sorted(p.name for p in target.iterdir()) == SKILLS
    for skill in SKILLS:
        folder = target / skill
        assert re.search(rf"^install +{re.escape(str(folder))}", done.stdout, re.M)
        expected = source_files(skill)
        copied = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*")
                  if not p.is_dir() and p.name != MARKER}
        assert set(copied) == set(expected)
        for rel, path in copied.items():
            assert not path.is_symlink() and path.is_file(), f"{path} is not a plain file"
            assert path.read_bytes() == expected[rel].read_bytes()
        assert os.access(folder / "sparring", os.X_OK), "the launcher stays executable"
        marker = marker_of(folder)
        assert (marker["tool"], marker["skill"], marker["version"], marker["source"]) == (
            "sparring", skill, __version__, str(ROOT))
        assert {rel: f["sha256"] for rel, f in marker["files"].items()} == {
            rel: hashlib.sha256(p.read_bytes()).hexdigest() for rel, p in copied.items()}
        assert marker["files"]["sparring"]["mode"] == "755"
    assert done.stdout.rstrip().splitlines()[-1] == (
        f"sparring {__version__} installed in {target}; doctor: ready. Next: `cd {project} && "
        "claude`, then type /think-about <your question>"), done.stdout


def test_every_named_file_and_command_runs_through_the_installed_launcher(
        project: Path, runtime: Path, env: dict[str, str], tmp_path: Path) -> None:
    target = installed(project, env)
    # Nothing of ours on this PATH, and the system Python is not the one that runs.
    assert shutil.which("sparring", path=BARE_PATH) is None
    bare = {"PATH": BARE_PATH, "HOME": str(tmp_path / "bare-home"),
            "XDG_DATA_HOME": str(runtime)}
    for skill in SKILLS:
        folder = target / skill
        docs = [folder / "SKILL.md", *sorted((folder / "references").glob("*.md"))]
        commands: set[tuple[str, ...]] = set()
        for doc in docs:
            text = doc.read_text()
            for name in re.findall(r"`references/([\w.-]+\.md)`", text):
                assert (folder / "references" / name).is_file(), f"{doc} names {name}"
            commands |= named_commands(text)
        assert commands, f"{skill} names no runner command"
        for command in sorted(commands):
            done = subprocess.run(["env", "-i", *(f"{k}={v}" for k, v in bare.items()),
                                   str(folder / "sparring"), *command, "--help"],
                                  cwd=project, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, f"{skill}: sparring {' '.join(command)}: {done}"
            assert "Usage: " in done.stdout


def test_a_codex_turn_runs_through_the_installed_launcher(project: Path, runtime: Path,
                                                         env: dict[str, str],
                                                         tmp_path: Path) -> None:
    """The runner's background process runs on the runtime too (the fake codex answers)."""
    launcher = installed(project, env) / SKILLS[0] / "sparring"
    bare = ["env", "-i", f"PATH={ROOT / 'tests' / 'support' / 'bin'}:{BARE_PATH}",
            f"HOME={tmp_path}", f"XDG_DATA_HOME={runtime}"]

    def run(*args: str, stdin: str = "") -> dict[str, Any]:
        done = subprocess.run([*bare, str(launcher), *args], cwd=project, input=stdin,
                              capture_output=True, text=True, timeout=60)
        out: dict[str, Any] = json.loads(done.stdout)
        assert out["ok"] is True, out
        return out

    session = run("init", "--skill", "deep-discussion")["session"]
    run("start", session, stdin="Is this installed runtime enough for a turn?")
    waited = run("wait", session, "--timeout", "30")
    run("stop", session)
    assert waited["status"] == "completed", waited
    assert waited["review"]["text"]


def test_the_runtime_brings_its_own_dependencies(runtime: Path, tmp_path: Path) -> None:
    venv = runtime_of(runtime).venv
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    probe = ("import click, jinja2, psutil, yaml, sparring; "
             "print('\\n'.join(m.__file__ for m in (click, jinja2, psutil, yaml, sparring)))")
    done = subprocess.run(["env", "-i", f"PATH={BARE_PATH}", f"HOME={tmp_path}",
                           str(venv / "bin" / "python"), "-I", "-c", probe],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for module_file in done.stdout.split():
        assert module_file.startswith(str(venv)), module_file


def test_a_second_run_changes_nothing_and_says_so(project: Path, own_runtime: Path,
                                                  own_env: dict[str, str]) -> None:
    env = own_env
    target = installed(project, env)
    before = snapshot(project), snapshot(own_runtime)

    done = run_install("--project", project, env=env)
    as_json = run_install("--project", project, "--json", env=env)

    assert done.returncode == 0, done.stderr
    assert (snapshot(project), snapshot(own_runtime)) == before
    actions = [line.split()[0] for line in done.stdout.splitlines()
               if not line.startswith(("doctor", "nothing"))]
    # the runtime, the sparring command, the skills, the settings, and their note
    assert actions == ["unchanged"] * (len(SKILLS) + 3) + ["note"], done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith(
        f"nothing changed: sparring {__version__} is already installed in {target}; "
        "doctor: ready. Next: ")
    summary = json.loads(as_json.stdout)
    assert summary["ok"] is True and summary["changed"] is False
    assert {a["verb"] for a in summary["actions"]} == {"unchanged", "note"}
    assert summary["target"] == str(target)
    assert summary["doctor"]["ready"] is True


def test_dry_run_writes_nothing(tmp_path: Path, project: Path, own_runtime: Path,
                                own_env: dict[str, str]) -> None:
    env = own_env
    assert own_runtime.is_relative_to(tmp_path)  # so each snapshot below covers it
    fresh = install_env(tmp_path / "fresh-data")
    before = snapshot(tmp_path)

    done = run_install("--project", project, "--dry-run", env=fresh)

    assert done.returncode == 0, done.stderr
    assert snapshot(tmp_path) == before
    assert "would create runtime" in done.stdout
    for skill in SKILLS:
        assert re.search(rf"^would install +{project}/.claude/skills/{skill}\b", done.stdout,
                         re.M), done.stdout
    installed(project, env)
    before = snapshot(tmp_path)
    done = run_install("--project", project, "--uninstall", "--dry-run", env=env)
    assert done.returncode == 0, done.stderr
    assert snapshot(tmp_path) == before
    assert len(re.findall(r"^would remove +\S+/skills/", done.stdout, re.M)) == len(SKILLS)
    assert re.search(r"^would remove +\S+/settings.local.json +\(remove \d+ permission rule",
                     done.stdout, re.M), done.stdout


def test_without_codex_the_install_completes_and_says_what_next(project: Path,
                                                               runtime: Path) -> None:
    done = run_install("--project", project, env=install_env(runtime, PATH=BARE_PATH))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "doctor problem: codex: codex was not found on PATH" in done.stdout
    assert (project / ".claude" / "skills" / SKILLS[0] / "SKILL.md").is_file()
    assert done.stdout.rstrip().splitlines()[-1] == (
        f"sparring {__version__} installed in {project}/.claude/skills; next: install Codex: "
        "`npm install -g @openai/codex` (or set SPARRING_CODEX to it), then log it in: "
        "`codex login`")


def test_without_a_codex_login_the_install_completes_and_says_log_in(
        project: Path, runtime: Path, tmp_path: Path) -> None:
    env = with_claude(install_env(runtime), tmp_path / "claude-bin")  # the fake codex, no login

    done = run_install("--project", project, env=env)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "doctor problem: codex_login: Not logged in" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1] == (
        f"sparring {__version__} installed in {project}/.claude/skills; next: log Codex in: "
        "run `codex login` (a ChatGPT account) or `printenv OPENAI_API_KEY | codex login "
        "--with-api-key` (an API key)")


def test_user_install_goes_to_the_home_claude_folder(runtime: Path, env: dict[str, str],
                                                     tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])  # the fake home of conftest
    clone = make_project(tmp_path / "a-clone")  # run from a clone, as a user does
    before = snapshot(clone)
    done = run_install("--user", env=env, cwd=clone)

    assert done.returncode == 0, done.stdout + done.stderr
    for skill in SKILLS:
        assert marker_of(home / ".claude" / "skills" / skill)["skill"] == skill
    assert snapshot(clone) == before, "its doctor made no .sparring/inbox in the clone"
    done = run_install("--user", "--uninstall", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not (home / ".claude").exists(), "the folders install.py created are gone"


# -- foreign folders ----------------------------------------------------------------------------


def test_a_foreign_folder_of_the_same_name_is_refused_with_a_hint(project: Path,
                                                                  env: dict[str, str]) -> None:
    mine = project / ".claude" / "skills" / SKILLS[-1]
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("my own skill\n")
    before = snapshot(project)

    done = run_install("--project", project, env=env)

    assert done.returncode == 1
    assert str(mine) in done.stderr and "--force" in done.stderr
    assert snapshot(project) == before, "nothing changes when one folder is refused"
    done = run_install("--project", project, "--force", env=env)
    assert done.returncode == 0, done.stderr
    assert re.search(rf"^replace +{re.escape(str(mine))}", done.stdout, re.M)
    assert marker_of(mine)["skill"] == SKILLS[-1]


def test_force_replaces_a_link_without_touching_what_it_points_to(
        project: Path, env: dict[str, str], tmp_path: Path) -> None:
    elsewhere = tmp_path / "my-skills" / SKILLS[0]
    elsewhere.mkdir(parents=True)
    (elsewhere / "SKILL.md").write_text("mine\n")
    link = project / ".claude" / "skills" / SKILLS[0]
    link.parent.mkdir(parents=True)
    link.symlink_to(elsewhere)

    assert run_install("--project", project, env=env).returncode == 1
    done = run_install("--project", project, "--force", env=env)

    assert done.returncode == 0, done.stderr
    assert not link.is_symlink() and marker_of(link)["skill"] == SKILLS[0]
    assert (elsewhere / "SKILL.md").read_text() == "mine\n"


# -- uninstall ---------------------------------------------------------------------------------


def test_uninstall_leaves_nothing_of_ours_and_keeps_what_is_not_ours(
        project: Path, own_runtime: Path) -> None:
    env = install_env(own_runtime)
    skills = project / ".claude" / "skills"
    (skills / "my-skill").mkdir(parents=True)
    (skills / "my-skill" / "SKILL.md").write_text("a foreign skill\n")
    (project / ".claude" / "settings.json").write_text("{}\n")
    installed(project, env)
    (skills / SKILLS[0] / "NOTES.md").write_text("my notes in a folder of ours\n")
    theirs = {p: p.read_text() for p in (skills / "my-skill" / "SKILL.md",
                                         skills / SKILLS[0] / "NOTES.md",
                                         project / ".claude" / "settings.json")}
    # A plugin user of the same runtime (--runtime-only) keeps it while registered. (Run in
    # the project: here, the folder above holds the runtime, which the launcher refuses.)
    assert run_install("--runtime-only", env=env, cwd=project).returncode == 0
    done = run_install("--runtime-only", "--uninstall", env=env, cwd=project)
    assert done.returncode == 0 and "runtime still used by 1 other target" in done.stdout

    done = run_install("--project", project, "--uninstall", env=env)

    assert done.returncode == 0, done.stderr
    left = {p for p in (project / ".claude").rglob("*") if not p.is_dir()}
    assert left == set(theirs)
    assert all(path.read_text() == text for path, text in theirs.items())
    assert not list(project.rglob(MARKER))
    assert not (own_runtime / "sparring").exists(), "the last user took the runtime with it"
    assert "remove runtime" in done.stdout
    assert re.search(rf"kept 1 file.* {re.escape(str(skills / SKILLS[0]))}|"
                     rf"{re.escape(str(skills / SKILLS[0]))}.*kept 1 file", done.stdout)


def test_uninstall_twice_changes_nothing(project: Path, env: dict[str, str]) -> None:
    installed(project, env)
    assert run_install("--project", project, "--uninstall", env=env).returncode == 0
    before = snapshot(project)

    done = run_install("--project", project, "--uninstall", env=env)

    assert done.returncode == 0, done.stderr
    assert snapshot(project) == before
    assert not (project / ".claude").exists()
    assert done.stdout.rstrip().splitlines()[-1] == (
        f"nothing changed: sparring is not installed in {project}/.claude/skills")
    assert "runtime still used" in done.stdout  # the session's own --runtime-only user


# -- updates and the runtime ----------------------------------------------------------------------


@pytest.fixture
def clone(tmp_path: Path) -> Iterator[Path]:
    """A copy of this clone (links kept) that a test may edit."""
    dest = tmp_path / "clone"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("skills", "references", "scripts", "templates"):
        shutil.copytree(ROOT / name, dest / name, symlinks=True, ignore=ignore)
    for name in ("install.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    yield dest


def test_a_changed_source_updates_only_what_changed(project: Path, own_runtime: Path,
                                                    clone: Path) -> None:
    env = install_env(own_runtime)
    installer = clone / "install.py"
    assert run_install("--project", project, env=env, installer=installer).returncode == 0
    target = project / ".claude" / "skills"
    skill, other = SKILLS[-1], SKILLS[0]
    untouched = snapshot(target / other)
    (clone / "skills" / skill / "SKILL.md").write_text("---\nname: changed\n---\nnew body\n")
    gone = sorted((clone / "skills" / skill / "references").iterdir())[0]
    gone.unlink()
    with (clone / "scripts" / "sparring" / "workspace.py").open("a") as f:
        f.write("\n# a change the runtime must pick up\n")

    done = run_install("--project", project, env=env, installer=installer)

    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(rf"^update +{re.escape(str(target / skill))} +\(1 changed, 1 removed",
                     done.stdout, re.M), done.stdout
    assert (target / skill / "SKILL.md").read_text().endswith("new body\n")
    assert not (target / skill / "references" / gone.name).exists()
    assert snapshot(target / other) == untouched
    assert "update runtime" in done.stdout
    venv_python = runtime_of(own_runtime).python
    check = subprocess.run([str(venv_python), "-I", "-c",
                            "import sparring.workspace as w, pathlib; "
                            "print('must pick up' in pathlib.Path(w.__file__).read_text())"],
                           capture_output=True, text=True, timeout=60)
    assert check.stdout.strip() == "True", check


def test_the_launcher_without_a_runtime_says_how_to_make_one(
        project: Path, env: dict[str, str], tmp_path: Path) -> None:
    target = installed(project, env)
    empty = tmp_path / "no-data"
    bare = ["env", "-i", f"PATH={BARE_PATH}", f"HOME={tmp_path}", f"XDG_DATA_HOME={empty}"]

    for launcher, fix in ((target / SKILLS[0] / "sparring", f"--project {project}"),
                          (ROOT / "skills" / SKILLS[0] / "sparring", "--runtime-only")):
        done = subprocess.run([*bare, str(launcher), "init", "--skill", "think-about"],
                              cwd=project, capture_output=True, text=True, timeout=30)
        assert done.returncode == 1
        out = json.loads(done.stdout)
        assert out["ok"] is False and out["error"]["code"] == "runtime_missing"
        command = re.search(r"`(python3 \S+ [^`]+)`", out["error"]["hint"])
        assert command and command.group(1) == f"python3 {INSTALL} {fix}"
        assert f"{runtime_of(empty).venv}" in out["error"]["hint"]
        # The hint's command is one install.py accepts (as a dry run: no pip here).
        argv = command.group(1).split()[1:]
        dry = run_install(*argv[1:], "--dry-run", env=install_env(empty))
        assert dry.returncode == 0 and "would create runtime" in dry.stdout, dry


# -- the installer itself --------------------------------------------------------------------------


def test_an_old_python_gets_a_sentence_not_a_traceback(tmp_path: Path) -> None:
    # Parsed by an old interpreter before the check runs: the syntax must be that old too.
    ast.parse(INSTALL.read_text(), feature_version=(3, 7))
    fake_old = ("import runpy, sys; sys.version_info = (3, 8, 10, 'final', 0); "
                f"sys.argv = ['install.py', '--user']; runpy.run_path({str(INSTALL)!r}, "
                "run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", fake_old], capture_output=True, text=True,
                          timeout=30, env=install_env(tmp_path))
    assert done.returncode == 1
    assert "sparring needs Python 3.10 or newer" in done.stderr
    assert "Traceback" not in done.stderr


def test_usage_errors(tmp_path: Path, env: dict[str, str]) -> None:
    assert run_install(env=env).returncode == 2
    assert run_install("--user", "--project", tmp_path, env=env).returncode == 2
    done = run_install("--project", tmp_path / "missing", env=env)
    assert done.returncode == 2 and "not a directory" in done.stderr


def test_the_plugin_manifests_name_the_package_version() -> None:
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    [entry] = market["plugins"]
    assert plugin["name"] == entry["name"] == "sparring"
    assert plugin["version"] == entry["version"] == __version__
    assert entry["source"] == "./", "the repository root is the plugin"


def test_the_runtime_is_installed_from_a_wheel_with_no_build_step(runtime: Path) -> None:
    """pip installs sparring from the wheel install.py makes (installer/wheel.py): it builds
    nothing (no isolated build, no setuptools to download), and the runtime holds every
    module, template and schema of the clone, with the dependencies pyproject.toml names."""
    log = runtime_of(runtime).log.read_text()
    assert "sparring-0.1.0-py3-none-any.whl" in log, log
    assert "build dependencies" not in log and "Building wheel" not in log, log
    site = next(runtime_of(runtime).venv.glob("lib/python*/site-packages"))
    clone = {str(Path("sparring") / p.relative_to(ROOT / "scripts" / "sparring"))
             for p in (ROOT / "scripts" / "sparring").rglob("*")
             if p.is_file() and p.suffix in (".py", ".json", ".typed")}
    clone |= {str(Path("sparring", "templates") / p.relative_to(ROOT / "templates"))
              for p in (ROOT / "templates").rglob("*.j2")}
    installed = {str(p.relative_to(site)) for p in (site / "sparring").rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts}
    assert installed == clone
    [info] = site.glob("sparring-*.dist-info")
    wanted = re.search(r"^dependencies = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(),
                       re.S | re.M)
    assert wanted is not None
    requires = [line.removeprefix("Requires-Dist: ") for line in
                (info / "METADATA").read_text().splitlines() if line.startswith("Requires-Dist")]
    assert requires == re.findall(r'"([^"]+)"', wanted.group(1))
    assert "sparring = sparring.__main__:main" in (info / "entry_points.txt").read_text()


def test_a_failed_pip_leaves_no_half_made_runtime_and_no_skills(project: Path,
                                                               tmp_path: Path) -> None:
    data = tmp_path / "data"
    offline = install_env(data, PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_FIND_LINKS="")

    done = run_install("--project", project, env=offline)

    assert done.returncode == 1
    assert "error: pip could not install sparring into the runtime" in done.stderr
    assert f"read {data}/sparring/pip.log" in done.stderr
    assert not runtime_of(data).venv.exists(), "a venv without sparring is removed"
    assert not (project / ".claude").exists(), "no skills without their runtime"


def test_the_suites_runtime_is_made_without_the_network(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """tests/run.py fetched the runtime's dependencies, and the suite's install.py runs take
    them from there with no index (install.py leaves pip's environment to pip): no test waits
    on a package index, nor reaches one."""
    if not OFFLINE:
        missing(f"no wheels in {WHEELS} for this pyproject.toml: run tests/run.py")
    log = runtime_of(shared_runtime(tmp_path_factory)).log.read_text(encoding="utf-8")
    assert f"Looking in links: {WHEELS}" in log
    assert "Installing collected packages" in log
    assert "Downloading" not in log and "Using cached" not in log, log


# -- Claude Code's permission rules --------------------------------------------------------------


# The verbs each skill runs, spelled out here rather than imported (every skill's, its own).
EVERY_SKILLS = ["doctor", "wait", "poll", "status", "resume", "stop", "finalize", "guard accept"]
OWN_VERBS = {"arch-debate": ["debate new", "debate round", "debate status"],
             "deep-discussion": ["discuss new", "discuss frame", "discuss round",
                                 "discuss status", "discuss synthesis", "discuss report"],
             "dual-model": ["init", "start", "seal", "verdict", "report"],
             "think-about": ["init", "start", "seal", "verdict", "report"]}


def launcher_word(target: Path, skill: str) -> str:
    launcher = f"{target / skill}/sparring"
    return f'"{launcher}"' if " " in launcher else launcher


def rules_for(target: Path) -> list[str]:
    """What a debate needs in every turn: the launcher of each skill by its full path with
    the verbs that skill runs, each skill's folder, the skill itself, and the inbox."""
    found = []
    for skill in SKILLS:
        found += [f"Bash({launcher_word(target, skill)} {verb} *)"
                  for verb in EVERY_SKILLS + OWN_VERBS[skill]]
        found += [f"Read(/{target / skill}/**)", f"Skill({skill})"]
    return [*found, "Edit(.sparring/inbox/**)"]


def asks_for(target: Path) -> list[str]:
    """A launcher call naming --sandbox asks the user, whatever else approves it."""
    return [f"Bash({launcher_word(target, skill)} *--sandbox*)" for skill in SKILLS]


def allow_of(settings: Path, kind: str = "allow") -> list[str]:
    rules: list[str] = json.loads(settings.read_text())["permissions"][kind]
    return rules


def test_a_project_install_allows_the_skills_in_every_turn(project: Path,
                                                          env: dict[str, str]) -> None:
    settings = project / ".claude" / "settings.local.json"

    target = installed(project, env)

    assert allow_of(settings) == rules_for(target)
    assert allow_of(settings, "ask") == asks_for(target)
    assert not [r for r in allow_of(settings) if re.search(r"sparring \*\)$|render|revert", r)]
    done = run_install("--project", project, "--uninstall", env=env)
    assert done.returncode == 0, done.stderr
    assert not settings.exists(), "install.py made the file, and nothing else is in it"


def test_a_project_path_with_a_space_gets_rules_in_double_quotes(tmp_path: Path,
                                                                 env: dict[str, str]) -> None:
    """Claude Code matches a quoted launcher only against a rule quoted the same way (the
    habitat test runs a debate there)."""
    project = make_project(tmp_path / "My Projects" / "app")
    done = run_install("--project", project, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "; doctor: ready. Next: " in done.stdout, done.stdout  # it finds the rules
    target = project / ".claude" / "skills"
    settings = project / ".claude" / "settings.local.json"
    bash = [r for r in allow_of(settings) if r.startswith("Bash(")]
    assert bash == [r for r in rules_for(target) if r.startswith("Bash(")]
    assert all(r.startswith(f'Bash("{target}/') for r in bash + allow_of(settings, "ask"))
    assert allow_of(settings, "ask") == asks_for(target)


def test_permission_rules_join_the_users_settings_and_leave_with_uninstall(
        project: Path, env: dict[str, str]) -> None:
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    mine = {"model": "opus", "permissions": {"allow": ["Bash(make test)",
                                                       "Edit(.sparring/inbox/**)"],
                                             "deny": ["Read(.env)"]},
            "env": {"A": "1"}}
    settings.write_text(json.dumps(mine, indent=4) + "\n")
    os.chmod(settings, 0o600)

    target = installed(project, env)

    data = json.loads(settings.read_text())
    assert list(data) == ["model", "permissions", "env", "hooks"], "the user's keys, in " \
        "their order, then the session-start hook's"
    assert data["permissions"]["deny"] == ["Read(.env)"]
    assert allow_of(settings)[:2] == mine["permissions"]["allow"]
    assert set(allow_of(settings)) == {"Bash(make test)", *rules_for(target)}
    assert settings.stat().st_mode & 0o777 == 0o600
    assert run_install("--project", project, env=env).stdout.count("update settings") == 0

    done = run_install("--project", project, "--uninstall", env=env)

    assert done.returncode == 0, done.stderr
    assert json.loads(settings.read_text()) == mine, "exactly what the user had, their " \
        "own copy of the inbox rule included"


def session_hooks(settings: Path) -> list[str]:
    groups = json.loads(settings.read_text()).get("hooks", {}).get("SessionStart", [])
    return [h["command"] for group in groups for h in group["hooks"]]


def test_the_install_runs_the_launcher_as_a_session_start_hook_naming_claudes_model(
        tmp_path: Path, env: dict[str, str]) -> None:
    """Claude Code names its model to a SessionStart hook only: the settings install.py edits
    run the first skill's launcher with --session-start, as Claude Code runs a hook command
    (through a shell, the event on stdin), under a path a shell would split; the next Bash
    call has the model. The user's own SessionStart hooks stay, and uninstall takes exactly
    the one it added."""
    project = make_project(tmp_path / "Jane O'Doe" / "my app")
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    mine = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}
    settings.write_text(json.dumps(mine))
    target = installed(project, env)

    [own, hook] = session_hooks(settings)
    assert own == "echo hi"
    assert not [r for r in allow_of(settings) if "--session-start" in r or r.endswith(
        'sparring *)') or r.endswith('sparring" *)')], "no rule approves --session-start"
    launcher = shell_word(str(target / SKILLS[0] / "sparring"))
    assert hook == f"[ ! -f {launcher} ] || sh {launcher} --session-start"
    env_file = tmp_path / "session-env.sh"
    env_file.write_text("")
    event = json.dumps({"hook_event_name": "SessionStart", "source": "startup",
                        "model": "claude-opus-4-5-20251101"})
    ran = subprocess.run(["sh", "-c", hook], input=event, capture_output=True, text=True,
                         env={**env, "CLAUDE_ENV_FILE": str(env_file)}, timeout=30, check=False)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")
    shown = subprocess.run(["sh", "-c", f'. {shell_word(str(env_file))}; '
                            'printf %s "$SPARRING_CLAUDE_MODEL"'],
                           capture_output=True, text=True, timeout=30, check=True)
    assert shown.stdout == "claude-opus-4-5-20251101"
    again = run_install("--project", project, env=env)
    assert again.stdout.count("update settings") == 0 and session_hooks(settings) == [own, hook]

    gone = shell_word(str(tmp_path / "Jane O'Doe" / "gone" / "sparring"))
    skills_gone = subprocess.run(["sh", "-c", hook.replace(launcher, gone)],
                                 input=event, capture_output=True, text=True, timeout=30,
                                 env={**env, "CLAUDE_ENV_FILE": str(env_file)}, check=False)
    assert hook.count(launcher) == 2, "the gone launcher stands in for both of its words"
    assert (skills_gone.returncode, skills_gone.stdout, skills_gone.stderr) == (0, "", ""), \
        "skills deleted by hand: the hook does nothing, and says nothing"
    assert env_file.read_text().count("SPARRING_CLAUDE_MODEL") == 1, "nothing more written"

    done = run_install("--project", project, "--uninstall", env=env)

    assert done.returncode == 0, done.stderr
    assert json.loads(settings.read_text()) == {**mine, "permissions": {}}


def test_a_users_hook_in_sparrings_group_stays_and_malformed_hooks_keep_the_rules(
        project: Path, env: dict[str, str]) -> None:
    """A hook the user put beside sparring's, in its group, outlives the uninstall; settings
    whose `hooks` is not an object still get (and lose) the permission rules, the hooks left
    exactly as they were, with a warning that names the file."""
    settings = project / ".claude" / "settings.local.json"
    target = installed(project, env)
    data = json.loads(settings.read_text())
    [ours] = data["hooks"]["SessionStart"]
    ours["hooks"].append({"type": "command", "command": "echo mine"})
    settings.write_text(json.dumps(data))

    assert run_install("--project", project, "--uninstall", env=env).returncode == 0

    assert session_hooks(settings) == ["echo mine"]
    settings.write_text(json.dumps({"hooks": ["not", "an", "object"]}))
    done = run_install("--project", project, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert any(line.startswith("warning:") and str(settings) in line and "hooks" in line
               for line in done.stdout.splitlines()), done.stdout
    data = json.loads(settings.read_text())
    assert data["hooks"] == ["not", "an", "object"] and allow_of(settings) == rules_for(target)
    assert run_install("--project", project, "--uninstall", env=env).returncode == 0
    assert json.loads(settings.read_text()) == {"hooks": ["not", "an", "object"],
                                                "permissions": {}}


def test_a_linked_settings_file_is_written_through_its_link(runtime: Path, tmp_path: Path,
                                                           env: dict[str, str]) -> None:
    home = Path(os.environ["HOME"])
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"theme": "dark"}\n')
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(dotfiles)

    done = run_install("--user", env=env, cwd=tmp_path)

    assert done.returncode == 0, done.stdout + done.stderr
    assert (home / ".claude" / "settings.json").is_symlink()
    assert allow_of(dotfiles) == rules_for(home / ".claude" / "skills")
    assert json.loads(dotfiles.read_text())["theme"] == "dark"
    assert run_install("--user", "--uninstall", env=env, cwd=tmp_path).returncode == 0
    assert json.loads(dotfiles.read_text()) == {"theme": "dark", "permissions": {}}
    assert (home / ".claude" / "settings.json").is_symlink()


def test_a_settings_file_that_is_not_json_is_left_alone_with_the_rules_to_add(
        project: Path, env: dict[str, str]) -> None:
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"allow": ["Bash(ls)",]}}  // hand-edited\n')
    before = settings.read_bytes()

    done = run_install("--project", project, env=env)

    assert done.returncode == 0, done.stdout + done.stderr
    assert settings.read_bytes() == before
    warning = next(line for line in done.stdout.splitlines() if line.startswith("warning:"))
    assert str(settings) in warning and "Bash(" in warning and "Edit(.sparring/inbox/**)" in warning
    assert re.search(r"; doctor: ready, with \d+ warning\(s\) above$", done.stdout.rstrip())
    report = json.loads(run_install("--project", project, "--json", env=env).stdout)
    [check] = [c for c in report["doctor"]["checks"] if c["name"] == "permissions"]
    assert check["ok"] is False and "--project" in check["hint"]


def test_no_permissions_leaves_the_settings_alone_and_takes_back_earlier_rules(
        project: Path, env: dict[str, str]) -> None:
    settings = project / ".claude" / "settings.local.json"
    installed(project, env)
    assert settings.exists()

    done = run_install("--project", project, "--no-permissions", env=env)

    assert done.returncode == 0, done.stderr
    assert not settings.exists(), "the rules an earlier install added are gone"
    done = run_install("--project", project, "--no-permissions", env=env)
    assert "--no-permissions: Claude Code asks before runner calls" in done.stdout
    assert not settings.exists()
    report = json.loads(run_install("--project", project, "--no-permissions", "--json",
                                    env=env).stdout)
    [check] = [c for c in report["doctor"]["checks"] if c["name"] == "permissions"]
    assert check["ok"] is False and "first turn" in check["detail"]


def test_the_broad_rules_of_an_earlier_install_are_taken_back(project: Path,
                                                             env: dict[str, str]) -> None:
    """Earlier versions approved each launcher with any arguments and recorded it: installing
    again replaces those with the per-verb rules, and uninstalling removes them, leaving a
    broad rule the user wrote by hand (doctor then says it is too broad)."""
    settings = project / ".claude" / "settings.local.json"
    target = installed(project, env)
    broad = [f"Bash({target / skill}/sparring *)" for skill in SKILLS]
    older = [*broad, *[f"Read(/{target / skill}/**)" for skill in SKILLS],
             "Edit(.sparring/inbox/**)"]
    settings.write_text(json.dumps({"permissions": {"allow": older}}))
    with runtime_state(Path(env["XDG_DATA_HOME"])) as state:
        state["users"][str(target)]["permissions"] = {"file": str(settings), "added": older,
                                                      "created": True}

    again = run_install("--project", project, env=env)

    assert again.returncode == 0, again.stdout + again.stderr
    assert "remove 4 rule(s) sparring added before" in again.stdout, again.stdout
    assert sorted(allow_of(settings)) == sorted(rules_for(target))
    assert allow_of(settings, "ask") == asks_for(target)
    assert "; doctor: ready. Next: " in again.stdout, again.stdout
    mine = f"Bash({target / SKILLS[0]}/sparring *)"
    data = json.loads(settings.read_text())
    data["permissions"]["allow"].append(mine)  # the user's own, written by hand
    settings.write_text(json.dumps(data))
    report = json.loads(run_install("--project", project, "--json", env=env).stdout)
    [check] = [c for c in report["doctor"]["checks"] if c["name"] == "permissions"]
    assert check["ok"] is False and mine in check["detail"] and "any arguments" in check["detail"]

    done = run_install("--project", project, "--uninstall", env=env)

    assert done.returncode == 0, done.stderr
    assert json.loads(settings.read_text()) == {"permissions": {"allow": [mine]}}


def test_an_older_install_uninstalled_takes_its_broad_rules_along(project: Path,
                                                                  env: dict[str, str]) -> None:
    settings = project / ".claude" / "settings.local.json"
    target = installed(project, env)
    older = [f"Bash({target / skill}/sparring *)" for skill in SKILLS]
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(make test)", *older]}}))
    with runtime_state(Path(env["XDG_DATA_HOME"])) as state:
        state["users"][str(target)]["permissions"] = {"file": str(settings), "added": older,
                                                      "created": False}

    done = run_install("--project", project, "--uninstall", env=env)

    assert done.returncode == 0, done.stderr
    assert json.loads(settings.read_text()) == {"permissions": {"allow": ["Bash(make test)"]}}


def test_a_dry_run_names_the_settings_it_would_change(project: Path,
                                                      env: dict[str, str]) -> None:
    done = run_install("--project", project, "--dry-run", env=env)

    allowed = sum(len(EVERY_SKILLS + OWN_VERBS[skill]) + 2 for skill in SKILLS) + 1
    assert re.search(rf"^would update settings +{project}/.claude/settings.local.json +"
                     rf"\(allow {allowed} rule\(s\) for the skills' runner verbs, folders, "
                     rf"the skills themselves and the inbox, ask before any runner call "
                     rf"naming --sandbox \({len(SKILLS)} rule",
                     done.stdout, re.M), done.stdout
    assert not (project / ".claude").exists()


# -- files the user edited -----------------------------------------------------------------------


def test_an_edited_file_is_kept_reported_and_replaced_only_with_force(
        project: Path, env: dict[str, str]) -> None:
    target = installed(project, env)
    skill_md = target / SKILLS[0] / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nMy team's extra rule.\n")
    edited = skill_md.read_text()

    done = run_install("--project", project, env=env)

    assert done.returncode == 0, done.stderr
    assert skill_md.read_text() == edited
    assert re.search(rf"^unchanged +{re.escape(str(target / SKILLS[0]))} .*kept your edits: "
                     r"SKILL.md \(--force replaces them, after a backup\)", done.stdout, re.M), \
        done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("nothing changed")
    assert not (skill_md.parent / "SKILL.md.sparring-new").exists(), "no news: nothing beside"

    done = run_install("--project", project, "--force", env=env)

    assert done.returncode == 0, done.stderr
    assert skill_md.read_bytes() == (ROOT / "skills" / SKILLS[0] / "SKILL.md").read_bytes()
    [backup] = (project / ".claude" / "sparring-backup").glob(f"*/{SKILLS[0]}/SKILL.md")
    assert backup.read_text() == edited, "--force kept a backup of the user's version"
    assert re.search(rf"^backup +{re.escape(str(backup.parent))} +\(your version of SKILL.md, "
                     r"before --force replaced it\)", done.stdout, re.M), done.stdout
    assert not list((project / ".claude" / "skills").glob("*/SKILL.md.*")), \
        "nothing a skill folder did not have before"


def test_an_update_keeps_an_edited_file_and_writes_the_rest(project: Path, own_runtime: Path,
                                                            clone: Path) -> None:
    env = install_env(own_runtime)
    installer = clone / "install.py"
    assert run_install("--project", project, env=env, installer=installer).returncode == 0
    folder = project / ".claude" / "skills" / SKILLS[0]
    (folder / "SKILL.md").write_text("my own version\n")
    for name in ("SKILL.md", "references/runner.md"):
        path = clone / "skills" / SKILLS[0] / name
        text = path.read_text()
        path.unlink()  # the reference is a link into references/: replace it, not its target
        path.write_text(text + "\nA new paragraph.\n")

    done = run_install("--project", project, env=env, installer=installer)

    assert done.returncode == 0, done.stdout + done.stderr
    assert (folder / "SKILL.md").read_text() == "my own version\n"
    assert (folder / "references" / "runner.md").read_text().endswith("A new paragraph.\n")
    assert re.search(r"1 changed, 0 removed, .*kept your edits: SKILL.md", done.stdout)
    # The new version of the file they edited waits beside it, and the install says so.
    new = folder / "SKILL.md.sparring-new"
    assert new.read_bytes() == (clone / "skills" / SKILLS[0] / "SKILL.md").read_bytes()
    assert f"warning: {folder}: you edited SKILL.md; this version's is beside it " \
        "(SKILL.md.sparring-new)" in done.stdout, done.stdout
    again = run_install("--project", project, env=env, installer=installer)
    assert again.stdout.rstrip().splitlines()[-1].startswith("nothing changed"), again.stdout
    # They take the new version: the copy beside it is no longer needed, and goes.
    (folder / "SKILL.md").write_bytes(new.read_bytes())
    done = run_install("--project", project, env=env, installer=installer)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not new.exists() and "kept your edits" not in done.stdout, done.stdout
    assert marker_of(folder)["files"]["SKILL.md"]["sha256"] == hashlib.sha256(
        new.parent.joinpath("SKILL.md").read_bytes()).hexdigest()
    done = run_install("--project", project, "--uninstall", env=env, installer=installer)
    assert done.returncode == 0 and not folder.exists(), done.stdout


def test_check_says_the_new_version_would_be_beside_an_edit_only_once_it_is(
        project: Path, own_runtime: Path, clone: Path) -> None:
    """--check writes nothing, so it says where this version of an edited file would go;
    the install writes it there and says it is; a file of the user's under that name is
    never written over, and no copy is said to be beside it."""
    env = install_env(own_runtime)
    installer = clone / "install.py"
    assert run_install("--project", project, env=env, installer=installer).returncode == 0
    folder = project / ".claude" / "skills" / SKILLS[0]
    (folder / "SKILL.md").write_text("my own version\n")
    new = folder / "SKILL.md.sparring-new"
    new.write_text("my notes\n")  # the user's own file, under the copy's name
    source = clone / "skills" / SKILLS[0] / "SKILL.md"
    source.write_text(source.read_text() + "\nA new paragraph.\n")
    warning = f"warning: {folder}: you edited SKILL.md; this version's "

    for args in (("--check",), ()):
        said = run_install("--project", project, *args, env=env, installer=installer).stdout
        assert f"{warning}is not beside it: SKILL.md.sparring-new is a file of yours" in said, \
            said
        assert "beside it (SKILL.md.sparring-new)" not in said, said
        assert new.read_text() == "my notes\n"

    new.unlink()
    checked = run_install("--project", project, "--check", env=env, installer=installer)
    assert f"{warning}would be written beside it (SKILL.md.sparring-new)" in checked.stdout, \
        checked.stdout
    assert "is beside it" not in checked.stdout and not new.exists()
    done = run_install("--project", project, env=env, installer=installer)
    assert done.returncode == 0 and new.read_bytes() == source.read_bytes(), done.stdout
    assert f"{warning}is beside it (SKILL.md.sparring-new)" in done.stdout, done.stdout
    checked = run_install("--project", project, "--check", env=env, installer=installer)
    assert f"{warning}is beside it (SKILL.md.sparring-new)" in checked.stdout, checked.stdout


def test_uninstall_leaves_a_file_the_user_edited(project: Path, env: dict[str, str]) -> None:
    target = installed(project, env)
    skill_md = target / SKILLS[0] / "SKILL.md"
    skill_md.write_text("edited\n")

    done = run_install("--project", project, "--uninstall", env=env)

    assert done.returncode == 0, done.stderr
    assert skill_md.read_text() == "edited\n"
    assert [p.name for p in (target / SKILLS[0]).rglob("*")] == ["SKILL.md"]
    assert re.search(r"kept 1 file\(s\) sparring did not install or you edited: SKILL.md",
                     done.stdout), done.stdout


# -- the sparring command, for a person ----------------------------------------------------------


def test_the_sparring_command_is_linked_for_a_person_and_goes_with_the_runtime(
        project: Path, own_runtime: Path, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    bin_dir = home / ".local" / "bin"
    env = with_claude(install_env(own_runtime), tmp_path / "claude-bin")
    log_in_codex(env)

    done = run_install("--project", project, env=env)

    assert done.returncode == 0, done.stdout + done.stderr
    link = bin_dir / "sparring"
    assert os.readlink(link) == str(runtime_of(own_runtime).venv / "bin" / "sparring")
    assert re.search(rf"^link +{re.escape(str(link))} +\(the sparring command, for you to "
                     rf"type; {re.escape(str(bin_dir))} is not on your PATH", done.stdout, re.M)
    # A person's shell, with ~/.local/bin on PATH: `sparring doctor` answers, in text.
    shell = {**env, "PATH": f"{bin_dir}:{env['PATH']}"}
    doctor = subprocess.run(["sparring", "doctor", "--text"], cwd=project, env=shell,
                            capture_output=True, text=True, timeout=120, check=False)
    assert doctor.returncode == 0 and doctor.stdout.startswith(
        f"sparring {__version__} doctor: ready"), doctor.stdout + doctor.stderr
    again = run_install("--project", project, env=shell)
    assert re.search(rf"^unchanged +{re.escape(str(link))} +\(the sparring command\)$",
                     again.stdout, re.M), again.stdout
    assert run_install("--runtime-only", "--uninstall", env=env).returncode == 0
    assert link.is_symlink(), "the project still uses the runtime"

    done = run_install("--project", project, "--uninstall", env=env)

    assert done.returncode == 0, done.stderr
    assert not link.is_symlink(), "the last user took the runtime, and its command, along"


def test_a_sparring_command_that_is_not_ours_is_left_alone(project: Path, own_runtime: Path,
                                                            tmp_path: Path) -> None:
    mine = Path(os.environ["HOME"]) / ".local" / "bin" / "sparring"
    mine.parent.mkdir(parents=True)
    mine.write_text("#!/bin/sh\necho my own sparring\n")
    env = with_claude(install_env(own_runtime), tmp_path / "claude-bin")

    done = run_install("--project", project, env=env)
    gone = run_install("--project", project, "--uninstall", env=env)

    assert done.returncode == 0 and gone.returncode == 0, done.stdout + done.stderr
    assert re.search(rf"^left alone +{re.escape(str(mine))} +\(not made by install.py",
                     done.stdout, re.M), done.stdout
    assert mine.read_text() == "#!/bin/sh\necho my own sparring\n"


# -- install.py --check: older than the clone? ----------------------------------------------------


def test_check_says_whether_the_install_is_older_than_the_clone(
        project: Path, own_runtime: Path, clone: Path, tmp_path: Path) -> None:
    env = with_claude(install_env(own_runtime), tmp_path / "claude-bin")
    installer = clone / "install.py"
    target = project / ".claude" / "skills"

    missing = run_install("--project", project, "--check", env=env, installer=installer)
    assert missing.returncode == 1
    assert missing.stdout.rstrip().splitlines()[-1] == \
        f"not installed: sparring {__version__} is not in {target}"
    assert not (project / ".claude").exists(), "--check changes nothing"
    assert run_install("--project", project, env=env, installer=installer).returncode == 0

    fine = run_install("--project", project, "--check", env=env, installer=installer)
    assert fine.returncode == 0, fine.stdout + fine.stderr
    assert fine.stdout.rstrip().splitlines()[-1] == \
        f"up to date: {target} has what this clone installs (sparring {__version__})"

    skill_md = clone / "skills" / SKILLS[0] / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nA new paragraph.\n")
    before = snapshot(project)
    older = run_install("--project", project, "--check", "--json", env=env, installer=installer)
    assert older.returncode == 1
    summary = json.loads(older.stdout)
    assert summary["up_to_date"] is False and summary["dry_run"] is True
    assert [a["path"] for a in summary["actions"] if a["verb"] == "would update"] == \
        [str(target / SKILLS[0])]
    text = run_install("--project", project, "--check", env=env, installer=installer)
    assert text.stdout.rstrip().splitlines()[-1] == (
        "older than this clone: installing would make the 1 change(s) above; to update, run "
        f"`python3 {installer} --project {project}`")
    assert snapshot(project) == before
    assert run_install("--project", project, "--check", "--uninstall", env=env).returncode == 2


# -- what stays behind, and what is said about it ------------------------------------------------


def test_uninstall_names_what_it_leaves_behind_and_how_to_remove_it(
        project: Path, own_runtime: Path, tmp_path: Path) -> None:
    from sparring.store import locate, witness

    env = with_claude(install_env(own_runtime), tmp_path / "claude-bin")
    installed(project, env)
    session = project / ".sparring" / "sessions" / "think-about-20261122-101010-abcdef"
    session.mkdir(parents=True)
    (session / "session.json").write_text(json.dumps({
        "id": session.name, "root": str(project.resolve()), "cwd": str(project.resolve()),
        "turns": [], "outputs": "0123456789abcdef"}))
    printed = Path(locate.outputs_folder(str(session), "0123456789abcdef")) / "1"
    printed.mkdir(parents=True)  # what its codex printed
    (project / "debate" / "session-store").mkdir(parents=True)
    (project / "debate" / "session-store" / "DEBATE-PROTOCOL.md").write_text("# q\n")
    decisions = project / "docs" / "decisions"
    decisions.mkdir(parents=True)
    (decisions / "2026-11-22-think-about-redis.md").write_text("# report\n")
    (decisions / "2026-11-22-think-about-redis.json").write_text("{}\n")
    (decisions / "adr-001.md").write_text("# the team's own record\n")
    copies = Path(witness.folder(project))
    copies.mkdir(parents=True)
    kept = snapshot(project / "docs"), snapshot(project / "debate"), snapshot(copies)

    done = run_install("--project", project, "--uninstall", env=env)

    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("left behind")]
    assert re.search(rf"{re.escape(str(project / '.sparring'))} +\(the runner's working state: "
                     r"its sessions and the inbox \(the runner moves each inbox file into its "
                     r"session once it has read it\).*remove it with `rm -rf "
                     rf"{re.escape(str(project / '.sparring'))}` when no debate runs\)",
                     lines[0]), lines
    assert any(f"{project / 'debate'}  (arch-debate's debate folders" in line for line in lines)
    assert any(f"{decisions}  (1 think-about and dual-model report(s)" in line for line in lines)
    assert any(f"{copies}  (sparring's copies of the runner's records" in line and
               f"`rm -rf {copies}`" in line for line in lines), lines
    assert any("what Codex printed in each turn of this project's 1 session(s)" in line
               for line in lines), lines
    assert printed.is_dir()
    assert (snapshot(project / "docs"), snapshot(project / "debate"), snapshot(copies)) == kept
    assert (project / ".sparring" / "sessions").is_dir()
    assert done.stdout.rstrip().splitlines()[-1] == \
        f"sparring removed from {project}/.claude/skills"


def test_force_moves_a_foreign_folder_to_the_backup_not_away(project: Path,
                                                             env: dict[str, str]) -> None:
    mine = project / ".claude" / "skills" / SKILLS[-1]
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("my own skill\n")

    done = run_install("--project", project, "--force", env=env)

    assert done.returncode == 0, done.stdout + done.stderr
    [backup] = (project / ".claude" / "sparring-backup").glob(f"*/{SKILLS[-1]}")
    assert (backup / "SKILL.md").read_text() == "my own skill\n"
    assert re.search(rf"^replace +{re.escape(str(mine))} +\(.*moved to "
                     rf"{re.escape(str(backup))}\)", done.stdout, re.M), done.stdout
    assert marker_of(mine)["skill"] == SKILLS[-1]


def test_the_install_says_when_git_would_commit_the_projects_personal_settings(
        project: Path, env: dict[str, str]) -> None:
    settings = project / ".claude" / "settings.local.json"
    note = f"note             {settings}  (git does not ignore it"

    done = run_install("--project", project, env=env)
    assert note in done.stdout, done.stdout

    (project / ".gitignore").write_text(".claude/settings.local.json\n")
    done = run_install("--project", project, env=env)
    assert done.returncode == 0 and note not in done.stdout, done.stdout


def test_a_project_install_beside_a_user_install_is_warned_of(
        project: Path, env: dict[str, str], tmp_path: Path) -> None:
    assert run_install("--user", env=env, cwd=tmp_path).returncode == 0

    done = run_install("--project", project, env=env)

    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^doctor warning: duplicates: .* installed twice: for your user "
                     rf"\({re.escape(os.environ['HOME'])}/.claude/skills\) and in this project",
                     done.stdout, re.M), done.stdout
    assert re.search(r"; doctor: ready, with 1 warning\(s\) above$", done.stdout.rstrip())


@pytest.mark.parametrize("where", ["HOME", "/"])
def test_a_user_install_from_the_home_folder_or_root_can_run(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, where: str) -> None:
    """install.py --user from the home folder, or from `/`, with a home that is not the user
    database's (a container's, a throwaway one) and a stray `.sparring/` in it: the runtime
    under that home is the user's, not the project's, and doctor says ready."""
    home = tmp_path / "home"
    copy_runtime(tmp_path_factory, home / ".local" / "share")
    (home / ".sparring" / "sessions").mkdir(parents=True)
    env = install_env(home / ".local" / "share", home)
    del env["XDG_DATA_HOME"]  # the runtime where HOME leads, as for a user who set none
    env = with_claude(env, tmp_path / "claude-bin")
    log_in_codex(env)
    done = run_install("--user", "--json", env=env, cwd=home if where == "HOME" else Path("/"))
    out = json.loads(done.stdout)
    assert "runtime_in_project" not in done.stdout, out["doctor"]
    assert done.returncode == 0 and out["ok"] and out["doctor"]["ready"], out["doctor"]
    assert out["runtime"] == str(runtime_of(home / ".local" / "share").venv)
