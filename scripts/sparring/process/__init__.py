"""Child processes, the only way sparring has to them: started, fed, run and captured by
process/spawn.py; watched and ended here.

Before signalling a recorded pid we check it is still the same process (pid plus start
time), because pids are reused. What differs between systems (tying a child to its parent,
adopting orphans, noticing a parent's death) is behind process/backend.py, chosen once;
finding and ending all of a turn's processes is process/tree.py.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sparring.process import backend, tree

if TYPE_CHECKING:
    import psutil

from sparring.process.identity import _START_TIME_TOLERANCE, proc_stat, ps
from sparring.process.identity import Identity as Identity  # callers name it process.Identity

Child = subprocess.Popen[bytes]  # a child this process started (spawn.background)

def identity_of(pid: int) -> Identity:
    """`pid` with its start time as psutil reckons it (on Linux read from /proc, as psutil
    reads it; elsewhere, or when /proc has no such process, psutil's, which then says why)."""
    found = _from_proc(pid)
    if found is None:
        return Identity(pid, ps().Process(pid).create_time())
    return Identity(pid, found[1])


def _from_proc(pid: int) -> tuple[bytes, float] | None:
    """(state, start time) from /proc on Linux, the start as psutil sums it: clock ticks
    since boot (identity.proc_stat) plus the boot time (`btime`); state `Z` is a zombie.
    None when /proc cannot tell (psutil then says why)."""
    found = proc_stat(pid)
    if found is None:
        return None
    try:
        with open("/proc/stat", "rb") as system:
            boot = next(line for line in system if line.startswith(b"btime "))
        return found[0], found[1] / os.sysconf("SC_CLK_TCK") + float(boot.split()[1])
    except (OSError, StopIteration, IndexError, ValueError):
        return None


def mechanism() -> tuple[str, str]:
    """The process backend in force (process/backend.py), and how it works in a sentence;
    config_invalid when SPARRING_PROCESS_BACKEND names one this system does not have."""
    chosen = backend.current()
    return chosen.name, chosen.how


def adopt_orphans() -> bool:
    """Make this process adopt every orphan among its descendants (a process that detaches
    from codex by setsid and a double fork stays below it), where the system can."""
    return backend.current().adopt_orphans()


def await_parent_exit(parent: int) -> None:
    """Return once `parent`, this process's parent, has exited (the watchdog's wait)."""
    backend.current().await_parent_exit(parent)


def has_exited(proc: Child) -> bool:
    """Whether our child exited, without reaping it: its pid stays ours (a zombie) until
    `wait`, so its process group and session cannot be taken over meanwhile."""
    if hasattr(os, "waitid"):  # the system's own answer
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) \
                is not None
        except ChildProcessError:  # reaped already
            return True
    lib = ps()
    try:
        return bool(lib.Process(proc.pid).status() == lib.STATUS_ZOMBIE)
    except lib.NoSuchProcess:  # reaped already (or a zombie psutil would not describe)
        return True


def end(scope: tree.Scope, grace: float = tree.GRACE_S) -> list[int]:
    """End every process of a turn (process/tree.py says how they are found): TERM, a
    grace, then freeze and KILL, until none is left. Returns the pids that were running."""
    return tree.end(scope, grace)


def find_live(identity: Identity | None) -> psutil.Process | None:
    """The recorded process if it still runs and is the same one; zombies count as gone."""
    if identity is None:
        return None
    lib = ps()
    try:
        proc: psutil.Process = lib.Process(identity.pid)
        if abs(proc.create_time() - identity.started) > _START_TIME_TOLERANCE:
            return None  # the pid was reused by another process
        if proc.status() == lib.STATUS_ZOMBIE:
            return None
        return proc
    except (lib.NoSuchProcess, lib.AccessDenied):
        return None


def identities(procs: Sequence[psutil.Process]) -> frozenset[Identity]:
    """The identities of `procs`, leaving out any that ended meanwhile."""
    lib = ps()
    found = set()
    for proc in procs:
        with contextlib.suppress(lib.Error):
            found.add(Identity(proc.pid, proc.create_time()))
    return frozenset(found)


def send(identity: Identity | None, sig: signal.Signals) -> bool:
    """Send `sig` to the recorded process if it still runs and is the same one."""
    lib = ps()
    proc = find_live(identity)
    if proc is None:
        return False
    try:
        proc.send_signal(sig)
    except lib.Error:
        return False
    return True


def is_alive(identity: Identity | None) -> bool:
    """Whether the recorded process still runs and is the same one (zombies count as gone);
    on Linux read from /proc, as psutil would, without loading it."""
    if identity is not None and sys.platform.startswith("linux"):
        found = _from_proc(identity.pid)
        if found is not None:
            return found[0] != b"Z" and abs(found[1] - identity.started) <= \
                _START_TIME_TOLERANCE
        if os.path.isdir("/proc/self") and not os.path.exists(f"/proc/{identity.pid}"):
            return False  # /proc is there, and this process is not
    return find_live(identity) is not None


def signal_group(leader: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(leader) == leader:  # only a group we created by start_new_session
            os.killpg(leader, sig)
