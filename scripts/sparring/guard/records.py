"""The guard's records as they are written: the baseline file, the changes a check saw, and
the `guard` record of a turn. TypedDicts, so mypy proves their keys where they are built;
what is read back from disk is checked field by field where it is loaded (baseline.py,
model.py), since a file could say anything.
"""

from __future__ import annotations

from typing import Any, TypedDict

# One entry, as a compact JSON row: [origin, stat, digest, target, copied, status].
EntryRow = list[Any]


class AreaRecord(TypedDict):
    origin: str  # gitdir | state | submodule
    exclude: list[str]


class _BaselineFields(TypedDict):
    format: int
    kind: str
    root: str
    mode: str  # git | walk
    exclude: list[str]
    store: str | None
    racy_ns: int
    index_digest: str
    listing_digest: str
    filters: dict[str, str]
    includes: bool
    areas: dict[str, AreaRecord]
    area_entries: dict[str, EntryRow]


class BaselineRecord(_BaselineFields, total=False):
    """A baseline file (format 2). Without a store the bulk is inline (`entries`, `index`);
    with one, `entries_digest` names it there (and `listing_digest` the index listing)."""

    entries: dict[str, EntryRow]
    index: dict[str, str]
    entries_digest: str
    git_dir: str | None  # the git folder at snapshot (git mode)


class ChangeRecord(TypedDict):
    """One change as a check saw it (guard-changes.json), so a revert can undo exactly it."""

    path: str
    change: str  # added | modified | deleted
    origin: str
    seen: list[int] | None  # lstat data when looked at, None when absent


class Violation(TypedDict):
    code: str  # guard_violation
    message: str
    hint: str


class _TurnGuardFields(TypedDict):
    checked: bool
    clean: bool | None  # None: not checked
    changed: list[dict[str, str]]  # {"path", "change"}, sorted by path
    violation: Violation | None


class TurnGuard(_TurnGuardFields, total=False):
    """A turn's `guard` record in session.json, as the runner writes it after the turn
    (`guard accept` and `guard revert --session` add `accepted`, `accepted_at` and
    `reverted` to it later)."""

    baseline: str
