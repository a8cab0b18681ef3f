"""git's index file read directly (git's Documentation/gitformat-index.txt), for one question
a check asks often: did the index get only new stat data since the snapshot?

Any `git status` may rewrite the index with fresh stat data (a `touch`, a checkout that put
back the same bytes, `update-index --refresh`); the entries (mode, blob id, flags, path)
stay as they were. Answering that with `git ls-files` costs a git process and a 50,000-line
listing; reading the index here costs one pass over it. The *shape* of an index is its
header and every entry but the entry's stat data (ctime, mtime, dev, ino, uid, gid, size):
two indexes of the same shape list the same entries, record for record, in the same order.

Only what can be read exactly is read: versions 2 and 3, and none of the extensions that
move entries elsewhere (`link`: a split index; `sdir`: a sparse index) or that git itself
would refuse (an unknown required one). Anything else, a damaged file included, has no
shape, and the check asks git as before. The snapshot keeps a shape only after it made,
from the very bytes it read, the listing `git ls-files --stage -v -z` printed: the reading
is proven against git for that repository, and the bytes are the ones git listed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

_UNSAFE = (b"link", b"sdir")  # a split index, a sparse index: entries held elsewhere
_STAT = 40  # ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid, gid, size: 10 x 4 bytes
_ASSUME_VALID, _EXTENDED, _SKIP_WORKTREE = 0x8000, 0x4000, 0x4000


def read(gitdir: Path) -> bytes | None:
    """The index file's bytes, None when there is none."""
    try:
        with open(gitdir / "index", "rb") as index:
            return index.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def shape(raw: bytes, oid_size: int) -> str | None:
    """A digest of everything in the index but its entries' stat data; None when it cannot
    be read exactly (see the module docstring)."""
    parts = _walk(raw, oid_size, None)
    return None if parts is None else hashlib.sha256(b"".join(parts)).hexdigest()


def listing(raw: bytes, oid_size: int) -> bytes | None:
    """The index as `git ls-files --stage -v -z` prints it; None as for shape()."""
    entries: list[tuple[int, int, int]] = []
    if _walk(raw, oid_size, entries) is None:
        return None
    return b"".join(_record(raw, pos, name, oid_size, length) for pos, name, length in entries)


def proven_shape(raw: bytes | None, listed: bytes) -> str:
    """`oid size:shape` of the index `raw` when reading it gives exactly `listed` (git's own
    listing, taken after `raw` was read), else "": no shape, the check asks git."""
    if raw is None:
        return ""
    oid_size = _oid_size(listed)
    if oid_size is None or listing(raw, oid_size) != listed:
        return ""
    found = shape(raw, oid_size)
    return f"{oid_size}:{found}" if found else ""


def same_shape(raw: bytes | None, proven: str) -> bool:
    """Whether the index `raw` has the shape the snapshot proved (`oid size:shape`)."""
    size, _, digest = proven.partition(":")
    return bool(raw is not None and digest and size.isdigit()
                and shape(raw, int(size)) == digest)


def _oid_size(listed: bytes) -> int | None:
    """The object id size in bytes of a listing's repository (SHA-1 20, SHA-256 32); an
    empty index reads the same either way."""
    if not listed:
        return 20
    oid = listed.split(b" ", 3)[2] if listed.count(b" ", 0, 200) >= 2 else b""
    return len(oid) // 2 if len(oid) in (40, 64) else None


def _walk(raw: bytes, oid_size: int, entries: list[tuple[int, int, int]] | None
          ) -> list[bytes] | None:
    """The index's shape, in parts (and, into `entries`, where each entry and its path start
    and the path's length); None when it is not a version 2 or 3 index read exactly to its
    end. One tight loop: it runs for every entry of a large index while git status runs."""
    if len(raw) < 12 + oid_size or raw[:4] != b"DIRC":
        return None
    version, count = int.from_bytes(raw[4:8], "big"), int.from_bytes(raw[8:12], "big")
    if version not in (2, 3):
        return None  # version 4 compresses paths: left to git
    end = len(raw) - oid_size  # the trailing checksum
    fixed = _STAT + oid_size + 2  # stat data, object id, flags
    parts = [raw[:12]]
    add, pos = parts.append, 12
    try:
        for _ in range(count):
            name = pos + fixed
            flags = raw[name - 2] << 8 | raw[name - 1]
            if flags & _EXTENDED:
                if version < 3:
                    return None
                name += 2
            length = flags & 0xFFF
            if length == 0xFFF:  # a long path: it ends at its NUL, as git reads it
                length = raw.find(b"\0", name, end) - name
                if length < 0:
                    return None
            # git's entry size: the fixed part and the path, padded with 1 to 8 NULs to 8 bytes
            after = pos + ((name - pos + length + 8) & ~7)
            add(raw[pos + 24:pos + 28])  # the mode, between the stat data
            add(raw[pos + _STAT:after])  # object id, flags, path, padding
            if entries is not None:
                entries.append((pos, name, length))
            pos = after
    except IndexError:  # cut short
        return None
    return parts if pos <= end and _extensions_safe(raw, pos, end) else None


def _record(raw: bytes, pos: int, name: int, oid_size: int, length: int) -> bytes:
    """One entry as `ls-files --stage -v -z` prints it: TAG MODE OID STAGE\\tPATH\\0."""
    flags = raw[pos + _STAT + oid_size] << 8 | raw[pos + _STAT + oid_size + 1]
    extended = raw[name - 2] << 8 | raw[name - 1] if flags & _EXTENDED else 0
    stage = (flags >> 12) & 3
    tag = b"M" if stage else b"S" if extended & _SKIP_WORKTREE else b"H"
    if flags & _ASSUME_VALID:
        tag = tag.lower()
    mode = int.from_bytes(raw[pos + 24:pos + 28], "big")
    oid = raw[pos + _STAT:pos + _STAT + oid_size].hex().encode()
    return b"%s %06o %s %d\t%s\0" % (tag, mode, oid, stage, raw[name:name + length])


def _extensions_safe(raw: bytes, pos: int, end: int) -> bool:
    """The extensions fill the rest exactly, and none of them is one the listing depends on
    (a split or sparse index) or one git would refuse (required and unknown: lowercase)."""
    while pos < end:
        if pos + 8 > end:
            return False
        signature = raw[pos:pos + 4]
        if signature in _UNSAFE or not b"A"[0] <= signature[0] <= b"Z"[0]:
            return False
        pos += 8 + int.from_bytes(raw[pos + 4:pos + 8], "big")
    return pos == end
