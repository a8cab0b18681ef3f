"""The runner's watchdog: when the runner dies, nothing of its turn runs on.

A runner killed with SIGKILL cannot end its turn itself. Before it starts codex it starts
this small process, which waits for the runner to die (process.await_parent_exit: the
kernel tells it on Linux, it polls elsewhere) and then ends every process the runner's
record (store/runs.py) says is the turn's, codex first among them. The runner stops its
watchdog when it ends normally, and starts it again if it dies meanwhile.
"""

from __future__ import annotations

import signal

from sparring import process
from sparring.process import spawn
from sparring.store import runs
from sparring.store.sessions import Session

LOG = "watchdog.log"


def start(session: Session, runner: process.Identity, log: str) -> process.Child:
    """Start the watchdog of `runner` (this process) for `session`: a new isolated
    interpreter (spawn.program)."""
    argv = [session.path, str(runner.pid), repr(runner.started)]
    return spawn.background(spawn.program("sparring.turn.watchdog", *argv),
                            cwd=session.path, stdin=None, stdout=log, stderr=log,
                            under=session.root)


def stop(watchdog: process.Child) -> None:
    """The runner ended its turn itself: its watchdog has nothing left to do."""
    watchdog.send_signal(signal.SIGTERM)
    watchdog.wait()


def main(argv: list[str]) -> int:
    session_dir, runner = argv[0], process.Identity(int(argv[1]), float(argv[2]))
    process.await_parent_exit(runner.pid)

    run = runs.read(session_dir)
    if run is None or not runner.same(run.runner):
        return 0  # the runner recorded its turn's end, or a newer runner's record is there
    ended = process.end(run.scope(runner_too=False))
    print(f"the runner (pid {runner.pid}) died; ended the turn's processes {ended}",
          flush=True)
    return 0
