"""The file-modification guard: did a Codex turn change the user's files?

`take` records the tree before a turn, `compare` lists what differs after it,
`revert` puts back what can be put back safely. The unit is the file (a
regular file or a symlink) under the project root; directories are not
entries, so an empty directory created or removed is not a change.

**What counts as a change.** A file is *modified* when its bytes differ, its
executable bit differs, its type differs (file / symlink), or, for a symlink,
its target differs: what git would record. A `touch`, a `chmod 600` or a
rewrite with identical bytes is *not* a change, everywhere (tracked, untracked,
ignored, outside git); stat data only decides when contents need hashing.

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
  only when the listing did. That reading, and the lstat of the files below,
  happen while `git status` runs, so a check costs little more than status.
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
- A tracked file that was clean before but is not clean after is compared by
  `git hash-object` (with the repository's filters), so the ids compare with
  the index blob ids exactly.
- Nested repositories (untracked, status line `?? dir/`) and submodules are
  opaque: they are compared by their status line and index entry in the
  parent, never looked into. Such a path is reported with its status spelling
  (a nested repository as `dir/`), and `revert` never touches it.

**Outside git** the tree is walked (`.git` directories skipped) and every
file is recorded with lstat data and a hash, compared the same way.

Never reported: the root's `.sparring/` (sparring's own state) and paths
matching the `exclude` globs (relative to the root, fnmatch syntax, where `*`
also crosses `/`; a pattern matching a directory covers what is inside).

**Revert** recomputes nothing blindly. For each change it first checks the
path is still exactly as the check saw it (same lstat data, or still absent),
then: an added file is removed (with directories it leaves empty that held
nothing at snapshot time); a tracked file clean before is rewritten from its
blob (`cat-file --filters`, so line endings and filters match a checkout); a
tracked file dirty before is rewritten from the copy `take` kept in `store`,
with its permissions and mtime. What has no trustworthy copy - untracked and
ignored files that existed before, everything outside git, nested
repositories - is listed with the reason, untouched. Revert restores files,
not git's index or HEAD.

The guard assumes the tree is quiet while a snapshot or check runs (the
runner calls them between turns). Git commands run with optional locks off,
so the guard never rewrites `.git/index` under a concurrent git command.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import itertools
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from sparring.errors import SparringError
from sparring.state import PRIVATE_FILE, StateFile, private_dir, write_atomic
from sparring.workspace import STATE_DIR

if TYPE_CHECKING:
    import git

FORMAT = 1
KIND = "guard baseline"
# A file whose ctime is this close to the snapshot may share a clock tick with
# a later change; it is hashed on every check. Generous: ticks are ~4-10 ms.
RACY_MARGIN_NS = 2_000_000_000
_CHUNK = 1 << 20
_HASH_BATCH = 500  # paths per `git hash-object` call, well under ARG_MAX

Stat = tuple[int, int, int, int, int]  # st_mode, st_size, st_mtime_ns, st_ctime_ns, st_ino
Keep = Callable[[str], bool]

_ORIGINS = {"??": "untracked", "!!": "ignored"}
_NOT_KEPT = {
    "untracked": "untracked before the turn: sparring keeps no copy of untracked files",
    "ignored": "ignored by git: sparring keeps no copy of ignored files",
    "walk": "outside git: sparring keeps no copy of files",
    "tracked": "no copy of its pre-turn content was kept (no store given, or copying failed)",
}


@dataclass(frozen=True)
class Entry:
    """What the snapshot knows of one path git does not vouch for.

    `stat` is None when the path was absent (a tracked file already deleted).
    `digest` is the SHA-256 of the contents or of a symlink's target, None for
    other file types or unreadable files. Opaque entries (nested repositories,
    submodules) carry git's status code instead.
    """

    origin: str  # tracked | untracked | ignored | walk | nested | new
    stat: Stat | None = None
    digest: str | None = None
    target: str | None = None
    copied: bool = False
    status: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"origin": self.origin}
        for key in ("stat", "digest", "target", "copied", "status"):
            value = getattr(self, key)
            if value not in (None, False):
                data[key] = list(value) if key == "stat" else value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Entry:
        raw = data.get("stat")
        if raw is not None and (len(raw) != 5 or not all(isinstance(n, int) for n in raw)):
            raise ValueError(f"bad stat {raw!r}")
        key: Stat | None = (raw[0], raw[1], raw[2], raw[3], raw[4]) if raw else None
        return cls(str(data["origin"]), key, data.get("digest"), data.get("target"),
                   bool(data.get("copied")), data.get("status"))


@dataclass(frozen=True)
class Change:
    """One path that differs from the snapshot.

    `origin` says what the path was before (tracked, untracked, ignored, walk,
    nested, or new when it did not exist); `seen` is its lstat data when the
    check looked (None: absent), so `revert` can refuse if it moved since.
    """

    path: str
    change: str  # added | modified | deleted
    origin: str
    seen: Stat | None

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "change": self.change}


@dataclass
class RevertResult:
    reverted: list[dict[str, str]] = field(default_factory=list)
    not_reverted: list[dict[str, str]] = field(default_factory=list)
    clean_after: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"reverted": self.reverted, "not_reverted": self.not_reverted,
                "clean_after": self.clean_after}


@dataclass
class Baseline:
    """The tree at one moment; see the module docstring for what is kept and why."""

    root: Path
    mode: str  # git | walk
    exclude: tuple[str, ...]
    store: Path | None
    racy_ns: int
    entries: dict[str, Entry]
    index: dict[str, str] = field(default_factory=dict)  # path -> "TAG MODE BLOB STAGE"
    index_digest: str = ""
    listing_digest: str = ""

    def save(self, path: Path) -> None:
        """Write atomically; ASCII JSON so that non-UTF-8 file names survive the round trip."""
        write_atomic(path, json.dumps(self.to_dict(), ensure_ascii=True, separators=(",", ":")))

    @classmethod
    def load(cls, path: Path) -> Baseline:
        """Read a saved baseline; a missing or damaged file is an error and is left untouched."""
        try:
            data = StateFile(path, KIND, FORMAT).read()
        except FileNotFoundError:
            raise SparringError(
                "file_not_found", f"no baseline at {path}",
                "write one first with `sparring guard snapshot --out FILE`", path=str(path),
            ) from None
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SparringError(
                "state_corrupt", f"the guard baseline {path} is damaged ({exc!r})",
                "the file was left untouched; take a new one with `sparring guard snapshot`",
                path=str(path),
            ) from exc

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "kind": KIND, "root": str(self.root), "mode": self.mode,
            "exclude": list(self.exclude), "store": str(self.store) if self.store else None,
            "racy_ns": self.racy_ns, "index_digest": self.index_digest,
            "listing_digest": self.listing_digest, "index": self.index,
            "entries": {path: entry.to_dict() for path, entry in self.entries.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Baseline:
        if data.get("kind") != KIND or data.get("mode") not in ("git", "walk"):
            raise ValueError("not a guard baseline")
        index = data["index"]
        if not isinstance(index, dict) or not all(isinstance(v, str) for v in index.values()):
            raise ValueError("bad index")
        return cls(
            Path(data["root"]), data["mode"], tuple(str(p) for p in data["exclude"]),
            Path(data["store"]) if data.get("store") else None, int(data["racy_ns"]),
            {str(p): Entry.from_dict(e) for p, e in data["entries"].items()},
            index, str(data["index_digest"]), str(data["listing_digest"]),
        )


# --- take -------------------------------------------------------------------------------


def take(root: Path, exclude: Sequence[str] = (), store: Path | None = None) -> Baseline:
    """Record the tree under `root`; `store` (a directory) receives copies of dirty tracked files.

    Copies are named by their SHA-256, so snapshots may share one store.
    """
    root = root.resolve()
    _require_dir(root)
    racy_ns = time.time_ns() - RACY_MARGIN_NS
    if store is not None:
        private_dir(store)
    if (root / ".git").exists():
        return _take_git(root, tuple(exclude), store, racy_ns)
    keep = _keeper(exclude)
    entries = {path: _record(root / path, "walk", st) for path, st in _walk(root, keep).items()}
    return Baseline(root, "walk", tuple(exclude), store, racy_ns, entries)


def _take_git(root: Path, exclude: tuple[str, ...], store: Path | None, racy_ns: int) -> Baseline:
    keep = _keeper(exclude)
    with _open(root) as repo:
        # Digest before listing: if the index moves in between, the check re-reads it.
        index_digest = _index_digest(repo)
        status = _start(repo, *_STATUS)
        # Read and parse the index while status runs (status prints only at its end).
        listing = _git(repo, *_LS_FILES)
        index, all_vouchable = _parse_index(listing)
        listed = _listed(status(), keep)
    for path in [] if all_vouchable else _unvouched(index, keep):
        listed.setdefault(path, "")
    entries = {path: _git_entry(root, path, code, index.get(path), store)
               for path, code in listed.items()}
    return Baseline(root, "git", exclude, store, racy_ns, entries, index, index_digest,
                    _sha256(listing))


def _git_entry(root: Path, path: str, code: str, meta: str | None, store: Path | None) -> Entry:
    if _is_opaque(path, meta):
        return Entry("nested", status=code)
    origin = "tracked" if meta is not None else _ORIGINS.get(code, "tracked")
    return _record(root / path, origin, _lstat(root / path),
                   store if origin == "tracked" else None)


def _record(path: Path, origin: str, st: os.stat_result | None,
            store: Path | None = None) -> Entry:
    """lstat + content fingerprint, re-read until the file holds still (three tries)."""
    for _ in range(3):
        if st is None:
            return Entry(origin)
        digest, target = _fingerprint(path, st, store)
        again = _lstat(path)
        if _key(again) == _key(st):
            break
        st = again
    assert st is not None
    copied = store is not None and stat.S_ISREG(st.st_mode) and digest is not None
    return Entry(origin, _key(st), digest, target, copied)


def _fingerprint(path: Path, st: os.stat_result,
                 store: Path | None) -> tuple[str | None, str | None]:
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        return _sha256(os.fsencode(target)), target
    if not stat.S_ISREG(st.st_mode):
        return None, None
    try:
        return (_copy_into(path, store) if store else _hash_file(path)), None
    except OSError:
        return None, None


# --- compare ----------------------------------------------------------------------------


def compare(baseline: Baseline) -> list[Change]:
    """Every file that differs from `baseline`, sorted by path."""
    _require_dir(baseline.root)
    if baseline.mode == "walk":
        changes = _compare_walk(baseline)
    else:
        with _open(baseline.root) as repo:
            changes = _compare_git(baseline, repo)
    return sorted(changes, key=lambda change: change.path)


def _compare_walk(b: Baseline) -> list[Change]:
    found = _walk(b.root, _keeper(b.exclude))
    verdicts = (_judge_stat(b, path, b.entries.get(path, Entry("new")), found.get(path))
                for path in b.entries.keys() | found.keys())
    return [change for change in verdicts if change]


@dataclass
class _GitNow:
    listed: dict[str, str]  # path -> status code, for paths git does not vouch for now
    index: dict[str, str]


@dataclass(frozen=True)
class _Pending:
    """A file clean in the index before and not vouched for now: needs `git hash-object`."""

    path: str
    meta: str
    seen: Stat


def _compare_git(b: Baseline, repo: git.Repo) -> list[Change]:
    keep = _keeper(b.exclude)
    index_moved = _index_digest(repo) != b.index_digest
    status = _start(repo, *_STATUS)
    # Until status() the work overlaps git's: status prints only when it is done,
    # so it never waits on a pipe we are not reading yet.
    index, unvouched = _index_now(repo, b, keep) if index_moved else (b.index, [])
    moved = set() if index is b.index else {
        path for path, _ in b.index.items() ^ index.items() if keep(path)}
    seen = {path: _lstat(_at(b, path)) for path in b.entries}
    listed = _listed(status(), keep)
    for path in unvouched:
        listed.setdefault(path, "")
    now = _GitNow(listed, index)
    settled = {path for path, entry in b.entries.items()
               if _unmoved(entry, seen[path], b.racy_ns)}
    changes: list[Change] = []
    pending: list[_Pending] = []
    for path in (b.entries.keys() | now.listed.keys() | moved) - (settled - moved):
        verdict = _judge_git(b, now, path, seen)
        if isinstance(verdict, _Pending):
            pending.append(verdict)
        elif verdict:
            changes.append(verdict)
    return changes + _settle(repo, b, pending)


def _index_now(repo: git.Repo, b: Baseline, keep: Keep) -> tuple[dict[str, str], list[str]]:
    """The index listing now, and its entries git status would not speak for."""
    raw = _git(repo, *_LS_FILES)
    if _sha256(raw) == b.listing_digest:
        # A refresh rewrote the index with new stat data only: same entries, no parse.
        # (The baseline's own unvouched entries are all in b.entries already.)
        return b.index, []
    index, all_vouchable = _parse_index(raw)
    return index, [] if all_vouchable else _unvouched(index, keep)


def _unmoved(entry: Entry, st: os.stat_result | None, racy_ns: int) -> bool:
    """Same stat data, from outside the racy window: the contents cannot have changed."""
    return (st is not None and entry.stat is not None and entry.stat[3] < racy_ns
            and entry.stat == _key_of(st))


def _judge_git(b: Baseline, now: _GitNow, path: str,
               seen: dict[str, os.stat_result | None]) -> Change | _Pending | None:
    before_meta = b.index.get(path)
    if _is_opaque(path, before_meta, now.index.get(path)):
        return _judge_opaque(b, now, path)
    entry = b.entries.get(path)
    if entry is None and before_meta is not None:
        return _judge_blob(b, now, path, before_meta)
    st = seen[path] if path in seen else _lstat(_at(b, path))
    return _judge_stat(b, path, entry or Entry("new"), st)


def _judge_stat(b: Baseline, path: str, entry: Entry, st: os.stat_result | None) -> Change | None:
    key = _key(st)
    if entry.stat is None or key is None:
        if entry.stat is None and key is None:
            return None
        return Change(path, "added" if key else "deleted", entry.origin, key)
    if key == entry.stat and entry.stat[3] < b.racy_ns:
        return None
    assert st is not None
    if _same_content(_content(_at(b, path), st), _content_of(entry)):
        return None
    return Change(path, "modified", entry.origin, key)


def _judge_blob(b: Baseline, now: _GitNow, path: str, meta: str) -> Change | _Pending | None:
    after = now.index.get(path)
    if after is not None and path not in now.listed:
        if _blob_id(after) == _blob_id(meta):
            return None
        return Change(path, "modified", "tracked", _key(_lstat(_at(b, path))))
    st = _lstat(_at(b, path))
    if st is None:
        return Change(path, "deleted", "tracked", None)
    if stat.S_ISREG(st.st_mode):
        return _Pending(path, meta, _key_of(st))
    if stat.S_ISLNK(st.st_mode):
        link_id = ("120000", _git_blob_id(os.fsencode(os.readlink(_at(b, path))), meta))
        if link_id == _blob_id(meta):
            return None
    return Change(path, "modified", "tracked", _key_of(st))


def _judge_opaque(b: Baseline, now: _GitNow, path: str) -> Change | None:
    entry = b.entries.get(path)
    before = ((entry.status or "") if entry else "", _blob_id(b.index.get(path)))
    after = (now.listed.get(path, ""), _blob_id(now.index.get(path)))
    if before == after:
        return None
    kind = "added" if not any(before) else "deleted" if not any(after) else "modified"
    return Change(path, kind, "nested", None)


def _settle(repo: git.Repo, b: Baseline, pending: list[_Pending]) -> list[Change]:
    """Hash the pending files as git would (filters applied) and keep those that differ."""
    changes = []
    for start in range(0, len(pending), _HASH_BATCH):
        batch = pending[start:start + _HASH_BATCH]
        ids = _git(repo, "hash-object", "--", *(p.path for p in batch)).decode().split()
        for item, blob in zip(batch, ids, strict=True):
            mode = "100755" if item.seen[0] & stat.S_IXUSR else "100644"
            if (mode, blob) != _blob_id(item.meta):
                changes.append(Change(item.path, "modified", "tracked", item.seen))
    return changes


# --- revert -----------------------------------------------------------------------------


class _Refused(Exception):
    """A change revert leaves alone; the message is the reason shown to the user."""


def revert(baseline: Baseline, changes: Sequence[Change] | None = None) -> RevertResult:
    """Undo `changes` (default: a fresh `compare`) where that is safe; see the module docstring.

    Pass the changes an earlier check returned to revert exactly those: any
    file that moved since that check is left alone and listed.
    """
    todo = compare(baseline) if changes is None else list(changes)
    result = RevertResult()
    known = _known_dirs(baseline)
    with _open_if_git(baseline) as repo:
        for change in sorted(todo, key=_revert_order):
            try:
                action = _revert_one(baseline, repo, change, known)
            except _Refused as refused:
                result.not_reverted.append(_outcome(change, reason=str(refused)))
            except OSError as exc:
                result.not_reverted.append(_outcome(change, reason=f"could not write: {exc}"))
            else:
                result.reverted.append(_outcome(change, action=action))
    result.clean_after = not compare(baseline)
    return result


def _revert_order(change: Change) -> tuple[int, int, str]:
    # Removals first, deepest first (so emptied directories can go), then restores.
    depth = change.path.count("/")
    return (0, -depth, change.path) if change.change == "added" else (1, depth, change.path)


def _outcome(change: Change, **extra: str) -> dict[str, str]:
    return {"path": change.path, "change": change.change, **extra}


def _revert_one(b: Baseline, repo: git.Repo | None, change: Change, known: set[str]) -> str:
    if change.origin == "nested":
        raise _Refused("a nested repository or submodule: sparring does not look inside it")
    if _key(_lstat(b.root / change.path)) != change.seen:
        raise _Refused("it changed again since it was checked; left as it is")
    if change.change == "added":
        _remove(b.root, change.path, known)
        return "removed"
    if change.origin != "tracked":
        raise _Refused(_NOT_KEPT.get(change.origin, "sparring kept no copy of it"))
    entry = b.entries.get(change.path)
    if entry is None:
        return _restore_blob(b, repo, change.path)
    return _restore_entry(b, change.path, entry)


def _restore_blob(b: Baseline, repo: git.Repo | None, path: str) -> str:
    mode, blob = _blob_id(b.index[path]) or ("", "")
    if repo is None or mode not in ("100644", "100755", "120000"):
        raise _Refused(f"cannot restore an entry of mode {mode}")
    if mode == "120000":
        _put_link(b.root / path, os.fsdecode(_git(repo, "cat-file", "blob", blob)))
    else:
        data = _git(repo, "cat-file", "--filters", f"--path={path}", blob)
        _put_file(b.root / path, lambda f: f.write(data), 0o777 if mode == "100755" else 0o666)
    return "restored_from_git"


def _restore_entry(b: Baseline, path: str, entry: Entry) -> str:
    if entry.target is not None:
        _put_link(b.root / path, entry.target)
        return "restored_link"
    if not (entry.copied and b.store and entry.stat and entry.digest):
        raise _Refused(_NOT_KEPT["tracked"])
    copy, digest, st = b.store / entry.digest, entry.digest, entry.stat

    def fill(out: BinaryIO) -> None:
        if _copy_stream(copy, out) != digest:
            raise _Refused(f"the snapshot's copy {copy} is damaged")

    _put_file(b.root / path, fill, stat.S_IMODE(st[0]), exact=True)
    os.utime(b.root / path, ns=(st[2], st[2]))
    return "restored_from_copy"


def _remove(root: Path, path: str, known: set[str]) -> None:
    """Unlink, then remove parent directories it leaves empty that held nothing at snapshot."""
    os.unlink(root / path)
    parent = path.rpartition("/")[0]
    while parent and parent not in known:
        try:
            os.rmdir(root / parent)
        except OSError:
            return
        parent = parent.rpartition("/")[0]


def _known_dirs(b: Baseline) -> set[str]:
    known: set[str] = set()
    for path in itertools.chain(b.index, b.entries):
        parent = path.rstrip("/").rpartition("/")[0]
        while parent and parent not in known:
            known.add(parent)
            parent = parent.rpartition("/")[0]
    return known


def _put_file(dest: Path, fill: Callable[[BinaryIO], object], perms: int,
              exact: bool = False) -> None:
    """Write through a temp file in the same directory, then replace: never half a file.

    `perms` passes through the umask, as a checkout would, unless `exact`.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.sparring-{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, perms)
    try:
        with os.fdopen(fd, "wb") as out:
            fill(out)
            if exact:
                os.fchmod(out.fileno(), perms)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _put_link(dest: Path, target: str) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.sparring-{secrets.token_hex(4)}")
    os.symlink(target, tmp)
    os.replace(tmp, dest)


# --- git: the one door ------------------------------------------------------------------


@contextlib.contextmanager
def _open(root: Path) -> Iterator[git.Repo]:
    try:
        import git
    except ImportError as exc:  # GitPython refuses to import when git is missing
        raise _git_failed(root, exc) from exc
    try:
        repo = git.Repo(root)
    except git.exc.GitError as exc:
        raise _git_failed(root, exc) from exc
    # Never take index.lock: a concurrent `git commit` of the user must not fail because of us.
    repo.git.update_environment(GIT_OPTIONAL_LOCKS="0")
    try:
        yield repo
    finally:
        repo.close()


@contextlib.contextmanager
def _open_if_git(b: Baseline) -> Iterator[git.Repo | None]:
    if b.mode != "git":
        yield None
        return
    with _open(b.root) as repo:
        yield repo


def _git(repo: git.Repo, verb: str, *args: str) -> bytes:
    return _start(repo, verb, *args)()


def _start(repo: git.Repo, verb: str, *args: str) -> Callable[[], bytes]:
    """Start `git VERB ARGS` now; the call returned waits for it and gives its stdout."""
    import git

    root = Path(str(repo.working_tree_dir))
    try:
        handle = getattr(repo.git, verb.replace("-", "_"))(*args, as_process=True)
    except git.exc.GitError as exc:
        raise _git_failed(root, exc) from exc

    def finish() -> bytes:
        out, err = handle.proc.communicate()
        if handle.proc.returncode != 0:
            raise _git_failed(root, f"`git {verb}` said: {_decode(err).strip()}")
        assert isinstance(out, bytes)
        return out

    return finish


def _git_failed(root: Path, exc: object) -> SparringError:
    return SparringError(
        "git_failed", f"git could not report the state of {root}: {exc}",
        "check that `git status` works in that directory (git installed, repository intact)",
        root=str(root),
    )


# Traditional --ignored with -uall lists each ignored file, not the collapsed directory.
_STATUS = ("status", "--porcelain", "-z", "--untracked-files=all", "--ignored", "--no-renames")
_LS_FILES = ("ls-files", "--stage", "-v", "-z")


def _listed(raw: bytes, keep: Keep) -> dict[str, str]:
    """From `git status`: paths whose worktree differs from the index, untracked, ignored."""
    listed = {}
    for record in _decode(raw).split("\0"):
        code, path = record[:2], record[3:]
        # Column Y blank: the worktree matches the index, which the index listing covers.
        if path and code[1] != " " and keep(path):
            listed[path] = code
    return listed


def _parse_index(listing: bytes) -> tuple[dict[str, str], bool]:
    """`ls-files --stage -v -z` -> ({path: "TAG MODE BLOB STAGE"}, every entry vouchable?).

    With no tab in any path (the usual case) the work is done by C string
    methods, about 10x faster than a loop over 50,000 entries; then "\0H " can
    only start a record and " 0\t" only end its metadata, so counting them
    says whether every entry has tag H and stage 0.
    """
    text = _decode(listing)
    records = text.count("\0")
    if text.count("\t") != records:  # a tab in some path: the slow, exact way
        index = {path: meta for meta, _, path in (r.partition("\t") for r in text.split("\0") if r)}
        return index, False
    all_vouchable = ("\0" + text).count("\0H ") == records == text.count(" 0\t")
    parts = text.replace("\t", "\0").split("\0")
    return dict(zip(parts[1::2], parts[0:-1:2], strict=True)), all_vouchable


def _unvouched(index: dict[str, str], keep: Keep) -> list[str]:
    """Index entries git status stays silent about even when their file changes."""
    return [path for path, meta in index.items() if not _vouchable(meta) and keep(path)]


def _vouchable(meta: str) -> bool:
    # Tag H: an ordinary entry (not assume-unchanged, not skip-worktree); stage 0: no conflict.
    return meta.startswith("H ") and meta.endswith(" 0")


def _blob_id(meta: str | None) -> tuple[str, str] | None:
    if meta is None:
        return None
    parts = meta.split(" ")
    return parts[1], parts[2]


def _is_opaque(path: str, before: str | None, after: str | None = None) -> bool:
    """A nested repository (status spells it `dir/`) or a submodule (index mode 160000)."""
    return (path.endswith("/") or (before is not None and " 160000 " in before)
            or (after is not None and " 160000 " in after))


def _git_blob_id(data: bytes, like: str) -> str:
    """The id git gives a blob of `data`, in the hash of the repository `like` came from."""
    algorithm = "sha1" if len(like.split(" ")[2]) == 40 else "sha256"
    return hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()


def _index_digest(repo: git.Repo) -> str:
    """Identify the index's content by git's own trailing checksum of it (cheap: 32 bytes).

    The trailer is a hash of everything before it; with `index.skipHash` it is
    zeros, and then the whole file is hashed instead.
    """
    try:
        with open(Path(repo.git_dir) / "index", "rb") as index:
            size = index.seek(0, os.SEEK_END)
            index.seek(max(0, size - 32))
            tail = index.read()
            if tail.endswith(bytes(20)):
                index.seek(0)
                return _sha256(index.read())
    except FileNotFoundError:
        return ""
    return f"{size}:{tail.hex()}"


# --- files --------------------------------------------------------------------------------


def _walk(root: Path, keep: Keep) -> dict[str, os.stat_result]:
    """Every file and symlink under root, by relative path; `.git` directories skipped."""
    found: dict[str, os.stat_result] = {}
    pending = [""]
    while pending:
        prefix = pending.pop()
        with contextlib.suppress(OSError), os.scandir(root / prefix) as listing:
            for item in listing:
                path = prefix + item.name
                if not keep(path):
                    continue
                if item.is_dir(follow_symlinks=False):
                    if item.name != ".git":
                        pending.append(path + "/")
                else:
                    found[path] = item.stat(follow_symlinks=False)
    return found


def _keeper(exclude: Iterable[str]) -> Keep:
    """A predicate: False for `.sparring/` and for paths an exclude glob covers."""
    patterns = [p.strip("/") for p in exclude if p.strip("/")]
    regex = re.compile("|".join(fnmatch.translate(p) for p in patterns)) if patterns else None
    own = STATE_DIR + "/"

    def keep(path: str) -> bool:
        if path.startswith(own) or path == STATE_DIR:
            return False
        if regex is None:
            return True
        parts = path.rstrip("/").split("/")
        return not any(regex.match("/".join(parts[:n])) for n in range(1, len(parts) + 1))

    return keep


def _at(b: Baseline, path: str) -> str:
    # A string join: pathlib's `/` costs ~10 us, a third of a check's own time on 5,000 files.
    return f"{b.root}/{path}"


def _lstat(path: str | Path) -> os.stat_result | None:
    """lstat, with None for a missing path - and for a directory, which is not a file."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return None if stat.S_ISDIR(st.st_mode) else st


def _key(st: os.stat_result | None) -> Stat | None:
    return None if st is None else _key_of(st)


def _key_of(st: os.stat_result) -> Stat:
    # No st_dev: it can change across reboots on some file systems without any write.
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


Content = tuple[int, bool, str | None]  # file type, executable bit, digest


def _content(path: str | Path, st: os.stat_result) -> Content:
    kind = stat.S_IFMT(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return kind, False, _sha256(os.fsencode(os.readlink(path)))
    if not stat.S_ISREG(st.st_mode):
        return kind, False, None
    try:
        digest: str | None = _hash_file(path)
    except OSError:
        digest = None
    return kind, bool(st.st_mode & stat.S_IXUSR), digest


def _content_of(entry: Entry) -> Content:
    assert entry.stat is not None
    mode = entry.stat[0]
    return stat.S_IFMT(mode), stat.S_ISREG(mode) and bool(mode & stat.S_IXUSR), entry.digest


def _same_content(a: Content, b: Content) -> bool:
    # An unreadable regular file (digest None) is never vouched for: report it.
    return a == b and (a[0] != stat.S_IFREG or a[2] is not None)


def _hash_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as src:
        for chunk in iter(lambda: src.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_stream(path: Path, out: BinaryIO) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as src:
        for chunk in iter(lambda: src.read(_CHUNK), b""):
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def _copy_into(path: Path, store: Path) -> str:
    """Copy `path` into `store` under its SHA-256 (one read: hashed while copied)."""
    tmp = store / f".copy-{secrets.token_hex(8)}"
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE),
                       "wb") as out:
            digest = _copy_stream(path, out)
        os.replace(tmp, store / digest)  # same name, same bytes: replacing is harmless
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return digest


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _decode(raw: bytes) -> str:
    # As os.fsdecode does: a non-UTF-8 file name survives as surrogate escapes.
    return raw.decode("utf-8", "surrogateescape")


def _require_dir(root: Path) -> None:
    if not root.is_dir():
        raise SparringError("file_not_found", f"{root} is not a directory",
                            "pass the project directory (it must exist)", path=str(root))
