"""The baseline: the tree at one moment, and its file (format 2; format 1 still loads)."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sparring import paths
from sparring.errors import SparringError
from sparring.guard.copies import store_bytes
from sparring.guard.files import sha256
from sparring.guard.git import git_dir
from sparring.guard.gitlist import find_record, parse_index
from sparring.guard.model import Area, Entry, damaged
from sparring.guard.records import BaselineRecord
from sparring.store import witness, workspace
from sparring.store.locate import BASELINE_FILE
from sparring.store.statefile import StateFile, write_atomic

FORMAT = 2
KIND = "guard baseline"
_FEW_LOOKUPS = 32  # index entries a check looks up in the raw listing before parsing it


def kept_as_baseline(path: str | Path) -> bool:
    """Whether a record lies where sparring keeps a baseline: the inbox (`guard snapshot
    --out`) or a turn's folder. Witnessed records elsewhere (a sealed analysis) hold words
    of Claude's or Codex's, never a baseline of sparring's."""
    found = witness.split(path)
    parts = found[1].split("/") if found else []
    return parts[:1] == ["inbox"] or (len(parts) == 5 and parts[0] == "sessions"
                                      and parts[2] == "turns" and parts[4] == BASELINE_FILE)


class Baseline:
    """The tree at one moment; see the package docstring for what is kept and why.

    With a store, the bulk (the entries of files git does not vouch for, the index listing)
    lives there, content-addressed, and is read when first needed: a check starts git
    before it reads them, and identical entries of two turns are kept once.
    """

    def __init__(self, root: Path, mode: str, exclude: tuple[str, ...], store: Path | None,
                 racy_ns: int, entries: dict[str, Entry] | None = None, *,
                 index_digest: str = "", listing_digest: str = "", entries_digest: str = "",
                 areas: dict[str, Area] | None = None,
                 area_entries: dict[str, Entry] | None = None,
                 filters: dict[str, str] | None = None, includes: bool = False,
                 index: dict[str, str] | None = None, gitdir: Path | None = None) -> None:
        self.root, self.mode, self.exclude, self.store = root, mode, exclude, store
        self.racy_ns = racy_ns
        self._entries = entries
        self.index_digest, self.listing_digest = index_digest, listing_digest
        self.entries_digest = entries_digest
        self.areas = areas or {}
        self.area_entries = area_entries or {}
        self.filters = filters or {}  # the filter drivers configured at snapshot: trusted
        self.includes = includes  # the config had include directives at snapshot
        self._index = index
        self._gitdir = gitdir  # the git folder at snapshot, where every later git command looks
        self._listing: bytes | None = None
        self._lookups = 0
        self._read: tuple[Path, bytes] | None = None  # the file and bytes load() read
        self._anyones = False  # from_dict: a file's words

    @property
    def gitdir(self) -> Path:
        """The git folder found at snapshot (a baseline from before it was recorded: the one
        `root/.git` names now)."""
        return self._gitdir or git_dir(self.root)

    @property
    def trusted(self) -> bool:
        """Sparring's own: taken here, or loaded from bytes sparring wrote as a baseline, where
        it keeps them (kept_as_baseline), and kept its copy of. Only such a one has revert
        touch git's folder or a protected file, and lends a new snapshot its digests. Asked
        by revert and snapshot alone (a check reads no copy for it)."""
        if self._read is not None:
            return kept_as_baseline(self._read[0]) and witness.holds(*self._read)
        return not self._anyones

    @property
    def entries(self) -> dict[str, Entry]:
        if self._entries is None:
            # Checked by its digest (_stored): rows as sparring wrote them, built without
            # the per-field checks of a file that could say anything.
            rows = json.loads(self._stored(self.entries_digest, "entries"))
            self._entries = {path: Entry(o, tuple(s) if s else None, d, t, c == 1, st)
                             for path, (o, s, d, t, c, st) in rows.items()}
        return self._entries

    @property
    def index(self) -> dict[str, str]:
        """Path -> "TAG MODE BLOB STAGE" of the index at snapshot, parsed on first use."""
        if self._index is None:
            self._index = {} if self.mode != "git" else parse_index(self.listing())[0]
        return self._index

    def listing(self) -> bytes:
        """The index at snapshot as `git ls-files --stage -v -z` printed it."""
        if self._listing is None:
            if self._index is not None:  # kept inline: spell it as git did
                self._listing = b"".join(f"{meta}\t{path}\0".encode("utf-8", "surrogateescape")
                                         for path, meta in self._index.items())
            else:
                self._listing = self._stored(self.listing_digest, "index listing")
        return self._listing

    def meta(self, path: str) -> str | None:
        """`index[path]`, found in the raw listing while few are asked for (a check asks for
        a handful; parsing 50,000 entries for them would cost more than git status)."""
        if self._index is not None or self.mode != "git":
            return self.index.get(path)
        self._lookups += 1
        if self._lookups > _FEW_LOOKUPS:
            return self.index.get(path)
        return find_record(self.listing(), path)

    def bulk(self) -> set[str]:
        """The names of this baseline's own bulk in its store (what loading it reads)."""
        return {d for d in (self.listing_digest, self.entries_digest) if d}

    def stored(self) -> set[str]:
        """The names of what this baseline keeps in its store: its bulk and its copies."""
        found = self.bulk()
        for entry in itertools.chain(self.entries.values(), self.area_entries.values()):
            if entry.copied and entry.digest:
                found.add(entry.digest)
        return found

    def _stored(self, digest: str, what: str) -> bytes:
        path = (self.store or Path("/nonexistent")) / digest
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise damaged(path, f"(its {what}) cannot be read ({exc.strerror})") from exc
        if sha256(data) != digest:
            raise damaged(path, f"(its {what}) was changed")
        return data

    def save(self, path: Path, witness: bool = False) -> None:
        """Write atomically; ASCII JSON so that non-UTF-8 file names survive the round trip.
        With `witness`, one of sparring's records (a turn's baseline, or one `guard snapshot`
        writes into `.sparring/`): its copy is kept out of Codex's reach (store/witness.py)."""
        write_atomic(path, json.dumps(self.to_dict(), ensure_ascii=True, separators=(",", ":")),
                     witness=witness)

    @classmethod
    def load(cls, path: Path) -> Baseline:
        """Read a saved baseline; a missing or damaged file is an error and is left untouched.
        A turn's baseline is read as the runner wrote it (its witness); it is `trusted`
        when sparring wrote these very bytes and kept its copy of them."""
        record = StateFile(path, KIND, FORMAT, {1: _from_format_1}, witness=True)
        try:
            raw = record.raw()
        except FileNotFoundError:
            raise SparringError(
                "file_not_found", f"no baseline at {path}",
                "write one first with `sparring guard snapshot --out FILE`", path=str(path),
            ) from None
        try:
            base = cls.from_dict(record.parse(raw))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise damaged(path, f"is damaged ({exc!r})") from exc
        base._read = (path, raw)
        return base

    def to_dict(self) -> BaselineRecord:
        data: BaselineRecord = {
            "format": FORMAT, "kind": KIND, "root": str(self.root), "mode": self.mode,
            "exclude": list(self.exclude), "store": str(self.store) if self.store else None,
            "racy_ns": self.racy_ns, "index_digest": self.index_digest,
            "listing_digest": self.listing_digest, "filters": self.filters,
            "includes": self.includes,
            "git_dir": str(self._gitdir) if self._gitdir else None,
            "areas": {path: area.to_dict() for path, area in self.areas.items()},
            "area_entries": {path: e.to_row() for path, e in self.area_entries.items()},
        }
        rows = json.dumps({path: e.to_row() for path, e in self.entries.items()},
                          ensure_ascii=True, separators=(",", ":")).encode("ascii")
        if self.store is None:  # nowhere else to keep the bulk: keep it here
            data["entries"] = json.loads(rows)
            data["index"] = self.index
        else:
            data["entries_digest"] = sha256(rows)
            store_bytes(self.store, data["entries_digest"], rows)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Baseline:
        """A baseline from a file's contents, every field checked (the file could say
        anything): ValueError, KeyError or TypeError when it does not hold."""
        if data.get("kind") != KIND or data.get("mode") not in ("git", "walk"):
            raise ValueError("not a guard baseline")
        index = data.get("index")
        if index is not None and (not isinstance(index, dict)
                                  or not all(isinstance(v, str) for v in index.values())):
            raise ValueError("bad index")
        filters = data.get("filters") or {}
        if not all(isinstance(v, str) for v in filters.values()):
            raise ValueError("bad filters")
        entries = data.get("entries")
        base = cls(
            Path(data["root"]), data["mode"], tuple(str(p) for p in data["exclude"]),
            Path(data["store"]) if data.get("store") else None, int(data["racy_ns"]),
            None if entries is None else {str(p): Entry.from_row(e) for p, e in entries.items()},
            index_digest=str(data["index_digest"]), listing_digest=str(data["listing_digest"]),
            entries_digest=str(data.get("entries_digest", "")),
            areas={str(p): Area(str(a["origin"]), tuple(str(x) for x in a["exclude"]))
                   for p, a in (data.get("areas") or {}).items()},
            area_entries={str(p): Entry.from_row(e)
                          for p, e in (data.get("area_entries") or {}).items()},
            filters=dict(filters), includes=bool(data.get("includes")), index=index,
            gitdir=Path(data["git_dir"]) if data.get("git_dir") else None,
        )
        base._anyones = True  # anyone's words, until load() finds sparring's copy of them
        return base


def _from_format_1(data: dict[str, Any]) -> dict[str, Any]:
    """Format 1 kept the index inline and watched no areas; it reads as is."""
    return {**data, "format": 2}


# A baseline lists every file of the tree: far more than a text handed in, still bounded.
BASELINE_LIMIT = 1 << 30


def named(path: Path) -> Path:
    """A baseline named by --baseline: a regular file inside the project, reached without a
    link (paths.check_file), checked before anything reads it or starts git for it."""
    return paths.check_file(path, workspace.find_root(Path.cwd()), "--baseline",
                            BASELINE_LIMIT).path


def of_project(path: Path, root: Path) -> Baseline:
    """The baseline at `path`, when it is one of this project's. The file says which tree it
    watches, where its copies are and which git folder to run git in; a baseline sparring
    did not write (handed into the inbox, committed in a clone) could name any of them
    elsewhere, and `check` would read there, `revert` move files away there, and git run
    with the configuration of a folder someone planted."""
    base = Baseline.load(path)
    real = os.path.realpath(root)
    if os.path.realpath(base.root) != real:
        why = f"watches {base.root}, not this project ({real})"
    elif base.store is not None and not _within(os.path.abspath(base.store), real):
        why = f"keeps its copies in {base.store}, outside the project"
    elif not (os.path.realpath(base.gitdir) == os.path.realpath(git_dir(Path(real)))
              or _within(os.path.abspath(base.gitdir), os.path.join(real, ".git"))):
        why = f"runs git in {base.gitdir}, which is not this project's git folder"
    else:
        return base
    raise SparringError(
        "state_corrupt", f"the guard baseline {path} {why}",
        "the file was left untouched; take a new one with `sparring guard snapshot`",
        path=str(path))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
