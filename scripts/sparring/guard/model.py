"""What the guard records: an entry per file it cannot vouch for otherwise, the areas it
watches beside the tree, the changes a check finds (and their file), what a revert did."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from sparring.errors import SparringError
from sparring.guard.files import Stat, keeper, spelled, walk
from sparring.guard.records import AreaRecord, ChangeRecord, EntryRow
from sparring.store.statefile import StateFile

CHANGES_KIND = "guard changes"
AREA_ORIGINS = ("gitdir", "state", "submodule")


class Entry(NamedTuple):
    """What the snapshot knows of one path git does not vouch for.

    `stat` is None when the path was absent (a tracked file already deleted).
    `digest` is the SHA-256 of the contents or of a symlink's target, None for
    other file types or unreadable files. Opaque entries (nested repositories,
    submodules) carry git's status code instead. (A named tuple: a baseline
    holds thousands, made fast.)
    """

    origin: str  # tracked | untracked | ignored | walk | nested | new | gitdir | state | submodule
    stat: Stat | None = None
    digest: str | None = None
    target: str | None = None
    copied: bool = False
    status: str | None = None

    def to_row(self) -> EntryRow:
        """Compact JSON: [origin, stat, digest, target, copied, status]."""
        return [self.origin, list(self.stat) if self.stat else None, self.digest,
                self.target, int(self.copied), self.status]

    @classmethod
    def from_row(cls, row: Any) -> Entry:
        if isinstance(row, dict):  # format 1
            row = [row["origin"], row.get("stat"), row.get("digest"), row.get("target"),
                   row.get("copied"), row.get("status")]
        origin, raw, digest, target, copied, status = row
        return cls(str(origin), stat_from(raw), digest, target, bool(copied), status)


def stat_from(raw: Any) -> Stat | None:
    """Stat data read back from a file, checked: five integers, or None."""
    if raw is None:
        return None
    if (not isinstance(raw, list) or len(raw) != 5
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in raw)):
        raise ValueError(f"bad stat {raw!r}")
    return raw[0], raw[1], raw[2], raw[3], raw[4]


class Change(NamedTuple):
    """One path that differs from the snapshot.

    `origin` says what the path was before (tracked, untracked, ignored, walk,
    nested, gitdir, state, or new when it did not exist); `seen` is its lstat
    data when the check looked (None: absent), so `revert` can refuse if it
    moved since.
    """

    path: str
    change: str  # added | modified | deleted
    origin: str
    seen: Stat | None

    def to_dict(self) -> dict[str, str]:
        """As shown to Claude and kept in session.json: the path spelled (files.spelled)."""
        return {"path": spelled(self.path), "change": self.change}

    def to_record(self) -> ChangeRecord:
        return {"path": self.path, "change": self.change, "origin": self.origin,
                "seen": list(self.seen) if self.seen else None}

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Change:
        if data.get("change") not in ("added", "modified", "deleted"):
            raise ValueError(f"bad change {data.get('change')!r}")
        return cls(str(data["path"]), data["change"], str(data["origin"]),
                   stat_from(data.get("seen")))


class RevertResult:
    """What a revert did: each item `{"path", "change"}` plus `action` and `kept` (where the
    replaced or removed file went) when reverted, `reason` when not; paths spelled
    (files.spelled)."""

    def __init__(self) -> None:
        self.reverted: list[dict[str, str]] = []
        self.not_reverted: list[dict[str, str]] = []
        self.clean_after = False
        self.trash: str | None = None  # where removed and replaced files went

    def to_dict(self) -> dict[str, Any]:
        return {"reverted": self.reverted, "not_reverted": self.not_reverted,
                "clean_after": self.clean_after, "trash": self.trash}


class Area(NamedTuple):
    """A folder (or file) outside the listed tree, watched by lstat and hash."""

    origin: str  # gitdir | state | submodule
    exclude: tuple[str, ...] = ()

    def to_dict(self) -> AreaRecord:
        return {"origin": self.origin, "exclude": list(self.exclude)}


def walk_areas(root: Path, areas: dict[str, Area]) -> dict[str, tuple[str, os.stat_result]]:
    """Every file and symlink of the watched areas (a folder, or one file), with its origin;
    symlinks are recorded, never followed."""
    found: dict[str, tuple[str, os.stat_result]] = {}
    for place, area in areas.items():
        keep = keeper(area.exclude, own_state=False)
        try:
            st = os.lstat(root / place)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            if keep(place):
                found[place] = (area.origin, st)
            continue
        for path, item in walk(root, keep, prefix=place + "/").items():
            found[path] = (area.origin, item)
    return found


def save_changes(path: Path, changes: Sequence[Change]) -> None:
    """What a check found, with the stat data it saw, so a revert can undo exactly that (one
    of the runner's records: its copy is kept out of Codex's reach, store/witness.py)."""
    StateFile(path, CHANGES_KIND, 1, witness=True).create(
        {"changes": [c.to_record() for c in changes]})


def load_changes(path: Path) -> list[Change]:
    data = StateFile(path, CHANGES_KIND, 1, witness=True).read()
    try:
        return [Change.from_record(item) for item in data["changes"]]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise damaged(path, f"(the changes a check recorded) is damaged ({exc!r})") from exc


def damaged(path: Path, why: str) -> SparringError:
    return SparringError(
        "state_corrupt", f"the guard baseline {path} {why}",
        "the file was left untouched; take a new one with `sparring guard snapshot`",
        path=str(path),
    )
