"""What git lists, read: `git status` and the index listing (`git ls-files --stage`).

Parsing only: every git command runs through `sparring.guard.git.Git`, the guard's one way to git.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from sparring.guard.files import Keep, decode, sha256

# Traditional --ignored with -uall lists each ignored file, not the collapsed directory.
# Submodules: their checked-out commit only, never their worktree (see git.py).
STATUS = ("status", "--porcelain", "-z", "--untracked-files=all", "--ignored", "--no-renames",
          "--ignore-submodules=dirty")
LS_FILES = ("ls-files", "--stage", "-v", "-z")


def listed(raw: bytes, keep: Keep) -> dict[str, str]:
    """From `git status`: paths whose worktree differs from the index, untracked, ignored."""
    found = {}
    for record in decode(raw).split("\0"):
        code, path = record[:2], record[3:]
        # Column Y blank: the worktree matches the index, which the index listing covers.
        if path and code[1] != " " and keep(path):
            found[path] = code
    return found


def parse_index(listing: bytes) -> tuple[dict[str, str], bool]:
    """`ls-files --stage -v -z` -> ({path: "TAG MODE BLOB STAGE"}, every entry vouchable?).

    With no tab in any path (the usual case) the work is done by C string
    methods, about 10x faster than a loop over 50,000 entries; then "\0H " can
    only start a record and " 0\t" only end its metadata, so counting them
    says whether every entry has tag H and stage 0.
    """
    text = decode(listing)
    records = text.count("\0")
    if text.count("\t") != records:  # a tab in some path: the slow, exact way
        index = {path: meta for meta, _, path in (r.partition("\t") for r in text.split("\0") if r)}
        return index, False
    parts = text.replace("\t", "\0").split("\0")
    return dict(zip(parts[1::2], parts[0:-1:2], strict=True)), _all_vouchable(listing)


def _all_vouchable(listing: bytes) -> bool:
    """Every entry has tag H and stage 0 (see parse_index); False when unsure (a tab)."""
    records = listing.count(b"\0")
    return (listing.count(b"\t") == records
            and listing.startswith(b"H ") + listing.count(b"\0H ") == records
            == listing.count(b" 0\t"))


def find_record(listing: bytes, path: str) -> str | None:
    """The metadata of `path` in a raw listing, or None: its record is `META\\tPATH\\0`,
    and META holds no tab, so a match must start right after a record's first tab."""
    key = b"\t" + path.encode("utf-8", "surrogateescape") + b"\0"
    at = listing.find(key)
    while at >= 0:
        start = listing.rfind(b"\0", 0, at) + 1
        if listing.find(b"\t", start) == at:
            return decode(listing[start:at])
        at = listing.find(key, at + 1)
    return None


def unvouched(index: dict[str, str], keep: Keep) -> list[str]:
    """Index entries git status stays silent about even when their file changes."""
    return [path for path, meta in index.items() if not _vouchable(meta) and keep(path)]


def _vouchable(meta: str) -> bool:
    # Tag H: an ordinary entry (not assume-unchanged, not skip-worktree); stage 0: no conflict.
    return meta.startswith("H ") and meta.endswith(" 0")


def blob_id(meta: str | None) -> tuple[str, str] | None:
    if meta is None:
        return None
    parts = meta.split(" ")
    return parts[1], parts[2]


def is_opaque(path: str, before: str | None, after: str | None = None) -> bool:
    """A nested repository (status spells it `dir/`) or a submodule (index mode 160000)."""
    return (path.endswith("/") or (before is not None and " 160000 " in before)
            or (after is not None and " 160000 " in after))


def git_blob_id(data: bytes, like: str) -> str:
    """The id git gives a blob of `data`, in the hash of the repository `like` came from."""
    algorithm = "sha1" if len(like.split(" ")[2]) == 40 else "sha256"
    return hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()


def index_digest(gitdir: Path) -> str:
    """Identify the index's content by git's own trailing checksum of it (cheap: 32 bytes).

    The trailer is a hash of everything before it; with `index.skipHash` it is
    zeros, and then the whole file is hashed instead.
    """
    try:
        with open(gitdir / "index", "rb") as index:
            size = index.seek(0, os.SEEK_END)
            index.seek(max(0, size - 32))
            tail = index.read()
            if tail.endswith(bytes(20)):
                index.seek(0)
                return sha256(index.read())
    except FileNotFoundError:
        return ""
    return f"{size}:{tail.hex()}"


# --- two listings compared ----------------------------------------------------------------


def differing_records(a: bytes, b: bytes) -> tuple[bytes, bytes]:
    """The stretch of whole `\\0`-ended records where two listings differ (one of them may
    be empty): what lies before and after it is the same in both."""
    head = _common_length(a, b, 1)
    tail = _common_length(a, b, -1, most=min(len(a), len(b)) - head)
    start = a.rfind(b"\0", 0, head) + 1  # back to the start of the record
    a_end, b_end = len(a) - tail, len(b) - tail
    shift = a.find(b"\0", a_end - 1) if a_end > start else -1  # on to the end of a record
    if shift >= 0:
        b_end += shift + 1 - a_end
        a_end = shift + 1
    if not (_whole(a, start, a_end) and _whole(b, start, b_end)):
        return a, b  # a path with a tab can defeat the alignment: compare everything
    return a[start:a_end], b[start:b_end]


def _whole(data: bytes, start: int, end: int) -> bool:
    """data[start:end] is a run of whole records (or nothing)."""
    return start <= end and (start == 0 or data[start - 1] == 0) and (
        end == start or data[end - 1] == 0)


def _common_length(a: bytes, b: bytes, direction: int, most: int | None = None) -> int:
    """How many bytes `a` and `b` share at the start (direction 1) or the end (-1): chunks
    compared at C speed, the chunk narrowed where they first differ."""
    most = min(len(a), len(b)) if most is None else most
    done, step = 0, 1 << 16
    while step:
        while done + step <= most and _chunk(a, done, step, direction) == _chunk(
                b, done, step, direction):
            done += step
        step >>= 4
    return done


def _chunk(data: bytes, offset: int, size: int, direction: int) -> bytes:
    if direction > 0:
        return data[offset:offset + size]
    return data[len(data) - offset - size:len(data) - offset]


def records(raw: Iterable[bytes]) -> dict[str, str]:
    """Raw `META\\tPATH` records -> {path: meta}."""
    found = {}
    for record in raw:
        meta, _, path = decode(record).partition("\t")
        if path:
            found[path] = meta
    return found
