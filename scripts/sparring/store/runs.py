"""The runner's own record of what runs, kept where Codex's sandbox cannot write.

Codex may be allowed to write anywhere in the project (`workspace-write`), `.sparring/`
included, so session.json alone cannot say which turn runs, nor which processes are the
turn's. Each runner keeps its own record in the user's state folder, outside every project
(`${XDG_STATE_HOME:-~/.local/state}/sparring/runs/`, 0700): the session and the turn it
runs, its own identity, codex's and its watchdog's, the mark in codex's environment, and
the processes of the turn it saw as it went. `stop`, `poll` and the watchdog act on this
record, never on identities read from session.json, and session.json must agree with it
(lifecycle.py). One record per session: a runner carries a session's turns one at a time.

The record is written under one lock for all of them (`runs.lock`), atomically. It exists
exactly while its turn has not ended: whoever records the end removes it under the same
session lock. A record that session.json does not agree with is kept, as the evidence.
"""

from __future__ import annotations

import contextlib
import json
import os
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from sparring import disk, process
from sparring.errors import SparringError
from sparring.process import Identity
from sparring.store import locate
from sparring.store.locate import SESSION_FILE
from sparring.store.statefile import locked, write_atomic

FORMAT = 1
KIND = "run"


@dataclass(frozen=True)
class Run:
    """One runner's record (see the module's docstring), declared once: its fields are the
    record's keys, and their types what a record read from disk must hold (_from_dict)."""

    session_dir: str
    turn: int  # the turn it runs now (a re-ask it queued is its next)
    turn_created_at: float  # with `turn`, which of session.json's turns that is
    mark: str  # MARK_ENV's value in codex's environment
    runner: Identity | None
    codex: Identity | None
    watchdog: Identity | None
    members: tuple[Identity, ...]  # the turn's processes the runner saw

    def names(self, turn: Mapping[str, Any]) -> bool:
        """Whether `turn` (of session.json) is the turn this record is about."""
        return bool(turn["n"] == self.turn and turn["created_at"] == self.turn_created_at)

    def runner_alive(self) -> bool:
        return process.is_alive(self.runner)

    def scope(self, runner_too: bool = True) -> process.tree.Scope:
        """Everything of the turn, for a process other than the runner: what the runner
        recorded, the mark, and (`runner_too`) the runner and its watchdog themselves."""
        roots = [*self.members, *(i for i in (self.codex,) if i is not None)]
        if runner_too:
            roots += [i for i in (self.runner, self.watchdog) if i is not None]
        held = self.codex if process.is_alive(self.codex) else None
        return process.tree.Scope(mark=self.mark, roots=tuple(roots),
                                  groups=(held.pid,) if held else ())


class Busy(Exception):
    """A record is not replaced while its runner still runs its turn: session.json let a
    turn start that it should not have (lifecycle.py reports it)."""
    def __init__(self, run: Run) -> None:
        super().__init__(f"turn {run.turn} still runs")
        self.run = run


def folder() -> Path:
    return Path(locate.state_home(), "runs")


def path_for(session_dir: str) -> Path:
    return Path(locate.run_record(session_dir))


def read(session_dir: str) -> Run | None:
    """The record of the session's runner, if there is one."""
    path = path_for(session_dir)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise _corrupt(path, f"cannot be read ({exc})") from exc
    try:
        return _from_dict(json.loads(raw), session_dir)
    except (ValueError, KeyError, TypeError) as exc:
        raise _corrupt(path, f"is not as sparring wrote it ({exc})") from exc


def begin(session_dir: str, turn: Mapping[str, Any]) -> Run:
    """A new record for a runner about to start on `turn`, with a new mark. An earlier
    record is replaced only if its runner is gone (lifecycle repaired its turn first)."""
    run = Run(session_dir, int(turn["n"]), float(turn["created_at"]), new_mark(),
              None, None, None, ())
    with _lock():
        before = read(session_dir)
        if before is not None and before.runner_alive():
            raise Busy(before)
        _write(session_dir, run)
    return run


def new_mark() -> str:
    """A new mark for a turn's processes: unguessable, so nothing outside the turn has it."""
    return os.urandom(16).hex()


@contextlib.contextmanager
def change(session_dir: str, runner: Identity | None = None) -> Iterator[dict[str, Any]]:
    """Read-modify-write the record as a dict (Run's fields; identities as dicts). With
    `runner`, only while the record is that runner's (else the block is skipped: a newer
    turn's record is never touched by an older runner)."""
    with _lock():
        run = read(session_dir)
        if run is None or (runner is not None and not runner.same(run.runner)):
            yield {}
            return
        data = _to_dict(run)
        yield data
        if data:
            _write(session_dir, _from_dict(data, session_dir))


def remove(session_dir: str, turn: int, created_at: float) -> None:
    """Remove the record if it is still the one about that turn: its end is recorded (the
    runner does this under the session lock, with the end)."""
    with _lock():
        run = read(session_dir)
        if run is not None and (run.turn, run.turn_created_at) == (turn, created_at):
            with contextlib.suppress(FileNotFoundError):
                path_for(session_dir).unlink()


@contextlib.contextmanager
def _lock() -> Iterator[None]:
    where = folder()
    try:
        disk.folders(where)
    except OSError as exc:
        raise SparringError("not_writable", f"cannot create {where}: {exc.strerror}",
                            "sparring keeps its runners' records there; make the folder "
                            "writable, or set XDG_STATE_HOME to a folder you own") from exc
    with locked(where / "runs"):
        yield


def _write(session_dir: str, run: Run) -> None:
    write_atomic(path_for(session_dir), json.dumps(_to_dict(run), indent=2) + "\n")


def _to_dict(run: Run) -> dict[str, Any]:
    data: dict[str, Any] = {"format": FORMAT, "kind": KIND}
    for field in fields(Run):
        value = getattr(run, field.name)
        data[field.name] = (value.to_dict() if isinstance(value, Identity)
                            else [m.to_dict() for m in value] if isinstance(value, tuple)
                            else value)
    return data


def _from_dict(data: dict[str, Any], session_dir: str) -> Run:
    """The record `data` holds, each field as Run declares it; ValueError (or KeyError) when
    it holds anything else."""
    if data.get("format") != FORMAT or data.get("kind") != KIND:
        raise ValueError(f"format {data.get('format')!r}, kind {data.get('kind')!r}")
    if data["session_dir"] != session_dir:
        raise ValueError(f"it is about {data['session_dir']}")
    hints = typing.get_type_hints(Run)
    return Run(**{f.name: _value(data[f.name], hints[f.name], f.name) for f in fields(Run)})


def _value(value: Any, kind: Any, name: str) -> Any:
    """`value` as a field of type `kind` holds it."""
    if kind == tuple[Identity, ...]:
        if not isinstance(value, list):
            raise ValueError(f"{name} is not a list")
        return tuple(_value(item, Identity, name) for item in value)
    if kind == Identity | None:
        return None if value is None else _value(value, Identity, name)
    if kind is Identity:
        if not (isinstance(value, dict) and _is(value.get("pid"), int)
                and _is(value.get("started"), float)):
            raise ValueError(f"{name} is not a process's pid and start time")
        return Identity(int(value["pid"]), float(value["started"]))
    if not _is(value, kind):
        raise ValueError(f"{name} is not a {kind.__name__}")
    return float(value) if kind is float else value


def _is(value: Any, kind: type) -> bool:
    if isinstance(value, bool):
        return kind is bool
    return isinstance(value, (int, float)) if kind is float else isinstance(value, kind)


def disagreement(session_dir: str, problem: str) -> SparringError:
    """session.json does not say what the runner's own record says: it was changed by
    something other than sparring. Raised once the record's processes are ended."""
    path = os.path.join(session_dir, SESSION_FILE)
    return SparringError("state_corrupt", f"the session file {path} disagrees with sparring's "
                         f"own record of its runner: {problem}", "the file was left untouched "
                         "and no turn's processes run on; inspect it or move the session aside, "
                         "then start a new session with `sparring init`", path=str(path))


def _corrupt(path: Path, why: str) -> SparringError:
    return SparringError("state_corrupt", f"the runner's record {path} {why}",
                         "the file was left untouched; inspect or move it aside (it is "
                         "sparring's record of a runner, outside the project)", path=str(path))
