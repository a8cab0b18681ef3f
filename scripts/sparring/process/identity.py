"""A process as recorded on disk: pid plus start time, because pids are reused."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any, NamedTuple

from sparring.records import ProcessRecord

# Start times from psutil are floats derived from clock ticks; equal processes
# agree to far better than this.
_START_TIME_TOLERANCE = 0.05


class Identity(NamedTuple):
    """A process as recorded on disk: pid plus start time."""

    pid: int
    started: float

    def to_dict(self) -> ProcessRecord:
        return {"pid": self.pid, "started": self.started}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Identity | None:
        if not data:
            return None
        return cls(int(data["pid"]), float(data["started"]))

    def same(self, other: Identity | None) -> bool:
        """The same process (start times read twice agree only to within a tolerance)."""
        return other is not None and other.pid == self.pid and abs(
            other.started - self.started) <= _START_TIME_TOLERANCE


def proc_stat(pid: int) -> tuple[bytes, int] | None:
    """(state, start) of `pid` from /proc on Linux: the start in clock ticks since boot (the
    22nd field of /proc/PID/stat, the 20th after the command name), state `Z` a zombie. None
    when /proc cannot tell (another system, or no such process)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return fields[0], int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def ps() -> ModuleType:
    """psutil, for what /proc does not tell (the processes of a turn, another system's)."""
    # Here: psutil's import would add 33 ms, 1.2x Python's own start, to every call that looks
    # at no process beyond /proc, every round's on Linux among them (bench/status_bench.py);
    # and install.py spawns through this package before psutil is installed.
    import psutil

    return psutil
