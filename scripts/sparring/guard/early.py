"""git for a check, and git started early: `sparring guard check` spends most of its time
waiting for git status, so it starts git before the rest of the check loads (cli/entry.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from sparring.errors import SparringError
from sparring.guard.baseline import Baseline
from sparring.guard.files import key, lstat
from sparring.guard.git import Git
from sparring.guard.gitlist import LS_FILES, STATUS, index_digest

# git processes started before the command line machinery loaded (start_early), by
# (root, git settings, the command's arguments).
_EARLY: dict[tuple[str, tuple[str, ...], tuple[str, ...]], Callable[[], bytes]] = {}


def start_early(path: Path) -> None:
    """Start the `git status` (and `git ls-files`, when the index moved) a check of the
    baseline at `path` will need, now.

    `sparring guard check` spends most of its time waiting for git; cli/entry.py calls this
    before the rest of the check loads, so the two overlap. compare() takes a started
    process if its git settings match, else starts its own. A baseline that cannot be read
    starts nothing (the check then reports why)."""
    try:
        base = Baseline.load(path)
    except SparringError:
        return
    if base.mode != "git" or not base.root.is_dir():
        return
    git = git_for(base)
    for args in (STATUS, LS_FILES) if index_digest(base.gitdir) != base.index_digest else (
            STATUS,):
        _EARLY[_early_key(git, args)] = git.start(*args)


def _early_key(git: Git, args: tuple[str, ...]) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    return f"{git.root}\0{git.gitdir}", tuple(git.overrides), args


def git_output(git: Git, *args: str) -> Callable[[], bytes]:
    """`git ARGS` for a check: the process start_early began, or a new one."""
    return _EARLY.pop(_early_key(git, args), None) or git.start(*args)


def finish_early() -> None:
    """Started early but not needed after all: let each end, never leave one behind."""
    while _EARLY:
        with contextlib.suppress(SparringError):
            _EARLY.popitem()[1]()


def git_for(b: Baseline) -> Git:
    """git for a check: when the repository's config may have changed since the snapshot,
    every filter driver it did not have then is switched off (reading the config costs a
    git process; with the config files as they were, and no include directives that
    could point anywhere, there is nothing new to find)."""
    if b.includes or _config_moved(b):
        return Git(b.root, b.gitdir, b.filters)
    return Git(b.root, b.gitdir)


def _config_moved(b: Baseline) -> bool:
    for place, area in b.areas.items():
        if area.origin != "gitdir" or not place.endswith(("/config", "/config.worktree")):
            continue
        before = b.area_entries.get(place)
        now = key(lstat(b.root / place))
        if before is None or before.stat is None:
            if now is not None:
                return True
        elif now != before.stat or before.stat[3] >= b.racy_ns:
            return True
    return False
