"""The content-addressed store: copies of the files git cannot restore, each named by its
SHA-256, so snapshots (of every turn of every session of a project) may share one folder
and identical contents are kept once. A baseline's bulk (its entries, the index listing)
is kept there the same way.

A copy is only ever trusted after it hashed to its name again (`intact`, and revert while
it copies): the store sits in the project, where a sandbox that lets Codex write reaches.
`prune` removes what no baseline still needs; the caller says what that is.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Set
from pathlib import Path
from typing import BinaryIO

from sparring import disk
from sparring.guard.files import CHUNK, hash_file
from sparring.store.locate import STATE_DIR

MIB = 1 << 20
# The largest file of each origin the snapshot copies (a store given). Ignored files and
# git's own are rebuilt or small; the user's own work is kept up to a generous size. A
# submodule is often someone else's code, vendored whole: its sources are kept, not its
# large files.
COPY_LIMITS = {"tracked": 64 * MIB, "untracked": 64 * MIB, "walk": 64 * MIB,
               "ignored": 1 * MIB, "gitdir": 1 * MIB, "submodule": 1 * MIB}


def copy_wanted(origin: str, st: os.stat_result, store: Path | None) -> bool:
    limit = COPY_LIMITS.get(origin)
    return (store is not None and limit is not None and stat.S_ISREG(st.st_mode)
            and st.st_size <= limit)


def copy_stream(path: Path, out: BinaryIO) -> str:
    """Copy `path` into `out`; its SHA-256 (one read: hashed while copied)."""
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as src:
        for chunk in iter(lambda: src.read(CHUNK), b""):
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def store_bytes(store: Path, name: str, data: bytes) -> None:
    """Keep `data` in the store under `name` (its digest) unless it is there already."""
    if not os.path.exists(store / name):
        _write(store, name, data)


# A file up to this size is read whole and hashed first: the store is written only when it
# lacks the copy (a new session's first snapshot finds the project's copies there).
_READ_WHOLE = 1 * MIB


def copy_into(path: Path, store: Path) -> str:
    """Copy `path` into `store` under its SHA-256 (one read: hashed while copied); a small
    file whose copy the store holds already, byte for byte, is not written again (a copy
    that differs, damaged in the store, is replaced)."""
    with open(path, "rb", buffering=0) as src:
        data = _read_up_to(src, _READ_WHOLE + 1)
    if len(data) <= _READ_WHOLE:
        digest = hashlib.sha256(data).hexdigest()
        if not _holds(store / digest, data):
            _write(store, digest, data)
        return digest
    return _stream_into(path, store)


def _read_up_to(src: BinaryIO, size: int) -> bytes:
    parts, left = [], size
    while left > 0 and (part := src.read(min(left, CHUNK))):
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _holds(copy: Path, data: bytes) -> bool:
    """Whether `copy` is a regular file of exactly `data` (never followed if a link)."""
    try:
        fd = os.open(copy, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    with os.fdopen(fd, "rb", buffering=0) as held:
        st = os.fstat(held.fileno())
        return (stat.S_ISREG(st.st_mode) and st.st_size == len(data)
                and _read_up_to(held, len(data) + 1) == data)


def _write(store: Path, name: str, data: bytes) -> None:
    disk.write(store / name, data, under=below(store))


def below(store: Path) -> Path | None:
    """The project whose `.sparring/guard-store` this is: from its root down, no link is
    followed (disk.py), so a store another session's Codex swapped for a link never receives
    a copy of the user's files. A store named outright elsewhere is written as named."""
    return store.parent.parent if store.parent.name == STATE_DIR else None


def _stream_into(path: Path, store: Path) -> str:
    """The copy, named by the digest of what was read: staged while it is read and hashed,
    then moved in under that name (same name, same bytes: replacing one is harmless)."""
    staged = disk.stage(store / ".copy", lambda out: copy_stream(path, out),
                        under=below(store))
    try:
        digest = str(staged.result)
        staged.commit(digest)
    finally:
        staged.close()
    return digest


def intact(store: Path, digest: str) -> bool:
    """Whether the copy named `digest` is there and still hashes to its name."""
    try:
        return hash_file(store / digest) == digest
    except OSError:
        return False


def prune(store: Path, keep: Set[str]) -> tuple[int, int]:
    """Remove every file of the store not named in `keep` (temp files a crash left too; the
    caller holds the store's lock, so no snapshot is writing): (files removed, bytes freed)."""
    removed = freed = 0
    try:
        listing = list(os.scandir(store))
    except FileNotFoundError:
        return 0, 0
    for item in listing:
        if item.name in keep or not item.is_file(follow_symlinks=False):
            continue
        size = item.stat(follow_symlinks=False).st_size
        with contextlib.suppress(FileNotFoundError):
            os.unlink(item.path)
            removed, freed = removed + 1, freed + size
    return removed, freed
