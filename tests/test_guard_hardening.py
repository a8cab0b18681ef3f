"""The guard never destroys work (issue 11, cases 1-3), on real git repositories: folder and
symlink swaps are seen as such, revert keeps everything it removes or replaces, anything in
doubt is listed and left, git's own folder is watched, and no git command the guard runs
starts a program the tree configured."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from sparring.guard import undo
from sparring.guard.check import compare
from sparring.guard.snapshot import take
from sparring.guard.trash import Trash
from support.gitrepo import git


def grep(root: Path, needle: str) -> list[str]:
    """`grep -r NEEDLE . --exclude-dir=.sparring`, as the issue checks it."""
    done = subprocess.run(["grep", "-rl", needle, ".", "--exclude-dir=.sparring"], cwd=root,
                          capture_output=True, text=True)
    return sorted(done.stdout.split())


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The issue's repository: src/app.py committed, then edited and not committed."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q")
    (root / "src" / "app.py").write_text("committed\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "i")
    (root / "src" / "app.py").write_text("UNCOMMITTED WORK\n")
    monkeypatch.chdir(root)
    return root


def test_the_issues_folder_to_symlink_swap_loses_nothing(project: Path, sparring: Any,
                                                         tmp_path: Path) -> None:
    baseline = project / ".sparring" / "inbox" / "b.json"  # inside the project, out of git
    assert sparring("guard", "snapshot", "--cwd", ".", "--out", str(baseline)).exit_code == 0
    (project / "src").rename(project / "src.bak")
    (project / "src").symlink_to("src.bak")
    check = sparring("guard", "check", "--baseline", str(baseline)).out
    assert check["changed"] == [{"path": "src", "change": "added"},
                                {"path": "src.bak/app.py", "change": "added"},
                                {"path": "src/app.py", "change": "deleted"}]
    revert = sparring("guard", "revert", "--baseline", str(baseline)).out
    assert revert["clean_after"] is True, revert
    assert grep(project, "UNCOMMITTED WORK") == ["./src/app.py"]
    assert not (project / "src").is_symlink() and (project / "src").is_dir()
    assert not (project / "src.bak").exists()
    # What revert took away is kept, byte for byte: the link and the moved file.
    kept = {r["path"]: Path(r["kept"]) for r in revert["reverted"] if "kept" in r}
    assert kept["src.bak/app.py"].read_text() == "UNCOMMITTED WORK\n"
    assert os.readlink(kept["src"]) == "src.bak"


def test_a_file_revert_cannot_restore_is_never_taken_from_where_it_moved(
        project: Path, tmp_path: Path) -> None:
    """Without a copy (no store), the moved file is the only one left: it stays, listed."""
    base = take(project)
    (project / "src").rename(project / "src.bak")
    (project / "src").symlink_to("src.bak")
    result = undo.revert(base)
    left = {r["path"]: r["reason"] for r in result.not_reverted}
    assert "src/app.py" in left and "no copy" in left["src/app.py"]
    assert "cannot put back" in left["src.bak/app.py"]
    assert grep(project, "UNCOMMITTED WORK") == ["./src.bak/app.py"]
    assert result.clean_after is False


def test_a_folder_linked_outside_the_tree_is_never_written_through(project: Path,
                                                                   tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "app.py").write_text("someone else's file\n")
    base = take(project, store=tmp_path / "store")
    (project / "src").rename(tmp_path / "moved-away")
    (project / "src").symlink_to(elsewhere)
    found = {(c.path, c.change) for c in compare(base)}
    assert found == {("src", "added"), ("src/app.py", "deleted")}
    assert undo.revert(base).clean_after
    assert (elsewhere / "app.py").read_text() == "someone else's file\n"
    assert (project / "src" / "app.py").read_text() == "UNCOMMITTED WORK\n"
    assert not (project / "src").is_symlink()


@pytest.mark.parametrize("folder", ["guard-store", "guard-trash"])
def test_the_guards_own_folders_swapped_for_a_link_receive_nothing(
        project: Path, tmp_path: Path, folder: str) -> None:
    """Another session's workspace-write Codex swaps `.sparring/guard-store` (where the next
    snapshot copies the user's files) or `.sparring/guard-trash` (where revert moves what it
    removes) for a link out of the project: nothing of the user's goes through it, the
    refusal names the folder, and the user's work stays where it is."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state = project / ".sparring"
    state.mkdir()
    (state / folder).symlink_to(elsewhere)
    with pytest.raises(OSError) as refused:
        if folder == "guard-store":
            take(project, store=state / "guard-store")
        else:
            Trash(project).keep("src/app.py")
    assert refused.value.filename == str(state / folder)
    assert list(elsewhere.iterdir()) == [], "nothing went through the link"
    assert (project / "src" / "app.py").read_text() == "UNCOMMITTED WORK\n"


def test_a_file_swapped_for_a_folder_and_back(project: Path, tmp_path: Path) -> None:
    (project / "notes.txt").write_text("untracked notes\n")
    base = take(project, store=tmp_path / "store")
    (project / "notes.txt").unlink()
    (project / "notes.txt").mkdir()
    (project / "notes.txt" / "inner.txt").write_text("inside\n")
    (project / "src" / "app.py").unlink()
    (project / "src").rmdir()
    (project / "src").write_text("a file where the folder was\n")
    assert sorted((c.path, c.change) for c in compare(base)) == [
        ("notes.txt", "deleted"), ("notes.txt/inner.txt", "added"), ("src", "added"),
        ("src/app.py", "deleted")]
    result = undo.revert(base)
    assert result.clean_after, result
    assert (project / "notes.txt").read_text() == "untracked notes\n"
    assert (project / "src" / "app.py").read_text() == "UNCOMMITTED WORK\n"


def test_a_clean_tracked_file_behind_a_swapped_folder_is_restored_from_git(
        project: Path, tmp_path: Path) -> None:
    git(project, "checkout", "-q", "--", "src/app.py")  # clean: git vouches for it
    base = take(project, store=tmp_path / "store")
    (project / "src").rename(project / "src.bak")
    (project / "src").symlink_to("src.bak")
    (project / "src.bak" / "app.py").write_text("changed through the link\n")
    assert undo.revert(base).clean_after
    assert (project / "src" / "app.py").read_text() == "committed\n"


# --- .git/ ---------------------------------------------------------------------------------


def test_a_planted_hook_is_a_change_and_revert_takes_it_away(project: Path,
                                                             tmp_path: Path) -> None:
    base = take(project, store=tmp_path / "store")
    hook = project / ".git" / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\ntouch pwned\n")
    hook.chmod(0o755)
    assert [(c.path, c.change) for c in compare(base)] == [
        (".git/hooks/post-checkout", "added")]
    result = undo.revert(base)
    assert result.clean_after and not hook.exists()
    assert Path(result.reverted[0]["kept"]).read_text() == "#!/bin/sh\ntouch pwned\n"


def test_git_config_and_info_are_watched_and_restored(project: Path, tmp_path: Path) -> None:
    config = (project / ".git" / "config").read_bytes()
    base = take(project, store=tmp_path / "store")
    git(project, "config", "alias.st", "status")
    (project / ".git" / "info" / "exclude").write_text("src/\n")
    assert [(c.path, c.change) for c in compare(base)] == [
        (".git/config", "modified"), (".git/info/exclude", "modified")]
    assert undo.revert(base).clean_after
    assert (project / ".git" / "config").read_bytes() == config


def test_a_planted_fsmonitor_or_filter_never_runs(project: Path, tmp_path: Path,
                                                 sparring: Any) -> None:
    """Issue 11, case 3: `guard check` ran a core.fsmonitor command from .git/config."""
    baseline = project / ".sparring" / "inbox" / "b.json"  # inside the project, out of git
    assert sparring("guard", "snapshot", "--out", str(baseline)).exit_code == 0
    marker = tmp_path / "ran"
    git(project, "config", "core.fsmonitor", f"touch {marker}-fsmonitor; false")
    git(project, "config", "filter.evil.clean", f"touch {marker}-clean; cat")
    git(project, "config", "filter.evil.smudge", f"touch {marker}-smudge; cat")
    git(project, "config", "filter.evil.required", "true")
    (project / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    os.utime(project / "src" / "app.py")  # stat-dirty: status would run the clean filter
    check = sparring("guard", "check", "--baseline", str(baseline)).out
    assert {c["path"] for c in check["changed"]} == {".git/config", ".git/info/attributes"}
    revert = sparring("guard", "revert", "--baseline", str(baseline)).out
    assert revert["clean_after"] is True, revert
    assert list(tmp_path.glob("ran*")) == []  # nothing the tree configured ever ran
    # Proof that the traps are armed: plain git runs them.
    git(project, "config", "core.fsmonitor", f"touch {marker}-fsmonitor; false")
    (project / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    git(project, "config", "filter.evil.clean", f"touch {marker}-clean; cat")
    subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True)
    subprocess.run(["git", "hash-object", "src/app.py"], cwd=project, capture_output=True)
    assert {p.name for p in tmp_path.glob("ran*")} == {"ran-fsmonitor", "ran-clean"}


@pytest.mark.parametrize("setting", [("core.trustctime", "false"), ("core.checkStat", "minimal")])
def test_a_rewrite_with_its_mtime_put_back_is_seen_whatever_the_repository_says_of_stat_data(
        repo: Path, setting: tuple[str, str]) -> None:
    """A repository may tell git to ignore ctime (`core.trustctime=false`, advised where
    something else moves it) or to compare little stat data (`core.checkStat=minimal`). Plain
    git status then takes a same-size rewrite whose mtime was put back for the file it was:
    a turn could change a tracked file unseen. The guard's git compares ctime regardless."""
    git(repo, "config", *setting)
    app = repo / "app.py"
    os.utime(app, ns=(0, 10**18))  # an old mtime: not "racily clean", git trusts stat data
    git(repo, "update-index", "-q", "--refresh")
    old = app.stat()
    base = take(repo)
    # git compares ctime to the second: the rewrite's must fall in a later one, as for any
    # rewrite past the snapshot's second (the file's own clock may lag Python's by a tick).
    while True:
        app.write_text("print('HELLO')\n")  # the same size as "print('hello')\n"
        if app.stat().st_ctime_ns // 10**9 > old.st_ctime_ns // 10**9:
            break
        time.sleep(0.05)
    os.utime(app, ns=(old.st_atime_ns, old.st_mtime_ns))
    plain = subprocess.run(["git", "--no-optional-locks", "status", "--porcelain"], cwd=repo,
                           capture_output=True, text=True, check=True)
    assert plain.stdout == ""  # the trap is armed: plain git sees nothing
    assert [(c.path, c.change) for c in compare(base)] == [("app.py", "modified")]


def test_a_case_only_twin_of_a_tracked_file_is_seen_whatever_the_repository_says(
        repo: Path) -> None:
    """A repository copied from a system that does not tell case apart says
    `core.ignoreCase=true`; on one that does, plain git status then hides a new `APP.py`
    beside the tracked `app.py`. The guard's git tells them apart where the filesystem does."""
    git(repo, "config", "core.ignoreCase", "true")
    base = take(repo)
    (repo / "APP.py").write_text("print('planted')\n")
    plain = subprocess.run(["git", "--no-optional-locks", "status", "--porcelain", "-uall"],
                           cwd=repo, capture_output=True, text=True, check=True)
    assert plain.stdout == ""  # the trap is armed: plain git sees nothing
    assert [(c.path, c.change) for c in compare(base)] == [("APP.py", "added")]


def test_the_users_own_filter_still_applies(project: Path, tmp_path: Path) -> None:
    """A filter configured before the snapshot is the user's (git-lfs, say): it keeps
    working, so a stat-dirty file it cleans is not reported."""
    git(project, "config", "filter.up.clean", "tr a-z A-Z")
    (project / ".gitattributes").write_text("*.txt filter=up\n")
    (project / "shout.txt").write_text("hello\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "filtered")
    assert git(project, "cat-file", "-p", "HEAD:shout.txt") == "HELLO\n"
    base = take(project, store=tmp_path / "store")
    os.utime(project / "shout.txt", (1_600_000_000, 1_600_000_000))
    assert compare(base) == []
    (project / "shout.txt").write_text("HELLO\n")  # cleans to the same blob
    assert compare(base) == []
    (project / "shout.txt").write_text("bye\n")
    assert [(c.path, c.change) for c in compare(base)] == [("shout.txt", "modified")]


def test_a_background_gc_writing_info_refs_is_not_a_change(project: Path,
                                                           tmp_path: Path) -> None:
    """`git gc --auto` after a commit runs `update-server-info`, which writes .git/info/refs:
    data git does not act on, written by the user's own git at any time."""
    base = take(project, store=tmp_path / "store")
    git(project, "update-server-info")
    assert (project / ".git" / "info" / "refs").exists()
    assert compare(base) == []
