"""git's index read directly (guard/gitindex.py): a check whose index got only new stat data
since the snapshot skips `git ls-files`, and gives the very verdict the slow path gives.

Every index here is made by real git; the reading is compared with `git ls-files --stage -v
-z` itself, and each check with the same check made with no shape (git lists the index).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from sparring import guard
from sparring.guard import gitindex
from sparring.guard.git import Git
from sparring.guard.gitlist import LS_FILES, index_digest
from support.gitrepo import git


def listed(repo: Path) -> bytes:
    return Git(repo).run(*LS_FILES)


def raw(repo: Path) -> bytes | None:
    return gitindex.read(repo / ".git")


@pytest.fixture
def saved(repo: Path, tmp_path: Path) -> Path:
    """A baseline of `repo` (more files, one of them dirty, one untracked), saved."""
    for n in range(20):
        (repo / "src" / f"m{n}.py").parent.mkdir(exist_ok=True)
        (repo / "src" / f"m{n}.py").write_text(f"module {n}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "modules")
    (repo / "app.py").write_text("print('dirty')\n")
    (repo / "notes.txt").write_text("untracked\n")
    path = tmp_path / "base.json"
    guard.take(repo, store=tmp_path / "store").save(path)
    return path


def verdicts(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[str]]:
    """The check through the shape and the same check without one (git lists the index):
    both verdicts must agree; returns it, and the git commands the fast one started."""
    started: list[str] = []
    start = Git.start
    monkeypatch.setattr(Git, "start", lambda self, *args: started.append(args[0])
                        or start(self, *args))
    fast = guard.compare(guard.Baseline.load(path))
    monkeypatch.setattr(Git, "start", start)
    slow_base = guard.Baseline.load(path)
    slow_base.index_shape = ""
    assert guard.compare(slow_base) == fast
    return [(c.path, c.change) for c in fast], started


def test_the_reading_is_gits_own_listing_for_every_kind_of_entry(repo: Path) -> None:
    """Executable, symlink, submodule, non-UTF-8 and tab names, a path longer than the flags
    can hold, assume-unchanged, skip-worktree and intent-to-add (extended flags, version 3),
    conflicted stages, and the extensions git writes (cache tree, untracked cache, resolve
    undo, end of index, offset table)."""
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    os.symlink("app.py", repo / "link")
    (repo / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1\n")
    (repo / "a\tb.txt").write_text("tab\n")
    git(repo, "add", "-A")
    oid = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{oid},vendored")
    blob = git(repo, "rev-parse", "HEAD:app.py").strip()
    deep = "/".join(["d" * 200] * 22) + "/long.txt"  # longer than the flags' 12 bits hold
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{deep}")
    git(repo, "commit", "-q", "-m", "all kinds")
    git(repo, "update-index", "--assume-unchanged", "app.py")
    git(repo, "update-index", "--skip-worktree", "README.md")
    (repo / "later.py").write_text("later\n")
    git(repo, "add", "-N", "later.py")
    git(repo, "-c", "core.untrackedCache=true", "-c", "index.threads=2",
        "-c", "index.recordEndOfIndexEntries=true", "-c", "index.recordOffsetTable=true",
        "update-index", "--untracked-cache", "--force-write-index", "-q", "--refresh")
    records = b"\0" + listed(repo)
    assert b"\0h " in records and b"\0S " in records and deep.encode() in records
    index = raw(repo) or b""
    assert index[4:8] == (3).to_bytes(4, "big")
    assert all(name in index for name in (b"TREE", b"UNTR", b"EOIE", b"IEOT"))
    assert gitindex.listing(raw(repo) or b"", 20) == listed(repo)
    assert gitindex.proven_shape(raw(repo), listed(repo))


def test_conflicted_stages_and_resolve_undo_are_read_as_git_lists_them(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "app.py").write_text("print('other')\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "app.py").write_text("print('main')\n")
    git(repo, "commit", "-q", "-am", "main")
    with pytest.raises(subprocess.CalledProcessError):  # a conflict
        git(repo, "merge", "-q", "other")
    assert b"\0M " in b"\0" + listed(repo)
    assert gitindex.listing(raw(repo) or b"", 20) == listed(repo)
    git(repo, "add", "app.py")  # resolved: a resolve-undo extension now
    assert b"REUC" in (raw(repo) or b"")
    assert gitindex.listing(raw(repo) or b"", 20) == listed(repo)


@pytest.mark.parametrize("layout", ["version 4", "split index", "sparse index",
                                    "required unknown extension", "cut short"])
def test_an_index_that_cannot_be_read_exactly_has_no_shape(repo: Path, layout: str) -> None:
    if layout == "version 4":
        git(repo, "update-index", "--index-version", "4")
    elif layout == "split index":
        git(repo, "update-index", "--split-index")
    elif layout == "sparse index":
        git(repo, "sparse-checkout", "init", "--cone", "--sparse-index")
        git(repo, "sparse-checkout", "set", "nothing")
    index = raw(repo) or b""
    if layout == "required unknown extension":
        index = index[:-20] + b"zzzz" + bytes(4) + bytes(20)
    elif layout == "cut short":
        index = index[:40]
    assert gitindex.shape(index, 20) is None and gitindex.listing(index, 20) is None
    assert gitindex.proven_shape(index, listed(repo)) == ""


def test_a_sparse_or_split_index_at_snapshot_leaves_the_check_to_git(
        saved: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(repo, "update-index", "--split-index")
    base = guard.take(repo, store=tmp_path / "store")
    assert base.index_shape == ""
    base.save(saved)
    (repo / "src" / "m1.py").write_text("changed\n")
    git(repo, "add", "src/m1.py")
    found, started = verdicts(saved, monkeypatch)
    assert found == [("src/m1.py", "modified")] and "ls-files" in started


def test_new_stat_data_only_skips_ls_files(saved: Path, repo: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    later = time.time() + 5
    for path in repo.rglob("*.py"):
        os.utime(path, (later, later))
    git(repo, "update-index", "-q", "--really-refresh")
    assert index_digest(repo / ".git") != guard.Baseline.load(saved).index_digest
    found, started = verdicts(saved, monkeypatch)
    assert found == [] and started == ["status"]


@pytest.mark.parametrize("turn", ["commit", "add", "assume-unchanged", "skip-worktree",
                                  "remove", "chmod"])
def test_changed_entries_are_listed_by_git(saved: Path, repo: Path, turn: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Any change to an entry (its blob, a flag, its mode, the entry itself) changes the
    shape: git lists the index, and the verdict is the slow path's."""
    target = repo / "src" / "m3.py"
    if turn == "commit":
        target.write_text("committed in the turn\n")
        git(repo, "commit", "-q", "-am", "turn")
        expected = [("src/m3.py", "modified")]  # app.py committed as it was: no change
    elif turn == "add":
        target.write_text("staged in the turn\n")
        git(repo, "add", "src/m3.py")
        expected = [("src/m3.py", "modified")]
    elif turn in ("assume-unchanged", "skip-worktree"):
        git(repo, "update-index", f"--{turn}", "src/m3.py")
        target.write_text("hidden from status\n")
        expected = [("src/m3.py", "modified")]
    else:  # the entry gone from the index, or its mode changed: the file's bytes are as
        # they were, which is what counts (docs/guard.md)
        if turn == "remove":
            git(repo, "rm", "-q", "--cached", "src/m3.py")
        else:
            git(repo, "update-index", "--chmod=+x", "src/m3.py")
        expected = []
    found, started = verdicts(saved, monkeypatch)
    assert found == expected and "ls-files" in started


def test_a_racily_clean_entry_is_still_seen(saved: Path, repo: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry racily clean at snapshot (its mtime not before the index's), rewritten in the
    turn with the same size and mtime, then the index rewritten with new stat data of
    another file: the shape is the snapshot's, and git status, which the check still asks,
    finds the file changed."""
    target = repo / "src" / "m4.py"
    future = time.time() + 3600
    os.utime(target, (future, future))
    git(repo, "update-index", "-q", "--refresh")  # the entry's mtime is after the index's
    guard.take(repo, store=tmp_path / "store").save(saved)
    before = target.stat()
    target.write_text("module X\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size
    later = time.time() + 5
    os.utime(repo / "src" / "m8.py", (later, later))
    git(repo, "update-index", "-q", "--refresh")
    assert index_digest(repo / ".git") != guard.Baseline.load(saved).index_digest
    found, started = verdicts(saved, monkeypatch)
    assert found == [("src/m4.py", "modified")] and "ls-files" not in started


def test_files_replaced_by_links_and_fifos_under_a_rewritten_index(
        saved: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "src" / "m5.py").unlink()
    os.symlink("m6.py", repo / "src" / "m5.py")
    (repo / "src" / "m7.py").unlink()
    os.mkfifo(repo / "src" / "m7.py")
    later = time.time() + 5
    os.utime(repo / "src" / "m8.py", (later, later))
    git(repo, "status", "--porcelain")  # rewrites the index's stat data
    found, started = verdicts(saved, monkeypatch)
    assert found == [("src/m5.py", "modified"), ("src/m7.py", "modified")]
    assert "ls-files" not in started


def test_an_older_baseline_without_a_shape_still_asks_git(
        saved: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = guard.Baseline.load(saved)
    record = base.to_dict()
    del record["index_shape"]  # type: ignore[misc]
    old = guard.Baseline.from_dict(record)
    assert old.index_shape == ""
    later = time.time() + 5
    os.utime(repo / "src" / "m1.py", (later, later))
    git(repo, "update-index", "-q", "--refresh")
    started: list[str] = []
    start = Git.start
    monkeypatch.setattr(Git, "start", lambda self, *args: started.append(args[0])
                        or start(self, *args))
    assert guard.compare(old) == []
    assert sorted(started) == ["ls-files", "status"]
