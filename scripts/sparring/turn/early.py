"""Codex started early: by the turn's runner forked from `start` (runner.prepared), as soon
as `start` knows codex's command line, before the prompt is rendered and the turn written.

Codex takes about a tenth of a second to reach its prompt, and reads it from stdin to its
end before it does anything else (it sends nothing, runs nothing, and exits when stdin ends
empty). So it starts on a pipe only the runner writes to, while `start` renders the prompt
and writes the turn; the runner takes the guard's snapshot, and only then feeds it the
prompt (runner._spawn_codex). Its output goes to files in a folder of its own beside the
session's turn outputs, out of the project (store/locate.outputs_folder; made with a name
nobody can guess, its files opened without following a link), moved to the turn's outputs,
under the names every turn's codex writes, once the turn exists.

Started under the same rules as any codex of a turn: only a command line sparring built,
under what the user allows now (codex/sandbox.py's gate, read again before it is given its
prompt), carrying the turn's mark, and dying with its runner (where the system can tie
them; elsewhere its stdin ends with the runner, and so does it). A turn that does not start
ends it (discard) before its prompt was ever written.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparring import disk, process
from sparring.codex import sandbox
from sparring.process import spawn
from sparring.store.sessions import Session
from sparring.turn import turns

if TYPE_CHECKING:
    from subprocess import Popen


class Early:
    """A codex started before its turn was written, still waiting for its prompt. `settled`
    once a turn took it or it was discarded."""
    def __init__(self, proc: Popen[bytes], argv: list[str], mark: str, folder: Path) -> None:
        self.proc, self.argv, self.mark, self.folder = proc, argv, mark, folder
        self.settled = False
        self.prompt = b""  # what it is to be fed, once a turn took it

    @classmethod
    def start(cls, session: Session, message: dict[str, Any]) -> Early | None:
        """Codex for the command line of a `codex` message (`argv`, `cwd`, `root`, `mark`),
        when the user's sandbox allows it now and sparring built it (codex/sandbox.py's gate,
        as for every codex: a `-c` override could have codex start a program at its own
        start); None when not, or when codex cannot start (the turn then starts codex
        itself, and records why not)."""
        argv, cwd, mark = [str(word) for word in message["argv"]], Path(message["cwd"]), \
            str(message["mark"])
        if sandbox.gate(argv, Path(message["root"]), cwd) is not None:
            return None


        # A folder of its own, made now under a name nobody can guess (after the runner's
        # pid, for _left_behind), beside the turns' outputs (the same file system: adopt
        # renames), out of the project and of any sandbox's reach: no link can be waiting
        # where codex's output goes.
        try:
            outputs = disk.folders(session.outputs)
            _left_behind(outputs)
            folder = Path(tempfile.mkdtemp(prefix=f"{turns.EARLY_PREFIX}{os.getpid()}-",
                                           dir=outputs))
        except OSError:
            return None
        try:
            proc = spawn.background(
                argv, cwd=cwd, stdin=None, stdin_pipe=True, stdout=folder / turns.EVENTS,
                stderr=folder / turns.STDERR, env=process.tree.marked(os.environ, mark),
                die_with_parent=True)
        except OSError:
            _remove(folder)
            return None
        return cls(proc, argv, mark, folder)

    def adopt(self, session: Session, n: int) -> None:
        """Its output files become turn `n`'s, where every turn's codex writes them."""
        for name in (turns.EVENTS, turns.STDERR):
            os.replace(self.folder / name, session.output(n, name))
        _remove(self.folder)

    def take(self, prompt: bytes) -> Popen[bytes]:
        """The turn runs this codex, on `prompt` (fed once the turn has recorded it)."""
        self.settled, self.prompt = True, prompt
        return self.proc

    def discard(self) -> None:
        """No turn for it: end it, and all it started, before its prompt was ever written."""
        self.settled = True
        process.end(process.tree.Scope(mark=self.mark, groups=(self.proc.pid,)))
        self.proc.wait()
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        _remove(self.folder)


def _left_behind(outputs: str) -> None:
    """The folders of early codexes whose runner is gone (a `start` killed before its turn
    took or discarded its codex, which died with it): removed, as discard would have."""
    for name in os.listdir(outputs):
        owner = name.removeprefix(turns.EARLY_PREFIX).split("-", 1)[0]
        if name.startswith(turns.EARLY_PREFIX) and owner.isdigit() and not _runs(int(owner)):
            _remove(Path(outputs, name))


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or never a pid
        return False
    except PermissionError:  # someone else's: running
        return True
    return True


def _remove(folder: Path) -> None:
    """Its folder, and what is left in it (its own files: nothing else is written there)."""
    for name in (turns.EVENTS, turns.STDERR):
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
    with contextlib.suppress(OSError):
        folder.rmdir()
