"""A process as recorded on disk: pid plus start time, because pids are reused."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

# Start times from psutil are floats derived from clock ticks; equal processes
# agree to far better than this.
_START_TIME_TOLERANCE = 0.05


class Identity(NamedTuple):
    """A process as recorded on disk: pid plus start time."""

    pid: int
    started: float

    def to_dict(self) -> dict[str, float]:
        return {"pid": self.pid, "started": self.started}

    @classmethod
    def from_dict(cls, data: Mapping[str, float] | None) -> Identity | None:
        if not data:
            return None
        return cls(int(data["pid"]), float(data["started"]))

    def same(self, other: Identity | None) -> bool:
        """The same process (start times read twice agree only to within a tolerance)."""
        return other is not None and other.pid == self.pid and abs(
            other.started - self.started) <= _START_TIME_TOLERANCE
