"""The claims of docs/architecture.md that code can check.

- process/ is the one door to child processes: no other module imports subprocess (but for
  a type under TYPE_CHECKING), forks, execs or spawns.
- poll, wait and status read a session through one reader: the session's record through
  `Session.load`, a turn's events through `view.seen` (which `lifecycle.observe` and every
  other reader of events call).
- disk.py is the one writer of a file into place and the one taker of a lock
  (tests/test_disk.py checks that one).
(The layers, and that nothing imports upwards or sideways, are tests/test_layering.py's.)
"""

from __future__ import annotations

import ast
import contextlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparring.cli.main import main
from sparring.codex import events
from sparring.store import sessions, statefile
from sparring.turn import lifecycle
from support.debates import ARCH_QUESTION, FRAME

PACKAGE = Path(__file__).resolve().parents[1] / "scripts" / "sparring"

# What starts a process, besides subprocess: os's own calls, and the modules built on them.
_OS_STARTS = ("fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp",
              "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp",
              "spawnlpe", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp",
              "execlpe")
_STARTING_MODULES = {"subprocess", "multiprocessing", "pty", "concurrent.futures"}


def _type_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under `if TYPE_CHECKING:` (read by mypy alone, never run)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            inside.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return inside


def process_starts(source: str) -> list[str]:
    """What in `source` imports a module that starts processes, or calls os to start one."""
    tree = ast.parse(source)
    typed = _type_only(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in typed:
            continue
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {alias.name}" for alias in node.names
                      if alias.name.split(".")[0] in _STARTING_MODULES
                      or alias.name in _STARTING_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module in _STARTING_MODULES or node.module.split(".")[0] in {
                    "subprocess", "multiprocessing", "pty"}:
                found.append(f"line {node.lineno}: from {node.module} import ...")
            elif node.module == "os":
                found += [f"line {node.lineno}: from os import {alias.name}"
                          for alias in node.names if alias.name in _OS_STARTS]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "os" and node.attr in _OS_STARTS:
            found.append(f"line {node.lineno}: os.{node.attr}")
    return found


def test_no_module_but_process_starts_a_child_process() -> None:
    found = {path.relative_to(PACKAGE).as_posix(): starts
             for path in sorted(PACKAGE.rglob("*.py"))
             if path.relative_to(PACKAGE).parts[0] != "process"
             and (starts := process_starts(path.read_text(encoding="utf-8")))}
    assert found == {}


@pytest.mark.parametrize("source", [
    "import subprocess\n",
    "def f():\n    import subprocess\n    subprocess.run(['git'])\n",
    "from subprocess import Popen\n",
    "import multiprocessing.pool\n",
    "from concurrent.futures import ProcessPoolExecutor\n",
    "import os\nos.fork()\n",
    "import os\ndef f():\n    os.execvp('codex', ['codex'])\n",
    "from os import posix_spawn\n",
    "import os\nos.system('git status')\n",
    "import pty\n",
])
def test_the_check_finds_a_process_started_outside_the_door(source: str) -> None:
    assert process_starts(source)


def test_the_check_leaves_a_type_and_other_calls_alone() -> None:
    source = ("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from subprocess import Popen\n"
              "import os\nos.kill(1, 0)\nos.getpid()\n")
    assert process_starts(source) == []


# --- one reader of a session -----------------------------------------------------------------


class Readers:
    """Who read a session while one call ran: every read of a session's record and of a
    turn's events, each with whether it came through the one reader."""

    def __init__(self) -> None:
        self.records: list[bool] = []
        self.events: list[bool] = []

    @staticmethod
    def _through(name: str, module: str) -> bool:
        frame = sys._getframe(2)
        while frame is not None:
            code = frame.f_code
            if code.co_name == name and frame.f_globals.get("__name__") == module:
                return True
            frame = frame.f_back  # type: ignore[assignment]
        return False

    def watch(self, patched: pytest.MonkeyPatch) -> None:
        record, read_events = statefile.read_record, events.read

        def record_read(*args: Any, **kwargs: Any) -> Any:
            self.records.append(self._through("load", "sparring.store.sessions"))
            return record(*args, **kwargs)

        def events_read(*args: Any, **kwargs: Any) -> Any:
            self.events.append(self._through("seen", "sparring.turn.view"))
            return read_events(*args, **kwargs)

        patched.setattr(statefile, "read_record", record_read)
        patched.setattr(events, "read", events_read)
        for module in list(sys.modules.values()):
            if getattr(module, "__name__", "").startswith("sparring.") \
                    and getattr(module, "read_record", None) is record:
                patched.setattr(module, "read_record", record_read)


@contextlib.contextmanager
def reading() -> Iterator[Readers]:
    readers = Readers()
    with pytest.MonkeyPatch.context() as patched:
        readers.watch(patched)
        yield readers


def assert_one_reader(argv: list[str]) -> None:
    """`argv` read the session's record only through Session.load, and the turn's events
    only through view.seen (poll and wait, which show them, at least once; a status reads
    them only for what it shows)."""
    with reading() as readers, contextlib.redirect_stdout(io.StringIO()):
        assert main(list(argv)) == 0, argv
    assert readers.records and all(readers.records), (argv, readers.records)
    assert all(readers.events), (argv, readers.events)
    if argv[0] in ("poll", "wait"):
        assert readers.events, argv


def dual_model_round(sparring: Any, fake_codex: Any) -> str:
    """A dual-model session whose first round has ended: its id."""
    fake_codex.mode("ok", reply='{"points": []}')
    sid: str = sparring("init", "--skill", "dual-model").out["session"]
    sparring("start", sid, "--template", "dual-model/dispatch", "--var",
             "QUESTION=Redis or SQLite?", "--var", "CONTEXT=none")
    sparring("wait", sid, "--timeout", "30")
    return sid


def test_poll_wait_and_status_read_a_structured_session_through_one_reader(
        sparring: Any, fake_codex: Any) -> None:
    sid = dual_model_round(sparring, fake_codex)
    for argv in (["poll", sid], ["wait", sid, "--timeout", "5"], ["status", sid]):
        assert_one_reader(argv)


def test_an_arch_debates_status_reads_through_the_one_reader(
        sparring: Any, fake_codex: Any, repo: Path) -> None:
    fake_codex.script(["OPEN: the write rate.\n\nSQLite holds, with WAL."])
    sid = sparring("debate", "new", "debate", ARCH_QUESTION).out["session"]
    (repo / "debate" / "round-0-claude.md").write_text("SQLite.\n")
    sparring("debate", "round", "debate")
    sparring("wait", sid, "--timeout", "30")
    for argv in (["debate", "status", "debate"], ["poll", sid], ["status", sid]):
        assert_one_reader(argv)


def test_a_discussions_status_reads_through_the_one_reader(
        sparring: Any, fake_codex: Any) -> None:
    fake_codex.mode("ok")
    sid = sparring("discuss", "new", "--args", "high").out["session"]
    sparring("discuss", "frame", sid, input=FRAME)
    sparring("wait", sid, "--timeout", "30")
    assert_one_reader(["discuss", "status", sid])


def test_the_reader_check_sees_a_read_around_the_one_reader(
        sparring: Any, fake_codex: Any) -> None:
    """A verb that read a turn's events itself, beside the one reader, is caught."""
    session = sessions.resolve(dual_model_round(sparring, fake_codex), Path.cwd())
    with reading() as readers:
        events.read(session.output(1, "events.jsonl"), finished=True)
        lifecycle.observe(session)
    assert readers.events == [False, True]
