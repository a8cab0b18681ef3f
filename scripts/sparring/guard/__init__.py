"""The file-modification guard: did a Codex turn change the user's files?

`take` records the tree before a turn, `compare` lists what differs after it,
`revert` puts back what can be put back, and never destroys anything. The unit
is the file (a regular file or a symlink) under the project root; directories
are not entries, so an empty directory created or removed is not a change.

**What counts as a change.** A file is *modified* when its bytes differ, its
executable bit differs, its type differs (file / symlink), or, for a symlink,
its target differs: what git would record. A `touch`, a `chmod 600` or a
rewrite with identical bytes is *not* a change, everywhere (tracked, untracked,
ignored, outside git); stat data only decides when contents need hashing. A
path is looked at with lstat *along the whole path*: a file whose folder was
swapped for a symlink (`mv src src.bak && ln -s src.bak src`) is gone from
where it was, however alike the file read through the link looks.

**In a git repository** (the root holds `.git`) git does the bulk of the work:

- *Tracked files that git vouches for.* `git ls-files --stage` gives each
  tracked path its blob id; `git status` (porcelain, `-z`, `-uall`,
  `--ignored`) lists every path whose worktree differs from the index. A
  tracked path that status does not list has exactly its index blob as
  content, by git's own racy-safe stat+hash check. So the snapshot keeps the
  index listing (path -> mode and blob id), and a later check asks the same
  two questions: for a path clean before and after, the content changed iff
  the blob id did (this also catches `git commit`, `stash` or `checkout`
  during the turn, after which status is clean again). The index listing is
  re-read only when `.git/index` changed (its trailing checksum), and parsed
  only when the listing did (or a check needs a path's old entry). That
  reading, and the lstat of the files below, happen while `git status` runs,
  so a check costs little more than status.
- *Everything git cannot vouch for* - files dirty in the worktree (status
  column Y), untracked files, ignored files (status in "traditional" ignored
  mode with `-uall` lists each ignored file, not the collapsed directory),
  files flagged assume-unchanged or skip-worktree, conflicted paths. For
  these the snapshot stores lstat data (mode, size, mtime, ctime, inode) and
  a SHA-256 of the contents (of the target, for a symlink). The check lstats
  them again and hashes only when the stat data differs: ctime and inode
  cannot be set back by a program, so a same-size rewrite whose mtime was
  restored with `utime` still differs, and the hash then confirms whether the
  bytes really changed. Files whose ctime falls within `RACY_MARGIN_NS` of
  the snapshot are hashed on every check, because a change in the same clock
  tick as the snapshot could leave the stat data equal (git's "racy clean").
  A snapshot given the previous one reuses its hash of a file whose stat data
  has not moved (and its copy, when the store has it), so it reads only what
  changed.
- A tracked file that was clean before but is not clean after is compared by
  `git hash-object` (with the repository's filters), so the ids compare with
  the index blob ids exactly.
- Nested repositories (untracked, status line `?? dir/`) are opaque: compared
  by their status line, never looked into, reported with their status spelling
  (`dir/`), and never touched by `revert`. A submodule's checked-out commit is
  compared the same way (its index entry and status line: reported as its
  path, never reverted); its files are not: git never runs inside a submodule
  (`git status --ignore-submodules=dirty`, see git.py), and the snapshot walks
  each checked-out submodule's worktree itself, like files outside git (origin
  `submodule`), so a change there is named and reverted.
- *git's own folder.* `.git/config`, `.git/hooks/` and `.git/info/` (and a
  worktree's `config.worktree`, `info/` and `.git` file), and everything under
  `.git/modules/` but each git folder's data (objects, refs, logs, the index),
  are watched like untracked files: a planted hook or a new filter driver is a
  change. Every git command runs through `guard/git.py`, in the git folder found
  at snapshot, with fsmonitor, hooks, transports, replace refs and any filter
  driver not configured at snapshot time switched off, so a check never runs
  what a turn planted.

**Outside git** the tree is walked (`.git` directories skipped) and every
file is recorded with lstat data and a hash, compared the same way.

**Copies.** With a `store` (a folder, content-addressed so snapshots may share
it), the snapshot keeps a copy of every file git cannot restore: dirty tracked
files, untracked files and files outside git up to `COPY_LIMITS`, ignored files
and git's own files up to a smaller limit (a `node_modules/` is rebuilt, not
restored).

**Areas.** The caller may watch folders the tree listing leaves out (the
runner watches the session's own folder under `.sparring/`): each is walked
and compared like files outside git, with its own exclusions; what changes
there is reported and never reverted.

Never reported: the root's `.sparring/` (sparring's own state, unless watched
as an area) and paths matching the `exclude` globs (relative to the root,
fnmatch syntax, where `*` also crosses `/`; a pattern matching a directory
covers what is inside).

**Revert** recomputes nothing blindly and destroys nothing. For each change it
first checks the path is still exactly as the check saw it (same lstat data
along the path, or still absent). What it removes (a file the turn added) or
replaces (the turn's version of a file it restores) is moved into a trash
folder under `.sparring/guard-trash/`, never deleted. A file is restored from
its blob (`cat-file --filters`, as a checkout would), or from the snapshot's
copy with its permissions and mtime; only into real folders, never through a
symlink. Anything in doubt is listed with the reason and left as it is: a
file changed since the check, a nested repository, a file without a copy, an
added file that holds the content of a file revert cannot put back (it may be
the only copy of the user's work), sparring's own state, a path outside the
root. Revert restores files, not git's index or HEAD.

The guard assumes the tree is quiet while a snapshot or check runs (the
runner calls them between turns).

The package, one module per part: `files` (lstat along a path, walking, hashing), `copies`
(the content-addressed store), `gitlist` (reading what git lists), `model` (entries,
changes, areas), `records` (the records as written, typed), `baseline` (the baseline and
its file), `snapshot` (take), `early` and `check` (compare), `undo` (revert).
"""

from __future__ import annotations

from sparring.guard.baseline import FORMAT, KIND, Baseline
from sparring.guard.check import compare
from sparring.guard.copies import COPY_LIMITS, MIB
from sparring.guard.early import start_early
from sparring.guard.model import (
    AREA_ORIGINS,
    CHANGES_KIND,
    Area,
    Change,
    Entry,
    RevertResult,
    load_changes,
    save_changes,
)
from sparring.guard.records import AreaRecord, BaselineRecord, ChangeRecord, TurnGuard, Violation
from sparring.guard.snapshot import RACY_MARGIN_NS, take
from sparring.guard.undo import revert

__all__ = [
    "AREA_ORIGINS", "CHANGES_KIND", "COPY_LIMITS", "FORMAT", "KIND", "MIB", "RACY_MARGIN_NS",
    "Area", "AreaRecord", "Baseline", "BaselineRecord", "Change", "ChangeRecord", "Entry",
    "RevertResult", "TurnGuard", "Violation", "compare", "load_changes", "revert",
    "save_changes", "start_early", "take",
]
