"""How a turn's processes are tied to their runner: the one place that asks which system
this is, and the one choice of mechanism, made once per process.

Both backends keep the same promises (nothing of a turn outlives its runner, its end or
`stop`), by different means:

- `linux` lets the kernel do it: PR_SET_PDEATHSIG signals a child the moment its parent
  dies, and PR_SET_CHILD_SUBREAPER makes the runner adopt whatever detaches from codex.
- `portable` needs nothing but POSIX (it is what macOS runs): the watchdog notices its
  runner is gone by polling its parent, and what detached is found through the turn's
  mark and the runner's record (process/tree.py), not through adoption.

`SPARRING_PROCESS_BACKEND` (`auto`, the default, `linux` or `portable`) forces a choice: the
test suite runs the process, fault and guard tests under both on Linux. Nothing else reads
it, and nothing else asks which system it runs on.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import NamedTuple

from sparring.errors import SparringError

ENV = "SPARRING_PROCESS_BACKEND"
NAMES = ("linux", "portable")


class Backend(NamedTuple):
    """What differs between systems, and nothing else."""

    name: str
    how: str  # in a sentence, for `sparring doctor`
    # A function run in a new child between fork and exec that ties it to `parent` (it is
    # signalled when the parent dies), or None where the system has no such thing.
    tie_to_parent: Callable[[int], Callable[[], None] | None]
    # Make this process adopt the orphans among its descendants; False where it cannot.
    adopt_orphans: Callable[[], bool]
    # Return once `parent`, this process's parent, has exited.
    await_parent_exit: Callable[[int], None]


_chosen: Backend | None = None


def current() -> Backend:
    """The backend of this process: chosen at the first call, from the system and
    SPARRING_PROCESS_BACKEND (config_invalid when that names one this system lacks)."""
    global _chosen
    if _chosen is None:
        _chosen = _load(_name())
    return _chosen


def forget() -> None:
    """Choose again at the next call (the suite switches backends between tests)."""
    global _chosen
    _chosen = None


def _name() -> str:
    wanted = os.environ.get(ENV, "").strip() or "auto"
    native = "linux" if sys.platform.startswith("linux") else "portable"
    if wanted == "auto":
        return native
    if wanted not in NAMES:
        raise SparringError("config_invalid", f"{ENV}={wanted!r} is not a process backend",
                            f"set {ENV} to auto, linux or portable, or unset it")
    if wanted == "linux" and native != "linux":
        raise SparringError("config_invalid", f"{ENV}=linux needs Linux (this is "
                            f"{sys.platform})", f"unset {ENV}: `portable` is chosen here")
    return wanted


def _load(name: str) -> Backend:
    chosen = importlib.import_module(f"sparring.process.{name}")  # process/linux.py, portable.py
    return Backend(name, chosen.HOW, chosen.tie_to_parent, chosen.adopt_orphans,
                   chosen.await_parent_exit)
