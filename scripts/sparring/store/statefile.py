"""State on disk: JSON written atomically, versioned, changed under a lock.

A reader never sees half a file (temp file in the same directory, then
`os.replace`), and two writers never lose each other's change (read, modify
and write happen under an exclusive `flock` on a sibling lock file). A file
we cannot read is reported and left exactly as it was. A file that is one of
sparring's records (`witness`) is written after its copy out of Codex's reach
and read as witness.py says (never through a link; during a Codex turn, only
as sparring wrote it).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from sparring import disk, jsontext
from sparring.errors import SparringError
from sparring.store import witness as _witness  # the module; `witness` flags a record

Migration = Callable[[dict[str, Any]], dict[str, Any]]


# sparring's own state (prompts, the sealed analysis, copies of the user's files) is for the
# user alone: files 0600, folders 0700, whatever the umask (disk.py writes them so).
PRIVATE_FILE = disk.PRIVATE_FILE
PRIVATE_DIR = disk.PRIVATE_DIR


def write_private(path: str | Path, data: bytes | str, exclusive: bool = False,
                  witness: bool = False) -> None:
    """Write a file only the user can read, whole (disk.write; `exclusive`: a new file only,
    disk.create); with `witness`, one of sparring's records (its copy is kept out of Codex's
    reach first: store/witness.py)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data

    def write() -> None:
        _write(path, payload, exclusive)

    _witnessed(path, payload, write) if witness else write()


def write_atomic(path: str | Path, text: str | bytes, witness: bool = False) -> None:
    """Replace `path` with `text` so that readers see the old or the new file, never half;
    with `witness`, one of sparring's records (see write_private)."""
    payload = text.encode("utf-8") if isinstance(text, str) else text

    def write() -> None:
        _write(path, payload, exclusive=False)

    _witnessed(path, payload, write) if witness else write()


def _write(path: str | Path, payload: bytes, exclusive: bool) -> None:
    """The file written whole, with no link followed below the project (disk.py): a folder
    of `.sparring/` swapped for one is `path_is_link`, naming it."""
    try:
        if exclusive:
            disk.create(path, payload, under=_root_of(path))
        else:
            disk.write(path, payload, under=_root_of(path))
    except disk.FolderSwapped as exc:
        raise swapped(exc) from None


def swapped(exc: disk.FolderSwapped) -> SparringError:
    return SparringError(
        "path_is_link", f"{exc.filename}, a folder of sparring's records, is a link or no "
        "folder (swapped while a Codex turn ran?); nothing was written through it", "look at "
        "what stands there and where it leads, move it aside and put the folder back (a "
        "session's own folder: from where it was moved, if it was); sparring never writes "
        "through a link", path=str(exc.filename))


def _root_of(path: str | Path) -> str | None:
    """The project a file below `.sparring/` belongs to: from there down, disk.py follows no
    link (a sandbox that lets Codex write the project may swap a folder of `.sparring/`)."""
    found = _witness.split(path)
    return None if found is None else os.path.realpath(found[0])


def _witnessed(path: str | Path, payload: bytes, write: Callable[[], None]) -> None:
    """Keep the record's copy out of reach, then write the record, both under the project's
    witness lock (so a check never sees one without the other)."""
    found = _witness.split(path)
    if found is None:
        write()
        return
    writing = False
    try:
        with _witness.locked(found[0]), _witness.keeping(path, payload):
            writing = True
            write()
    except OSError as exc:
        if writing:  # the record's own write failed: the caller's error to report
            raise
        raise SparringError(
            "not_writable", f"cannot keep sparring's own copy of {path} in {_witness.home()}: "
            f"{exc.strerror}", "sparring keeps a copy of its records there, out of Codex's "
            "reach; make that folder writable, or set XDG_STATE_HOME to a folder you own "
            "outside the project", path=str(_witness.home())) from exc


def write_json_atomic(path: str | Path, data: dict[str, Any], witness: bool = False) -> None:
    # allow_nan=False: NaN is not JSON, and a NaN limit would disable the limit.
    text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    if not text.isascii() and not _encodable(text):
        # A file name that is not UTF-8 (a surrogate escape, as os.fsdecode makes): JSON's
        # \u escapes keep it exactly, where UTF-8 cannot hold it at all.
        text = json.dumps(data, ensure_ascii=True, indent=2, allow_nan=False) + "\n"
    write_atomic(path, text, witness=witness)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_record(path: str | Path) -> bytes:
    """A witnessed record's bytes, never read through a link (store/witness.py): while a
    Codex turn is watched, one someone else wrote (or replaced with a link, a FIFO, a
    folder) is set aside and the copy put back. FileNotFoundError when there is none;
    IsADirectoryError when something that is not a regular file stands there."""
    data = _witness.read(path)
    if not _witness.vouches(path, data):
        found = _witness.split(path)
        assert found is not None  # a record without a place has no copy: always vouched for
        with _witness.locked(found[0]):
            data = _witness.genuine(path)
    if data is None:
        if os.path.lexists(path):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", str(path))
        raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
    return data


def locked(path: str | Path) -> AbstractContextManager[None]:
    """Hold an exclusive lock tied to `path` (on `path` + '.lock', disk.locked). A lock that
    is not a regular file (a folder, a FIFO, a link put there) is `state_corrupt`, naming
    it: never followed, never waited on, and no other session's business."""
    return _Lock(disk.locked(os.fspath(path) + ".lock", under=_root_of(path)))


class _Lock:
    """disk.locked, whose damaged lock is a clear error of the record it guards."""

    def __init__(self, lock: disk.locked) -> None:
        self.lock = lock

    def __enter__(self) -> None:
        try:
            self.lock.__enter__()
        except disk.FolderSwapped as exc:
            raise swapped(exc) from None
        except disk.LockDamaged as exc:
            raise SparringError(
                "state_corrupt", f"the lock {exc.filename} is not a regular file (a folder, "
                "a FIFO or a link stands there); nothing was written", "move it aside (sparring "
                "makes a new one), and look at what put it there", path=str(exc.filename)
            ) from None

    def __exit__(self, *exc: object) -> None:
        self.lock.__exit__(*exc)  # type: ignore[arg-type]


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _loads(raw: str) -> Any:
    """json.loads(raw) refusing NaN and Infinity, which a sound state file never holds; a
    document that is not JSON is read again by json itself, whose JSONDecodeError says what
    is wrong and where."""
    try:
        return jsontext.loads(raw, allow_nan=False)
    except ValueError:
        return json.loads(raw, parse_constant=jsontext.not_json)


def try_locked(path: str | Path) -> AbstractContextManager[None]:
    """Hold the lock tied to `path` if nobody else does; BlockingIOError when someone does."""
    return _Lock(disk.locked(os.fspath(path) + ".lock", wait=False, under=_root_of(path)))


class StateFile:
    """A versioned JSON document; `kind` names it in errors and in the file."""
    def __init__(
        self, path: str | Path, kind: str, version: int,
        migrations: dict[int, Migration] | None = None,
        shape: Callable[[dict[str, Any]], str | None] | None = None, witness: bool = False,
    ) -> None:
        """`shape(data)` names what is wrong with a document's shape (None: nothing), so that
        a file sparring did not write is reported, not tripped over. With `witness`, the file
        is one of sparring's records: every write keeps its copy out of Codex's reach first,
        and every read is of the version sparring wrote (read_record)."""
        self.file = os.fspath(path)
        self.kind = kind
        self.version = version
        self.migrations = migrations or {}
        self.shape = shape
        self.witness = witness

    @property
    def path(self) -> Path:
        return Path(self.file)

    def exists(self) -> bool:
        return os.path.isfile(self.file)

    def read(self) -> dict[str, Any]:
        return self.parse(self.raw())

    def raw(self) -> bytes:
        """The file's bytes, as `read` reads them (a record: as sparring wrote it)."""
        try:
            return read_record(self.file) if self.witness else _read_bytes(self.file)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise self._corrupt(f"cannot be read: {exc.strerror}") from exc

    def parse(self, raw: bytes) -> dict[str, Any]:
        """The document in `raw` (this file's bytes), checked, migrated and shaped."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._corrupt(f"is not UTF-8 ({exc.reason} at byte {exc.start})") from exc
        try:
            data = _loads(text)
        except ValueError as exc:
            if isinstance(exc, json.JSONDecodeError):
                raise self._corrupt(f"is not valid JSON ({exc.msg} at line {exc.lineno})"
                                    ) from exc
            raise self._corrupt(f"is not valid JSON ({exc})") from exc
        except RecursionError as exc:
            raise self._corrupt(f"is not valid JSON ({exc})") from exc
        if not isinstance(data, dict) or not isinstance(data.get("format"), int):
            raise self._corrupt("has no 'format' version")
        data = self._migrate(data)
        problem = self.shape(data) if self.shape else None
        if problem:
            raise self._corrupt(f"is not as sparring wrote it: {problem}")
        return data

    def create(self, data: dict[str, Any]) -> None:
        write_json_atomic(self.file, {**data, "format": self.version, "kind": self.kind},
                          self.witness)

    def update(self) -> AbstractContextManager[dict[str, Any]]:
        """Read-modify-write under the lock; the change is written when the block ends cleanly."""
        return contextlib.contextmanager(self._update)()

    def _update(self) -> Iterator[dict[str, Any]]:
        with locked(self.file):
            data = self.read()
            yield data
            data["format"] = self.version
            write_json_atomic(self.file, data, self.witness)

    def _migrate(self, data: dict[str, Any]) -> dict[str, Any]:
        found = data["format"]
        if found > self.version:
            raise SparringError(
                "state_version_unsupported",
                f"{self.file} is format {found}; this sparring reads up to {self.version}",
                "upgrade sparring (python3 install.py again, or pip install -U .)",
                path=self.file,
            )
        while data["format"] < self.version:
            step = self.migrations.get(data["format"])
            if step is None:
                raise self._corrupt(f"has format {data['format']}, which no migration handles")
            data = step(data)
        return data

    def _corrupt(self, why: str) -> SparringError:
        return SparringError(
            "state_corrupt",
            f"the {self.kind} file {self.file} {why}",
            "the file was left untouched; inspect or move it aside, then start a new session "
            "with `sparring init`",
            path=self.file,
        )
