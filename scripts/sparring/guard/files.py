"""The guard's file helpers: lstat along a path, walking a folder, content fingerprints.

The unit is the file (a regular file or a symlink): a directory is never an entry, and a
path is looked at with lstat *along the whole path*, so a file whose folder was swapped for
a symlink is gone from where it was.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from sparring.errors import SparringError
from sparring.store.workspace import STATE_DIR

Stat = tuple[int, int, int, int, int]  # st_mode, st_size, st_mtime_ns, st_ctime_ns, st_ino
Keep = Callable[[str], bool]
Content = tuple[int, bool, str | None]  # file type, executable bit, digest
CHUNK = 1 << 20


def walk(root: Path, keep: Keep, prefix: str = "") -> dict[str, os.stat_result]:
    """Every file and symlink under root (or its folder `prefix`), by relative path; nested
    `.git` directories skipped."""
    found: dict[str, os.stat_result] = {}
    pending = [prefix]
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


class Parents:
    """lstat along the whole path: a file whose folder (or any folder above it) is no longer
    a real folder (a symlink, a file) is not there, whatever is found through the link."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.real: dict[str, bool] = {"": True}

    def is_real(self, folder: str) -> bool:
        known = self.real.get(folder)
        if known is None:
            try:
                mode = os.lstat(f"{self.root}/{folder}").st_mode
            except OSError:
                mode = 0
            known = self.is_real(folder.rpartition("/")[0]) and stat.S_ISDIR(mode)
            self.real[folder] = known
        return known

    def lstat(self, path: str) -> os.stat_result | None:
        if not self.is_real(path.rstrip("/").rpartition("/")[0]):
            return None
        return lstat(f"{self.root}/{path}")


def keeper(exclude: Iterable[str], own_state: bool = True) -> Keep:
    """A predicate: False for paths an exclude glob covers, and (`own_state`) for `.sparring/`."""
    own = STATE_DIR + "/"
    patterns = [p.strip("/") for p in exclude if p.strip("/")]
    if own_state:
        # A glob that starts with `.sparring/` matches only what is left out already (a
        # baseline and its copies, as `guard snapshot` excludes them): without it, a tree
        # of 5,000 ignored files is sifted by startswith, not by a regex per folder.
        patterns = [p for p in patterns if not p.startswith(own)]
    regex = re.compile("|".join(fnmatch.translate(p) for p in patterns)) if patterns else None

    def keep(path: str) -> bool:
        if own_state and (path.startswith(own) or path == STATE_DIR):
            return False
        if regex is None:
            return True
        parts = path.rstrip("/").split("/")
        return not any(regex.match("/".join(parts[:n])) for n in range(1, len(parts) + 1))

    return keep


def lstat(path: str | Path) -> os.stat_result | None:
    """lstat, with None for a missing path - and for a directory, which is not a file."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return None if stat.S_ISDIR(st.st_mode) else st


def key(st: os.stat_result | None) -> Stat | None:
    return None if st is None else key_of(st)


def key_of(st: os.stat_result) -> Stat:
    # No st_dev: it can change across reboots on some file systems without any write.
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def content(path: str | Path, st: os.stat_result) -> Content:
    kind = stat.S_IFMT(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return kind, False, sha256(os.fsencode(os.readlink(path)))
    if not stat.S_ISREG(st.st_mode):
        return kind, False, None
    try:
        digest: str | None = hash_file(path)
    except OSError:
        digest = None
    return kind, bool(st.st_mode & stat.S_IXUSR), digest


def content_of(st: Stat, digest: str | None) -> Content:
    """What `content` says of a file recorded with stat data `st` and `digest`."""
    mode = st[0]
    return stat.S_IFMT(mode), stat.S_ISREG(mode) and bool(mode & stat.S_IXUSR), digest


def same_content(a: Content, b: Content) -> bool:
    # An unreadable regular file (digest None) is never vouched for: report it.
    return a == b and (a[0] != stat.S_IFREG or a[2] is not None)


def hash_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as src:
        for chunk in iter(lambda: src.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode(raw: bytes) -> str:
    # As os.fsdecode does: a non-UTF-8 file name survives as surrogate escapes.
    return raw.decode("utf-8", "surrogateescape")


def spelled(path: str) -> str:
    """`path` as printable text with one spelling per file: a byte that is not UTF-8 (a
    surrogate escape, see decode) is written `\\xNN` and a backslash `\\\\`, as Python
    writes bytes. Without the second rule the byte 0xFF and a file really named with the
    four characters `\\xff` would print alike, and a check would list one path twice."""
    if path.isascii() and "\\" not in path:
        return path  # the usual name: nothing to spell
    doubled = path.replace("\\", "\\\\")
    return doubled.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def require_dir(root: Path) -> None:
    if not root.is_dir():
        raise SparringError("file_not_found", f"{root} is not a directory",
                            "pass the project directory (it must exist)", path=str(root))
