"""A turn's processes as its runner keeps them: the mark in codex's environment, what it
has seen of them so far (written to its record as it goes), and its watchdog.

The runner ends everything of a turn when the turn ends (`end`); the record and the
watchdog are for when it cannot: killed, its watchdog ends the turn from the record, and
so do `stop` and `poll` (lifecycle.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from sparring import disk, process
from sparring.store import runs
from sparring.store.sessions import Session
from sparring.turn import watchdog


class Keeper:
    def __init__(self, session: Session, me: process.Identity, mark: str, log: str) -> None:
        self.session, self.me, self.mark, self.log = session, me, mark, log
        # Everything of this runner's turns starts after it: older processes are passed over.
        self.since = process.tree.start_ticks(me.pid)
        self.seen: frozenset[process.Identity] = frozenset()
        # Started just before codex (check_watchdog): until then there is nothing of the turn
        # for it to end. Its log is made now, as its start made it: the guard's snapshot,
        # taken before codex, sees it there.
        os.close(disk.append(log, under=session.root))
        self.watchdog: process.Child | None = None
        # The scan `record` keeps from one record to the next, with what it was begun for
        # (codex and the watchdog): each record then judges only the processes new since the
        # last, not every process of the system (on a desktop's hundreds, a full scan cost
        # tens of milliseconds of CPU, twice a second for as long as Codex ran).
        self._recording: tuple[tuple[int, int | None], process.tree.Scan] | None = None

    def _start_watchdog(self) -> process.Child:
        dog = watchdog.start(self.session, self.me, self.log)
        self.note(watchdog=process.identity_of(dog.pid).to_dict())
        return dog

    def note(self, **fields: object) -> None:
        """Change the runner's record, while it is this runner's."""
        with runs.change(self.session.path, self.me) as run:
            if run:
                run.update(fields)

    def check_watchdog(self) -> None:
        """Start the watchdog, or again when it was killed: while codex runs, the runner is
        never left unwatched."""
        if self.watchdog is not None:
            if not process.has_exited(self.watchdog):
                return
            self.watchdog.wait()
        self.watchdog = self._start_watchdog()

    def scope(self, codex: process.Child | None, marked: bool = True) -> process.tree.Scope:
        """Everything below this runner (its watchdog aside), in codex's group and session
        (codex is not reaped yet, so they are its), marked, or seen before."""
        return process.tree.Scope(
            mark=self.mark if marked else None, roots=tuple(self.seen), below_self=True,
            groups=(codex.pid,) if codex is not None else (),
            spare=frozenset({self.watchdog.pid} if self.watchdog is not None else ()),
            since=self.since)

    def record(self, codex: process.Child) -> None:
        """Note the turn's processes running now, found the cheap way (ancestry, group and
        session); those seen before stay noted while they live."""
        now = process.identities(self._scan(codex).turns())
        now |= frozenset(i for i in self.seen if process.is_alive(i))
        if now != self.seen:
            self.seen = now
            self.note(members=[i.to_dict() for i in sorted(now)])

    def _scan(self, codex: process.Child) -> process.tree.Scan:
        """The scan `record` goes on with, begun anew for another codex or watchdog, or once
        a pid it judged may have gone to another process."""
        key = (codex.pid, self.watchdog.pid if self.watchdog is not None else None)
        if self._recording is None or self._recording[0] != key or self._recording[1].stale():
            self._recording = (key, process.tree.Scan(self.scope(codex, marked=False)))
        return self._recording[1]

    def end(self, codex: process.Child | None) -> list[int]:
        """End every process of the turn, codex included: nothing of it runs on."""
        return process.end(self.scope(codex))

    def ended(self, turn: Mapping[str, Any]) -> None:
        """The end of `turn` is being recorded (under the session lock): its record goes."""
        runs.remove(self.session.path, turn["n"], turn["created_at"])

    def close(self) -> None:
        """The runner is done: nothing of its turns runs on, nor does its watchdog. (A
        record still there says a turn's end was never recorded: lifecycle acts on it.)"""
        self.end(None)  # whatever a failure left behind (normally nothing)
        if self.watchdog is not None:
            watchdog.stop(self.watchdog)
