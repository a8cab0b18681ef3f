"""The file-modification guard, on real temporary git repositories (and plain folders).

A "turn" here is whatever the test does between `snap()` and `compare()`.
Every detected change is checked for its path and kind, every revert byte for
byte, and files the turn did not touch must come out of a revert identical,
mtime included.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sparring.errors import SparringError
from sparring.guard import copies, files, snapshot, undo
from sparring.guard.baseline import Baseline
from sparring.guard.check import compare
from sparring.guard.copies import COPY_LIMITS
from support.gitrepo import git

IGNORES = "node_modules/\n.env\nbuild/\n"


@pytest.fixture
def tree(repo: Path) -> Path:
    """The `repo` fixture plus ignored files, a dirty tracked file and an untracked file."""
    (repo / ".gitignore").write_text(IGNORES)
    (repo / "lib").mkdir()
    (repo / "lib" / "util.py").write_text("def util():\n    return 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more")
    (repo / "node_modules" / "pkg").mkdir(parents=True)
    (repo / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")
    (repo / ".env").write_text("TOKEN=abc\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_bytes(b"\x7fELF-object")
    (repo / "lib" / "util.py").write_text("def util():\n    return 2  # dirty\n")
    (repo / "notes.txt").write_text("my untracked notes\n")
    return repo


@pytest.fixture
def snap(tmp_path: Path) -> Callable[..., Baseline]:
    def take(root: Path, **kwargs: Any) -> Baseline:
        kwargs.setdefault("store", tmp_path / "store")
        return snapshot.take(root, **kwargs)

    return take


@pytest.fixture
def steady(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leave the racy window at once, so that the stat-data path decides (not hashing)."""
    monkeypatch.setattr(snapshot, "RACY_MARGIN_NS", 0)
    time.sleep(0.05)  # well past one file-system clock tick since the fixture wrote


def found(baseline: Baseline) -> list[tuple[str, str]]:
    return [(c.path, c.change) for c in compare(baseline)]


def same_length_rewrite(path: Path, content: bytes) -> None:
    """Rewrite in place with the same size, then put the old mtime back."""
    before = path.stat()
    assert len(content) == before.st_size
    with open(path, "r+b") as f:
        f.write(content)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def fingerprint(path: Path) -> tuple[bytes, int, int]:
    st = path.lstat()
    return path.read_bytes(), st.st_mtime_ns, st.st_mode


# --- detection -----------------------------------------------------------------------------


def test_a_quiet_tree_is_clean(tree: Path, snap: Any) -> None:
    base = snap(tree)
    assert base.mode == "git"
    assert found(base) == []


def test_tracked_file_modified_and_deleted(tree: Path, snap: Any) -> None:
    base = snap(tree)
    (tree / "app.py").write_text("print('changed by codex')\n")
    (tree / "README.md").unlink()
    assert found(base) == [("README.md", "deleted"), ("app.py", "modified")]


def test_new_untracked_file(tree: Path, snap: Any) -> None:
    base = snap(tree)
    (tree / "src" / "deep").mkdir(parents=True)
    (tree / "src" / "deep" / "new.py").write_text("x = 1\n")
    assert found(base) == [("src/deep/new.py", "added")]


def test_dirty_file_modified_again(tree: Path, snap: Any) -> None:
    porcelain = git(tree, "status", "--porcelain")
    base = snap(tree)
    (tree / "lib" / "util.py").write_text("def util():\n    return 3  # dirtier\n")
    assert git(tree, "status", "--porcelain") == porcelain  # git's view did not move
    assert found(base) == [("lib/util.py", "modified")]


def test_ignored_files_created_and_modified(tree: Path, snap: Any) -> None:
    base = snap(tree)
    (tree / "node_modules" / "pkg" / "index.js").write_text("module.exports = 2\n")
    (tree / "node_modules" / "other").mkdir()
    (tree / "node_modules" / "other" / "a.js").write_text("new\n")
    (tree / ".env").write_text("TOKEN=stolen\n")
    (tree / "build" / "out.o").unlink()
    assert found(base) == [
        (".env", "modified"), ("build/out.o", "deleted"),
        ("node_modules/other/a.js", "added"), ("node_modules/pkg/index.js", "modified"),
    ]


@pytest.mark.parametrize("path", ["app.py", "lib/util.py", "notes.txt", ".env",
                                  "node_modules/pkg/index.js"])
@pytest.mark.parametrize("racy", [True, False], ids=["racy-window", "steady"])
def test_same_size_same_mtime_rewrite_is_caught(tree: Path, snap: Any, path: str, racy: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if not racy:
        monkeypatch.setattr(snapshot, "RACY_MARGIN_NS", 0)
        time.sleep(0.05)
    base = snap(tree)
    target = tree / path
    content = target.read_bytes()
    same_length_rewrite(target, bytes(reversed(content)))
    assert found(base) == [(path, "modified")]


@pytest.mark.usefixtures("steady")
@pytest.mark.parametrize("path", ["app.py", "lib/util.py", "notes.txt", ".env"])
def test_touch_and_chmod_with_the_same_bytes_are_not_changes(tree: Path, snap: Any,
                                                             path: str) -> None:
    base = snap(tree)
    target = tree / path
    os.utime(target, (time.time() + 100, time.time() + 100))
    os.chmod(target, 0o600)
    target.write_bytes(target.read_bytes())  # a rewrite with identical bytes, too
    assert found(base) == []


@pytest.mark.parametrize("path", ["app.py", "lib/util.py", "notes.txt", ".env"])
def test_the_executable_bit_is_content(tree: Path, snap: Any, path: str) -> None:
    base = snap(tree)
    os.chmod(tree / path, 0o755)
    assert found(base) == [(path, "modified")]


def test_a_commit_during_the_turn_is_seen(tree: Path, snap: Any) -> None:
    base = snap(tree)
    (tree / "app.py").write_text("print('committed')\n")
    git(tree, "commit", "-q", "-am", "codex was here")
    assert git(tree, "status", "--porcelain", "--untracked-files=no") == ""
    # lib/util.py was committed too, but its bytes did not change: not a change.
    assert found(base) == [("app.py", "modified")]


def test_a_file_staged_then_put_back_is_not_a_change(tree: Path, snap: Any) -> None:
    """git status lists it (the index moved), but its bytes are the snapshot's: hashed."""
    base = snap(tree)
    original = (tree / "app.py").read_bytes()
    (tree / "app.py").write_text("print('staged')\n")
    git(tree, "add", "app.py")
    (tree / "app.py").write_bytes(original)
    assert git(tree, "status", "--porcelain", "app.py").startswith("MM")
    assert found(base) == []


def test_git_status_speaks_for_an_edit_of_a_clean_file(tree: Path, snap: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean tracked file that git status lists against the snapshot's own index entry
    is modified: no `git hash-object` (only status runs; ls-files too if the index moved)."""
    from sparring.guard.git import Git

    base = snap(tree)
    index = (tree / ".git" / "index").read_bytes()
    (tree / "app.py").write_text("print('edited')\n")
    (tree / "lib" / "util.py").write_text("def util():\n    return 3\n")
    # A clean file touched, content the same: git status refreshes its entry and so rewrites
    # the index (new stat data), every time: ls-files runs too. (Edited files alone leave
    # the index as it was, unless git happens to find an entry racily clean.)
    moved = os.stat(tree / ".gitignore").st_mtime_ns + 5_000_000_000
    os.utime(tree / ".gitignore", ns=(moved, moved))
    git(tree, "status")
    assert (tree / ".git" / "index").read_bytes() != index
    started: list[str] = []
    start = Git.start
    monkeypatch.setattr(Git, "start", lambda self, *args: started.append(args[0])
                        or start(self, *args))
    assert found(base) == [("app.py", "modified"), ("lib/util.py", "modified")]
    assert sorted(started) == ["ls-files", "status"]


def test_a_stash_of_the_users_work_is_seen(tree: Path, snap: Any) -> None:
    base = snap(tree)
    git(tree, "stash", "-q")
    assert found(base) == [("lib/util.py", "modified")]


def test_assume_unchanged_files_are_still_watched(tree: Path, snap: Any) -> None:
    git(tree, "update-index", "--assume-unchanged", "app.py")
    base = snap(tree)
    (tree / "app.py").write_text("print('hidden from git status')\n")
    assert "app.py" not in git(tree, "status", "--porcelain")
    assert found(base) == [("app.py", "modified")]


def test_symlinks_are_compared_as_links(tree: Path, snap: Any, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data.txt").write_text("outside\n")
    (tree / "to-app").symlink_to("app.py")
    git(tree, "add", "to-app")
    git(tree, "commit", "-q", "-m", "link")
    (tree / "to-outside").symlink_to(outside)
    base = snap(tree)
    (outside / "data.txt").write_text("changed outside, through the link\n")
    (outside / "more.txt").write_text("new, through the link\n")
    assert found(base) == []
    (tree / "to-app").unlink()
    (tree / "to-app").symlink_to("README.md")
    assert found(base) == [("to-app", "modified")]


def test_a_nested_repository_is_opaque(tree: Path, snap: Any) -> None:
    nested = tree / "vendor"
    nested.mkdir()
    git(nested, "init", "-q")
    (nested / "lib.c").write_text("int x;\n")
    base = snap(tree)
    (nested / "lib.c").write_text("int y;\n")
    assert found(base) == []
    fresh = tree / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    (fresh / "a.txt").write_text("a\n")
    assert found(base) == [("fresh/", "added")]


def test_own_state_and_excluded_paths_are_never_reported(tree: Path, snap: Any) -> None:
    (tree / ".sparring").mkdir()
    (tree / ".sparring" / ".gitignore").write_text("*\n")
    base = snap(tree, exclude=["reports", "*.log"])
    (tree / ".sparring" / "sessions").mkdir()
    (tree / ".sparring" / "sessions" / "s.json").write_text("{}")
    (tree / "reports").mkdir()
    (tree / "reports" / "round1.md").write_text("# report\n")
    (tree / "lib" / "debug.log").write_text("log\n")
    (tree / "kept.md").write_text("reported\n")
    assert found(base) == [("kept.md", "added")]


def test_globs_under_own_state_leave_the_other_exclusions_as_they_were() -> None:
    """`guard snapshot` excludes its baseline and copies under `.sparring/`, which is left out
    anyway: such globs are dropped, and every path is kept or left out as before."""
    paths = [".sparring", ".sparring/inbox/base.json", ".sparring/x", "src/.sparring/inbox/b",
             "build/out.o", "build", "lib/debug.log", "app.py", "sparring/inbox/base.json"]
    both = files.keeper([".sparring/inbox/base.json", ".sparring/*", "build", "*.log"])
    plain = files.keeper(["build", "*.log"])
    assert [both(p) for p in paths] == [plain(p) for p in paths] == [
        False, False, False, True, False, False, False, True, True]
    outside = files.keeper([".sparring/x"], own_state=False)  # an area's own exclusions
    assert not outside(".sparring/x") and outside(".sparring/y")


def test_a_quiet_check_hashes_nothing(tree: Path, snap: Any, steady: None,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    base = snap(tree)
    hashed: list[object] = []
    monkeypatch.setattr(files, "hash_file", lambda path: hashed.append(path) or "")
    assert found(base) == []
    assert hashed == []


# --- outside git ---------------------------------------------------------------------------


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "plain"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("alpha\n")
    (root / "b.txt").write_text("bravo\n")
    (root / "gone.txt").write_text("to delete\n")
    return root


def test_walk_mode_add_modify_delete(folder: Path, snap: Any) -> None:
    base = snap(folder, exclude=["tmp/*"])
    assert base.mode == "walk" and found(base) == []
    (folder / "docs" / "a.md").write_text("ALPHA\n")
    (folder / "gone.txt").unlink()
    (folder / "new").mkdir()
    (folder / "new" / "c.txt").write_text("charlie\n")
    (folder / ".sparring").mkdir()
    (folder / ".sparring" / "x.json").write_text("{}")
    (folder / "tmp").mkdir()
    (folder / "tmp" / "scratch").write_text("excluded\n")
    assert found(base) == [("docs/a.md", "modified"), ("gone.txt", "deleted"),
                           ("new/c.txt", "added")]


@pytest.mark.usefixtures("steady")
def test_walk_mode_same_size_rewrite_and_touch(folder: Path, snap: Any) -> None:
    base = snap(folder)
    os.utime(folder / "b.txt", (time.time() + 50, time.time() + 50))
    assert found(base) == []
    same_length_rewrite(folder / "docs" / "a.md", b"ALPHA\n")
    assert found(base) == [("docs/a.md", "modified")]


def test_walk_mode_revert_restores_from_copies_and_keeps_what_it_removes(folder: Path,
                                                                         snap: Any) -> None:
    base = snap(folder)
    (folder / "b.txt").write_text("changed\n")
    (folder / "new").mkdir()
    (folder / "new" / "c.txt").write_text("charlie\n")
    result = undo.revert(base)
    assert [(r["path"], r["action"]) for r in result.reverted] == [
        ("new/c.txt", "removed"), ("b.txt", "restored_from_copy")]
    assert (folder / "b.txt").read_text() == "bravo\n"
    assert not (folder / "new").exists() and result.clean_after
    kept = {r["path"]: Path(r["kept"]).read_text() for r in result.reverted}
    assert kept == {"new/c.txt": "charlie\n", "b.txt": "changed\n"}  # nothing destroyed
    assert result.trash and Path(result.trash).parent == folder / ".sparring" / "guard-trash"


# --- revert --------------------------------------------------------------------------------


def test_revert_restores_tracked_files_byte_for_byte(tree: Path, snap: Any) -> None:
    original = {p: (tree / p).read_bytes() for p in ("README.md", "app.py")}
    base = snap(tree)
    (tree / "app.py").write_bytes(b"\x00binary garbage\r\n")
    (tree / "README.md").unlink()
    result = undo.revert(base)
    assert sorted((r["path"], r["action"]) for r in result.reverted) == [
        ("README.md", "restored_from_git"), ("app.py", "restored_from_git")]
    assert {p: (tree / p).read_bytes() for p in original} == original
    assert result.clean_after and result.not_reverted == []


def test_revert_restores_a_dirty_file_from_the_snapshot_copy(tree: Path, snap: Any) -> None:
    dirty = tree / "lib" / "util.py"
    os.chmod(dirty, 0o640)
    os.utime(dirty, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    before = fingerprint(dirty)
    base = snap(tree)
    dirty.write_text("rewritten by the turn\n")
    result = undo.revert(base)
    [done] = result.reverted
    assert (done["path"], done["action"]) == ("lib/util.py", "restored_from_copy")
    assert Path(done["kept"]).read_text() == "rewritten by the turn\n"
    assert fingerprint(dirty) == before
    assert result.clean_after


def test_revert_restores_a_deleted_dirty_file_and_a_deleted_directory(tree: Path,
                                                                     snap: Any) -> None:
    expected = (tree / "lib" / "util.py").read_bytes()
    base = snap(tree)
    (tree / "lib" / "util.py").unlink()
    (tree / "lib").rmdir()
    assert found(base) == [("lib/util.py", "deleted")]
    assert undo.revert(base).clean_after
    assert (tree / "lib" / "util.py").read_bytes() == expected


def test_revert_undoes_a_commit_and_a_stash_in_the_worktree(tree: Path, snap: Any) -> None:
    app, util = (tree / "app.py").read_bytes(), (tree / "lib" / "util.py").read_bytes()
    base = snap(tree)
    git(tree, "stash", "-q")
    (tree / "app.py").write_text("print('committed')\n")
    git(tree, "commit", "-q", "-am", "codex was here")
    result = undo.revert(base)
    assert result.clean_after, result
    assert (tree / "app.py").read_bytes() == app
    assert (tree / "lib" / "util.py").read_bytes() == util


def test_revert_of_a_staged_file_uses_the_staged_content(tree: Path, snap: Any) -> None:
    (tree / "staged.py").write_text("staged = True\n")
    git(tree, "add", "staged.py")
    base = snap(tree)
    (tree / "staged.py").write_text("staged = False\n")
    assert found(base) == [("staged.py", "modified")]
    assert undo.revert(base).clean_after
    assert (tree / "staged.py").read_text() == "staged = True\n"


def test_revert_restores_a_symlink_and_the_executable_bit(tree: Path, snap: Any) -> None:
    (tree / "to-app").symlink_to("app.py")
    (tree / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(tree / "run.sh", 0o755)
    git(tree, "add", "to-app", "run.sh")
    git(tree, "commit", "-q", "-m", "link and script")
    base = snap(tree)
    (tree / "to-app").unlink()
    (tree / "to-app").symlink_to("README.md")
    os.chmod(tree / "run.sh", 0o644)
    assert undo.revert(base).clean_after
    assert os.readlink(tree / "to-app") == "app.py"
    assert os.stat(tree / "run.sh").st_mode & 0o100


def test_revert_restores_untracked_and_small_ignored_files_from_copies(tree: Path,
                                                                        snap: Any) -> None:
    """Issue 11, case 2: an untracked file changed during the turn is put back."""
    big = tree / "build" / "big.bin"
    big.write_bytes(b"\0" * (COPY_LIMITS["ignored"] + 1))
    base = snap(tree)
    (tree / "pkg" / "sub").mkdir(parents=True)
    (tree / "pkg" / "sub" / "new.py").write_text("new\n")
    (tree / "node_modules" / "left-pad").mkdir()
    (tree / "node_modules" / "left-pad" / "index.js").write_text("pad\n")
    (tree / ".env").write_text("TOKEN=changed\n")
    (tree / "notes.txt").write_text("my notes, overwritten\n")
    big.write_bytes(b"\1" * 10)
    result = undo.revert(base)
    assert sorted((r["path"], r["action"]) for r in result.reverted) == [
        (".env", "restored_from_copy"), ("node_modules/left-pad/index.js", "removed"),
        ("notes.txt", "restored_from_copy"), ("pkg/sub/new.py", "removed")]
    assert (tree / "notes.txt").read_text() == "my untracked notes\n"
    assert (tree / ".env").read_text() == "TOKEN=abc\n"
    assert not (tree / "pkg").exists() and not (tree / "node_modules" / "left-pad").exists()
    assert (tree / "node_modules" / "pkg").is_dir()  # held files at snapshot: kept
    # Above the size limit for ignored files there is no copy: listed, never touched.
    [left] = result.not_reverted
    assert left["path"] == "build/big.bin" and "no copy" in left["reason"]
    assert big.read_bytes() == b"\1" * 10
    assert result.clean_after is False


def test_revert_leaves_files_the_turn_did_not_change_alone(tree: Path, snap: Any) -> None:
    bystanders = ["lib/util.py", "notes.txt", ".env", "node_modules/pkg/index.js", "README.md"]
    old = time.time() - 3600  # so that any rewrite would show in the mtime
    for path in bystanders:
        os.utime(tree / path, (old, old))
    before = {path: fingerprint(tree / path) for path in bystanders}
    base = snap(tree)
    (tree / "app.py").write_text("changed\n")
    (tree / "added.txt").write_text("added\n")
    result = undo.revert(base)
    assert result.clean_after and len(result.reverted) == 2
    assert {path: fingerprint(tree / path) for path in bystanders} == before


def test_revert_refuses_a_file_that_moved_since_the_check(tree: Path, snap: Any) -> None:
    base = snap(tree)
    (tree / "app.py").write_text("first change\n")
    (tree / "added.txt").write_text("added\n")
    changes = compare(base)
    (tree / "app.py").write_text("second change, by someone else\n")
    (tree / "added.txt").write_text("edited after the check\n")
    result = undo.revert(base, changes)
    assert result.reverted == []
    assert {r["path"] for r in result.not_reverted} == {"app.py", "added.txt"}
    assert all("changed again" in r["reason"] for r in result.not_reverted)
    assert (tree / "app.py").read_text() == "second change, by someone else\n"
    assert (tree / "added.txt").exists()


def test_revert_never_deletes_a_nested_repository(tree: Path, snap: Any) -> None:
    base = snap(tree)
    fresh = tree / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    result = undo.revert(base)
    assert [r["path"] for r in result.not_reverted] == ["fresh/"]
    assert (fresh / ".git").is_dir()


def test_without_a_store_a_dirty_file_is_not_restored(tree: Path) -> None:
    base = snapshot.take(tree)
    (tree / "lib" / "util.py").write_text("changed\n")
    result = undo.revert(base)
    assert result.not_reverted[0]["path"] == "lib/util.py"
    assert "no copy" in result.not_reverted[0]["reason"]
    assert (tree / "lib" / "util.py").read_text() == "changed\n"


# --- the baseline file -------------------------------------------------------------------


def test_baseline_round_trip_with_a_non_utf8_name(tree: Path, snap: Any, tmp_path: Path) -> None:
    odd = os.fsencode(tree) + b"/caf\xe9.txt"
    with open(odd, "wb") as f:
        f.write(b"latin-1 name\n")
    saved = tmp_path / "base.json"
    snap(tree).save(saved)
    data = json.loads(saved.read_text(encoding="ascii"))
    assert data["format"] == 2 and data["kind"] == "guard baseline" and data["mode"] == "git"
    base = Baseline.load(saved)
    assert found(base) == []
    with open(odd, "wb") as f:
        f.write(b"changed\n")
    assert found(base) == [(os.fsdecode(b"caf\xe9.txt"), "modified")]


# --- the CLI verbs -------------------------------------------------------------------------


def test_cli_snapshot_check_revert(tree: Path, sparring: Any) -> None:
    snapshot = sparring("guard", "snapshot", "--out", "base.json")  # inside the repository
    assert snapshot.exit_code == 0, snapshot.raw
    assert snapshot.out["mode"] == "git" and snapshot.out["root"] == str(tree)
    assert Path(snapshot.out["baseline"]) == tree / "base.json"
    clean = sparring("guard", "check", "--baseline", "base.json")
    assert clean.exit_code == 0 and clean.out["clean"] is True and clean.out["changed"] == []

    (tree / "app.py").write_text("changed\n")
    (tree / "new.txt").write_text("new\n")
    check = sparring("guard", "check", "--baseline", "base.json")
    assert check.exit_code == 0
    assert {k: check.out[k] for k in ("clean", "changed", "root", "mode")} == {
        "clean": False, "root": str(tree), "mode": "git",
        "changed": [{"path": "app.py", "change": "modified"},
                    {"path": "new.txt", "change": "added"}]}

    revert = sparring("guard", "revert", "--baseline", "base.json")
    assert revert.exit_code == 0
    assert [{k: r[k] for k in ("path", "change", "action")} for r in revert.out["reverted"]] == [
        {"path": "new.txt", "change": "added", "action": "removed"},
        {"path": "app.py", "change": "modified", "action": "restored_from_git"}]
    assert [Path(r["kept"]).read_text() for r in revert.out["reverted"]] == ["new\n", "changed\n"]
    assert revert.out["not_reverted"] == [] and revert.out["clean_after"] is True


@pytest.mark.parametrize("content", ["{not json", "[]", '{"format": 1}',
                                     '{"format": 1, "kind": "guard baseline", "mode": "git"}'])
def test_cli_corrupt_baseline_is_reported_and_kept(tree: Path, sparring: Any, scratch: Path,
                                                   content: str) -> None:
    path = scratch / "base.json"
    path.write_text(content)
    for verb in ("check", "revert"):
        result = sparring("guard", verb, "--baseline", str(path))
        assert result.exit_code == 1 and result.error_code == "state_corrupt"
        assert path.read_text() == content


def test_cli_missing_baseline(tree: Path, sparring: Any, scratch: Path) -> None:
    result = sparring("guard", "check", "--baseline", str(scratch / "nope.json"))
    assert result.exit_code == 1 and result.error_code == "file_not_found"
    assert not (scratch / "nope.json").exists()


# --- edges ---------------------------------------------------------------------------------


def test_a_tab_in_a_tracked_path_takes_the_exact_parser(tree: Path, snap: Any) -> None:
    (tree / "odd\tname.txt").write_text("tab\n")
    git(tree, "add", "odd\tname.txt")
    git(tree, "commit", "-q", "-m", "tab")
    base = snap(tree)
    assert "odd\tname.txt" in base.index and found(base) == []
    (tree / "odd\tname.txt").write_text("tab, changed\n")
    git(tree, "commit", "-q", "-am", "committed during the turn")
    assert ("odd\tname.txt", "modified") in found(base)


def test_a_repository_without_commits(tmp_path: Path, snap: Any) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    (root / "draft.txt").write_text("draft\n")
    base = snap(root)
    assert base.mode == "git" and found(base) == []
    (root / "draft.txt").write_text("draft 2\n")
    assert found(base) == [("draft.txt", "modified")]


def test_a_broken_repository_is_a_git_failed_error(tmp_path: Path) -> None:
    root = tmp_path / "broken"
    root.mkdir()
    (root / ".git").write_text("gitdir: /nowhere\n")
    with pytest.raises(SparringError) as err:
        snapshot.take(root)
    assert err.value.code == "git_failed" and err.value.hint


def test_cli_prints_a_non_utf8_name_with_escapes(tree: Path, sparring: Any,
                                                 scratch: Path) -> None:
    saved = scratch / "base.json"
    assert sparring("guard", "snapshot", "--out", str(saved)).exit_code == 0
    with open(os.fsencode(tree) + b"/caf\xe9.txt", "wb") as f:
        f.write(b"new\n")
    check = sparring("guard", "check", "--baseline", str(saved))
    assert check.out["changed"] == [{"path": "caf\\xe9.txt", "change": "added"}]


@pytest.mark.parametrize("how_many", [1, 40])  # below and above the raw-listing lookups
def test_index_lookups_find_the_right_entry(repo: Path, tmp_path: Path, how_many: int) -> None:
    names = ["b.py", "a/b.py", "x\tb.py", "ab.py"] + [f"many/f{n}.py" for n in range(how_many)]
    for name in names:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(f"{name}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "names")
    base = snapshot.take(repo, store=tmp_path / "store")
    base.save(tmp_path / "b.json")
    loaded = Baseline.load(tmp_path / "b.json")  # the listing is in the store now
    changed = ["b.py"] + [f"many/f{n}.py" for n in range(how_many)]
    for name in changed:
        (repo / name).write_text("changed\n")
    assert found(loaded) == sorted((name, "modified") for name in changed)
    git(repo, "commit", "-q", "-am", "committed during the turn")  # the index moves too
    assert found(Baseline.load(tmp_path / "b.json")) == sorted(
        (name, "modified") for name in changed)


def test_a_snapshot_reuses_what_the_previous_one_read(tree: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12: an untracked or ignored file whose stat data has not moved is not read
    again; one that moved is, and its new copy lands in the store."""
    store = tmp_path / "store"
    monkeypatch.setattr(snapshot, "RACY_MARGIN_NS", 0)
    time.sleep(0.05)
    first = snapshot.take(tree, store=store)
    (tree / "notes.txt").write_text("my untracked notes, edited\n")
    read: list[str] = []
    real_copy = copies.copy_into
    monkeypatch.setattr(copies, "copy_into", lambda path, into: read.append(
        Path(path).name) or real_copy(path, into))
    monkeypatch.setattr(files, "hash_file", lambda path: read.append(Path(path).name) or "")
    second = snapshot.take(tree, store=store, previous=first)
    assert read == ["notes.txt"]
    assert second.entries[".env"] == first.entries[".env"] and second.entries[".env"].copied
    assert second.entries["notes.txt"].digest != first.entries["notes.txt"].digest
    assert (store / str(second.entries["notes.txt"].digest)).read_text() == \
        "my untracked notes, edited\n"
    # Another root's baseline lends nothing.
    assert snapshot.take(tree, store=store, previous=Baseline(
        tmp_path, "walk", (), None, 0, {})).entries.keys() == second.entries.keys()


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_file_hidden_from_git_status_during_the_turn_is_still_seen(tree: Path, snap: Any,
                                                                      flag: str) -> None:
    base = snap(tree)
    git(tree, "update-index", flag, "app.py")
    (tree / "app.py").write_text("print('hidden, then changed')\n")
    assert "app.py" not in git(tree, "status", "--porcelain")
    assert found(base) == [("app.py", "modified")]


def test_python_m_sparring_guard_check_gives_the_same_answer(
        tree: Path, scratch: Path, sparring: Any) -> None:
    """`python -m sparring guard check --baseline F`, a process of its own, answers as the
    CLI does in process (the index moved too: git reads it again)."""
    import subprocess
    import sys

    saved = scratch / "base.json"
    assert sparring("guard", "snapshot", "--out", str(saved)).exit_code == 0
    (tree / "app.py").write_text("changed\n")
    git(tree, "add", "app.py")
    (tree / "new.txt").write_text("new\n")
    for args in (["--baseline", str(saved)], ["--baseline", str(scratch / "missing.json")]):
        done = subprocess.run([sys.executable, "-m", "sparring", "guard", "check", *args],
                              cwd=tree, capture_output=True, text=True, timeout=60)
        expected = sparring("guard", "check", *args).out
        assert json.loads(done.stdout) == expected, done.stderr
    assert expected["error"]["code"] == "file_not_found"
