"""Sessions: one debate with Codex, stored in `<root>/.sparring/sessions/<id>/`.

A session holds one Codex thread and a list of turns (round one, later
rounds, recoveries). Each turn has its own folder with the prompt sent, the
JSONL Codex printed, its stderr and the runner's log.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, cast

from sparring.disk import PRIVATE_DIR
from sparring.errors import SparringError
from sparring.records import AnySession, EngineRecord, SessionRecord, TurnRecord
from sparring.store import locate, shapes, witness, workspace
from sparring.store.locate import SESSION_FILE
from sparring.store.locate import SESSION_FORMAT as FORMAT
from sparring.store.statefile import StateFile

SEALED_FILE = "sealed-claude-round-1.md"  # Claude's sealed analysis (barrier.seal)


def local_time(epoch: float) -> str:
    """A moment the session recorded, as people read it: local time to the second."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


class Session:
    """A session's folder, `path` (text, as os.path handles it)."""

    def __init__(self, directory: str | Path) -> None:
        self.path = os.fspath(directory)
        self._outputs: str | None = None
        self.state = StateFile(os.path.join(self.path, SESSION_FILE), "session", FORMAT,
                               shape=lambda data: shapes.session_problem(data) or
                               shapes.placement_problem(data, self.path), witness=True)

    @property
    def id(self) -> str:
        return os.path.basename(self.path)

    @property
    def root(self) -> str:
        """The project it lies in: a session is only ever found in the project's own
        `.sparring/sessions/` (locate.in_project). Files written in the session's folder are
        reached from here down without a link."""
        return os.path.dirname(os.path.dirname(os.path.dirname(self.path)))

    def witnessed(self) -> bool:
        """Whether the runner wrote this session: it keeps a copy of every record it writes,
        out of Codex's reach (store/witness.py). A session.json with none was made elsewhere
        (planted during a Codex turn, committed in a clone) or before witnesses."""
        copy = witness.copy_of(self.state.file)
        return copy is not None and os.path.isfile(copy)

    def load(self) -> dict[str, Any]:
        return self._known(_with_engine(self.state.read()))

    def _known(self, data: dict[str, Any]) -> dict[str, Any]:
        """`data`, as read: where its turns' output lies is known from now on."""
        if self._outputs is None:
            self._outputs = locate.outputs_folder(self.path, data.get("outputs"))
        return data

    def update(self) -> AbstractContextManager[dict[str, Any]]:
        return contextlib.contextmanager(self._update)()

    def _update(self) -> Iterator[dict[str, Any]]:
        with self.state.update() as data:
            yield self._known(_with_engine(data))

    def edit(self) -> AbstractContextManager[SessionRecord]:
        """`update`, typed (records.py): what is read has passed shapes.py's check. `load`
        and `update` stay untyped for the modules that do not use the records yet."""
        return contextlib.contextmanager(self._edit)()

    def _edit(self) -> Iterator[SessionRecord]:
        with self.update() as data:
            yield cast("SessionRecord", data)

    def turn_dir(self, n: int) -> str:
        """Turn `n`'s own folder: its prompt, its runner's log, its guard's files."""
        return os.path.join(self.path, "turns", str(n))

    def turn_path(self, n: int, name: str) -> str:
        return os.path.join(self.turn_dir(n), name)

    @property
    def outputs(self) -> str:
        """The folder where its turns' codex write what they print (store/locate.py)."""
        if self._outputs is None:
            self.load()
        assert self._outputs is not None
        return self._outputs

    def output(self, n: int, name: str) -> str:
        """What turn `n`'s codex printed: its events (EVENTS_FILE) or stderr (STDERR_FILE)."""
        return os.path.join(self.outputs, str(n), name)


def create(root: Path, skill: str, cwd: Path, *, engine: EngineRecord,
           budget_tokens: int | None, sections: dict[str, Any]) -> Session:
    """A new session with an id unique even when many `init`s run at once, starting with
    the engine record, token budget and own records (`sections`: top-level keys) its
    workflow gives it (workflows/sessions.py)."""
    parent = workspace.sessions_dir(root, create=True)
    inbox = workspace.inbox_dir(Path.cwd(), create=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for _ in range(20):
        directory = parent / f"{skill}-{stamp}-{os.urandom(3).hex()}"
        try:
            directory.mkdir(mode=PRIVATE_DIR)  # atomic: exactly one creator wins a name
        except FileExistsError:
            continue
        session = Session(directory)
        session.state.create(
            {"id": directory.name, "skill": skill, "root": str(root), "cwd": str(cwd),
             "created_at": time.time(), "thread_id": None, "codex": {}, "turns": [],
             "inbox": str(inbox), "budget_tokens": budget_tokens,
             "outputs": os.urandom(8).hex(),
             "engine": engine, **sections}
        )
        return session
    raise SparringError("not_writable", f"could not allocate a session id in {parent}",
                        "remove stale folders from .sparring/sessions and retry")


# Sessions written before the engine record existed (the first day of format 1) get the
# record their workflow had then. A frozen migration: no workflow added since needs a row.
_ENGINE_BEFORE_RECORDS = {"think-about": ("codex-answer", True),
                          "dual-model": ("codex-answer", True)}


def _with_engine(data: dict[str, Any]) -> dict[str, Any]:
    if "engine" not in data:
        schema, barrier = _ENGINE_BEFORE_RECORDS.get(data["skill"], (None, False))
        data["engine"] = {"schema": schema, "barrier": barrier, "seal": None,
                          "revealed_at": None, "verdicts": {}, "decisions": {}}
    return data


def resolve(ref: str, cwd: str | Path) -> Session:
    """A session named by its id (in this project) or by its directory, which must be a
    session folder of this project (`.sparring/sessions/<id>` at its root): a session.json
    anywhere else is nobody's to act on."""
    root = locate.project_root(str(cwd))
    found = locate.session_folder(ref, str(cwd))
    if found is not None:
        if not locate.within(found, root):
            raise SparringError(
                "path_outside_project", f"{ref} is outside the project {root}",
                "name a session of this project: its id (`sparring status` lists them)",
                path=found, root=root)
        # Its name goes into every command the runner prints: only an id sparring makes.
        if locate.in_project(found, root) and shapes.is_session_id(os.path.basename(found)):
            return Session(found)
    raise SparringError(
        "session_not_found",
        f"no session {ref!r} here",
        "use the `session` id printed by `sparring init`, or its `session_dir`; "
        "`sparring status` lists this project's sessions",
    )


def all_sessions(root: str | Path) -> list[Session]:
    parent = os.path.join(root, locate.STATE_DIR, "sessions")  # workspace.sessions_dir's
    try:
        names = os.listdir(parent)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = [Session(os.path.join(parent, name)) for name in names
             if shapes.is_session_id(name)
             and os.path.isfile(os.path.join(parent, name, SESSION_FILE))]
    return sorted(found, key=lambda s: s.id.split("-")[-3:])  # by stamp, not by skill


def latest_turn(data: AnySession) -> TurnRecord | None:
    turns: list[TurnRecord] = data.get("turns", [])
    return turns[-1] if turns else None


def find_turn(data: AnySession, n: int) -> TurnRecord:
    turns: list[TurnRecord] = data.get("turns", [])
    for turn in turns:
        if turn["n"] == n:
            return turn
    raise KeyError(n)
