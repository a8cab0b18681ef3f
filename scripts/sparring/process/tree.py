"""A turn's processes: found by every trace they leave, and ended so that none survives.

A process a turn started is found by any of these, so that leaving one behind is not
enough to escape:
- the mark: codex runs with the turn's mark in `SPARRING_TURN` in its environment, and every
  descendant inherits it, detached or not (unless it clears its environment);
- ancestry: everything below a process known to be the turn's (on Linux the runner adopts
  what detaches from codex, so there everything stays below the runner);
- the process groups and sessions of a process we hold (codex, not yet reaped, so its id
  cannot be reused): what left codex's parentage but not its group or session;
- the identities the runner recorded as it went (pid and start time, checked again).

Ending them is TERM and a grace to exit cleanly; then whatever is left, or appeared
meanwhile, is frozen with SIGSTOP (which nothing can catch or ignore, and a stopped
process cannot fork) scan after scan until a scan finds nothing new, and killed. So a
process that ignores TERM and keeps respawning ends too, and so does one that forks and
exits over and over (each scan looks only at the pids that are new since the last one, the
newest first, so it takes a fraction of such a process's life). A scan during which the
system handed out no pid proves the scope empty: every process then was there when it listed
them, and was judged while it lived.

On Linux a scan passes over every process that started before the turn's runner (by its start
in clock ticks since boot, which no clock set back or forward moves) with one look at that
start: none of them can be the turn's, and a machine runs hundreds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import psutil

from sparring.process.identity import Identity, proc_stat, ps

MARK_ENV = "SPARRING_TURN"
GRACE_S = 2.0  # for a clean exit after TERM
_STEP_S = 0.05
_KILL_ROUNDS = 20  # each freezes and kills everything found; one is the rule
_FREEZE_SCANS = 2000  # each stops what the scans before it missed; a few are the rule
_ANCESTRY_DEPTH = 64
_EMPTY_SCANS = 3  # in a row, and
_EMPTY_FOR_S = 0.02  # seconds of them, before a scope counts as empty
_RESCAN_S = 0.002  # between those scans: a few milliseconds of CPU in all, not twenty
_QUIET_WITHIN_S = 2.0  # looking for a scan during which no pid was handed out, before
#                        a busy machine's scope counts as empty by the rule above
_PID_SPACE = 1 << 22  # the largest pid_max Linux allows: pids wrap below it
_START_TIME_TOLERANCE = 0.05


class Scope(NamedTuple):
    """Where a turn's processes are; each field is one way to find them."""
    mark: str | None = None  # the turn's mark in MARK_ENV
    roots: tuple[Identity, ...] = ()  # known processes of the turn: they and all below
    below_self: bool = False  # everything below this process (the runner)
    groups: tuple[int, ...] = ()  # process groups and sessions led by a process we hold
    spare: frozenset[int] = frozenset()  # never these, nor anything below them
    # When the turn's runner started, in clock ticks since boot (start_ticks; None where the
    # system does not say): everything of its turns started after it, so a process that
    # started before is none of the turn's. Roots are judged whatever their start.
    since: int | None = None


def marked(env: Mapping[str, str], mark: str) -> dict[str, str]:
    """`env` with `mark` added to MARK_ENV: a turn started inside another turn (sparring
    run by codex) carries both marks, so the outer turn's end finds it too."""
    outer = env.get(MARK_ENV, "")
    return {**env, MARK_ENV: f"{outer}:{mark}" if outer else mark}


class Scan:
    """Looks for a scope's processes, again and again. Each pid is judged once (what makes
    a process the turn's does not change while it lives), so a scan after the first costs
    a listing of pids and a look at the new ones."""
    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.me = os.getpid()
        self.roots = {r.pid: r for r in scope.roots}
        self.known: dict[int, psutil.Process | None] = {}  # None: not the turn's
        self.last: int | None = None  # the last pid handed out, at the latest scan
        # The latest scan's listing, and the last pid handed out just before it (quiet()).
        self._listed: tuple[int | None, list[int]] = (None, [])

    def turns(self) -> list[psutil.Process]:
        lib = ps()
        first = last_pid()
        pids = lib.pids()
        self._listed = (first, pids)
        last, before = last_pid(), self.last
        # A pid handed out since the last scan may be another process now: judged again.
        self.known = {pid: self.known[pid] for pid in pids
                      if pid in self.known and not handed_out(pid, before, last)}
        self.last = last
        for pid in newest_first([pid for pid in pids if pid not in self.known], last):
            self._judge(pid, 0)  # the newest first: the likeliest to go soon
        return [p for p in self.known.values() if p is not None and _running(p)]

    def quiet(self) -> bool:
        """Whether no pid was handed out from just before the latest scan's listing until
        now, and none is listed now that was not then (a child whose pid was handed out just
        before the listing shows only once its fork is done, which it is by the time its
        parent, judged in the scan, could have exited). False where the system does not say
        which pid came last. Asked by `settled` only: the runner's notes never need it."""
        lib = ps()
        first, listed = self._listed
        return first is not None and set(lib.pids()) <= set(listed) and first == last_pid()

    def stale(self) -> bool:
        """Whether this system does not say which pid it handed out last: then a pid judged
        here may have gone to another process at any time, and a scan kept for long (the
        runner's record of the turn's processes, every half second) is begun anew."""
        return self.last is None or last_pid() is None

    def settled(self) -> list[psutil.Process]:
        """`turns`, and when that finds none, again, until a scan finds none during which the
        system handed out no pid (`quiet`, asked once the scan has ended): every process then
        was there when the scan listed them and was judged while it lived, so none of the
        scope can be left. A process that keeps forking and exiting hands out pids, so no scan
        is quiet while it lives, however long a busy machine holds this process back between
        listing a pid and looking at it. Where the system does not say which pid came last,
        or none is quiet within _QUIET_WITHIN_S (a machine starting processes without pause),
        _EMPTY_SCANS in a row and _EMPTY_FOR_S seconds of scans that find none will do: the
        first judges every pid and may take longer than a forking process lives; the next
        judge only the new ones."""
        scans, until = 0, 0.0
        while True:
            found = self.turns()
            if found:
                return found
            if self.quiet():
                return []
            scans += 1
            now = time.monotonic()
            until = until or now + _EMPTY_FOR_S
            if scans >= _EMPTY_SCANS and now >= until and (
                    self.last is None or now >= until + _QUIET_WITHIN_S):
                return []
            time.sleep(_RESCAN_S)

    def _judge(self, pid: int, depth: int) -> psutil.Process | None:
        """`pid`'s process if it is the turn's (its parent judged first), else None."""
        lib = ps()
        if pid in self.known:
            return self.known[pid]
        if depth >= _ANCESTRY_DEPTH:
            return None  # not judged, so not remembered: its own turn in the scan comes
        found = None
        if pid != self.me and pid not in self.scope.spare and not self._older(pid):
            try:
                proc = lib.Process(pid)
            except lib.Error:
                return None  # gone: not remembered, as its pid may come back as another
            try:
                below = self._traced(proc) or self._below(proc.ppid(), pid, depth)
                if below is None:
                    return None  # its parent could not be judged: not remembered either
                found = proc if below else None
            except lib.ZombieProcess:
                pass  # it has ended; its pid stays taken until it is reaped
            except lib.NoSuchProcess:
                if not proc.is_running():
                    return None  # gone meanwhile (else: a kernel thread, without environment)
            except (lib.Error, OSError):  # not ours to read
                pass
        self.known[pid] = found
        return found

    def _below(self, parent: int, pid: int, depth: int) -> bool | None:
        """Whether `parent` is the turn's; None when it could not be judged (gone, or too far
        up): then its child's verdict is not kept, and the next scan looks again."""
        if parent == self.me:
            return self.scope.below_self
        if not 0 < parent != pid:
            return False
        if self._judge(parent, depth + 1) is not None:
            return True
        return False if parent in self.known else None

    def _older(self, pid: int) -> bool:
        """Whether `pid` started before the turn's runner (Scope.since), so that none of its
        traces can make it the turn's: a look at its start instead of its environment and
        ancestry, for nearly every process of the machine."""
        since = self.scope.since
        if since is None or pid in self.roots:
            return False
        started = start_ticks(pid)
        return started is not None and started < since

    def _traced(self, proc: psutil.Process) -> bool:
        """Whether `proc` is known, in a held group or session, or marked: each looked at on
        its own, so one that cannot be read leaves the others."""
        root = self.roots.get(proc.pid)
        return (root is not None and _same(proc, root)) or self._grouped(proc.pid) or (
            bool(self.scope.mark) and self.scope.mark in _marks(proc))

    def _grouped(self, pid: int) -> bool:
        groups = self.scope.groups
        try:
            return bool(groups) and (os.getpgid(pid) in groups or os.getsid(pid) in groups)
        except OSError:  # gone, or a system that keeps other sessions to themselves
            return False


def newest_first(pids: list[int], last: int | None = None) -> list[int]:
    """`pids`, the newest first. Pids are handed out upward and wrap at pid_max (32,768 on
    many systems, so a busy machine wraps within minutes): the newest are those just below
    the last one handed out (`last`, else read now), then those from the top down. Linux
    names the last one in /proc/loadavg; elsewhere the highest come first."""
    last = last_pid() if last is None else last
    if last is None:
        return sorted(pids, reverse=True)
    return sorted(pids, key=lambda pid: (last - pid) % _PID_SPACE)


def handed_out(pid: int, before: int | None, last: int | None) -> bool:
    """Whether `pid` may have been handed out between two scans that found the last pid
    `before` and then `last`: pids go upward and wrap, so those just above `before` up to
    `last` (across the wrap). Where the system does not say (None), any may have been."""
    if before is None or last is None:
        return before is not None or last is not None
    return 0 < (pid - before) % _PID_SPACE <= (last - before) % _PID_SPACE


def start_ticks(pid: int) -> int | None:
    """When `pid` started, in clock ticks since boot (Linux's /proc; None elsewhere, or when
    it is gone): unlike a start told in wall time, no clock set back or forward moves it."""
    found = proc_stat(pid)
    return None if found is None else found[1]


def last_pid() -> int | None:
    """The pid the system handed out last (Linux names it in /proc/loadavg), else None."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def _marks(proc: psutil.Process) -> list[str]:
    """The marks in `proc`'s environment; none when it may not be read (a setuid helper, say):
    its ancestry still says whether it is the turn's."""
    lib = ps()
    try:
        return proc.environ().get(MARK_ENV, "").split(":")
    except lib.AccessDenied:
        return []


def _same(proc: psutil.Process, identity: Identity) -> bool:
    return abs(proc.create_time() - identity.started) <= _START_TIME_TOLERANCE


def end(scope: Scope, grace: float = GRACE_S) -> list[int]:
    """End every process of `scope`, and whatever appears in it meanwhile, until a scan
    finds none: TERM, up to `grace` seconds to go, then freeze and KILL. Returns the pids
    that were running. Nothing is reaped here: a caller waiting for its own child (the
    runner for codex) still gets the exit status."""
    scan = Scan(scope)
    found = scan.settled()
    ended = {p.pid for p in found}
    termed: set[psutil.Process] = set()
    deadline = time.monotonic() + grace
    while found and time.monotonic() < deadline:
        _send((p for p in found if p not in termed), signal.SIGTERM)
        termed.update(found)
        time.sleep(_STEP_S)
        found = scan.settled()
        ended.update(p.pid for p in found)
    for _ in range(_KILL_ROUNDS):
        if not found:
            break
        frozen = _freeze(scan, found)
        ended.update(p.pid for p in frozen)
        _send(frozen, signal.SIGKILL, groups=True)
        _await_gone(frozen, grace)
        found = scan.settled()
    return sorted(ended)


def _freeze(scan: Scan, first: list[psutil.Process]) -> list[psutil.Process]:
    """Stop `first`, then everything each new scan finds, until one finds nothing new.
    Their process groups are stopped whole too: a member forked after the scan is in it."""
    frozen: set[psutil.Process] = set()
    new = first
    for _ in range(_FREEZE_SCANS):
        _send(new, signal.SIGSTOP, groups=True)
        frozen.update(new)
        new = [p for p in scan.turns() if p not in frozen]
        if not new:
            break
    return list(frozen)


def _send(procs: Iterable[psutil.Process], sig: signal.Signals, groups: bool = False) -> None:
    """`sig` to each of `procs` (and, with `groups`, to each one's process group: every
    group a turn's process is in belongs to the turn, as a process can only join a group
    of its own session, and codex's session is its own)."""
    lib = ps()
    own = os.getpgrp()
    for proc in procs:
        with contextlib.suppress(lib.Error, OSError):  # gone already, which is the aim
            group = os.getpgid(proc.pid) if groups else own
            proc.send_signal(sig)  # psutil checks it is still the same process first
            if group != own:
                os.killpg(group, sig)


def _await_gone(procs: list[psutil.Process], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while any(_running(p) for p in procs) and time.monotonic() < deadline:
        time.sleep(0.01)


def _running(proc: psutil.Process) -> bool:
    lib = ps()
    try:
        return proc.is_running() and proc.status() != lib.STATUS_ZOMBIE
    except lib.Error:
        return False
