"""The portable backend: plain POSIX, no help from the kernel (what macOS runs).

No child is tied to its parent here and nothing adopts orphans: the runner's watchdog
polls for its parent instead, and a process that detached is found through the turn's
mark and the runner's record (process/tree.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

HOW = ("a watchdog ends the turn when its runner dies, and what detaches from codex is "
       "found by the turn's mark and the runner's record")
# How often the watchdog looks for its parent: a runner's death is acted on this fast.
POLL_S = 0.2


def tie_to_parent(parent: int) -> Callable[[], None] | None:
    return None


def adopt_orphans() -> bool:
    return False


def await_parent_exit(parent: int) -> None:
    """Poll until this process is no longer `parent`'s child (a dead parent's children are
    handed to init, launchd or the nearest subreaper)."""
    while os.getppid() == parent:
        time.sleep(POLL_S)
