"""The Linux backend: the kernel ties a child to its parent (prctl(2)).

PR_SET_PDEATHSIG asks the kernel to signal this process when its parent dies, with no
polling and nothing that can be missed; PR_SET_CHILD_SUBREAPER makes a process the new
parent of every orphan below it, so a descendant that detaches (setsid and a double fork)
stays where the runner can find and end it.
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable

HOW = ("the kernel ends codex with its runner (PR_SET_PDEATHSIG), and the runner adopts "
       "what detaches from codex (PR_SET_CHILD_SUBREAPER)")
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_PR_SET_CHILD_SUBREAPER = 36


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def tie_to_parent(parent: int) -> Callable[[], None]:
    """SIGTERM for the child when `parent` dies. Only for single-threaded parents (it runs
    as preexec_fn), and the parent must be the thread that forks (the signal follows it)."""
    libc = _libc()  # loaded before the fork: the child only calls into it

    def arm() -> None:  # runs in the child between fork and exec
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before we armed it
            os._exit(1)

    return arm


def adopt_orphans() -> bool:
    return bool(_libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def await_parent_exit(parent: int) -> None:
    """Sleep until the kernel says `parent` died (SIGUSR1 on its death). A SIGUSR1 sent by
    anyone else while the parent lives does not count."""
    wake = {signal.SIGUSR1}
    signal.pthread_sigmask(signal.SIG_BLOCK, wake)
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGUSR1, 0, 0, 0)
    while os.getppid() == parent:  # checked after arming: a death before it is seen here
        signal.sigwait(wake)
