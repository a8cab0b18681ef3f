"""One home per concern: library modules never import the verbs, a verb never imports
another, and a turn's status changes only through the state machine (states.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from sparring import config, states
from sparring.store import session as sessions
from sparring.turn import record as turns
from sparring.turn import runner

PACKAGE = Path(__file__).resolve().parents[1] / "scripts" / "sparring"
# Only the command line wires the verbs: cli/ (its first door, which answers a few verbs
# without click, the click command tree and the modules it splits its click into).
WIRING = re.compile(r"cli/\w+\.py")


def imported(source: str, package: str) -> set[str]:
    """The sparring modules `source` imports (lazily too), as dotted names; `package` is the
    dotted name of the package holding it (for relative imports)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] == "sparring"}


def layering_problems(modules: dict[str, str]) -> list[str]:
    """What breaks the layering, for {path relative to the package: source}."""
    problems = []
    for path, source in sorted(modules.items()):
        inside = path.startswith("commands/")
        package = "sparring.commands" if inside else "sparring"
        own = f"sparring.commands.{Path(path).stem}"
        for name in sorted(imported(source, package)):
            verbs = name == "sparring.commands" or name.startswith("sparring.commands.")
            if not verbs or name in ("sparring.commands", own):
                continue
            if not inside and not WIRING.fullmatch(path):
                problems.append(f"{path} (a library module) imports {name}")
            elif inside:
                problems.append(f"{path} (a verb) imports another verb: {name}")
    return problems


def package_sources() -> dict[str, str]:
    return {str(p.relative_to(PACKAGE)): p.read_text(encoding="utf-8")
            for p in PACKAGE.rglob("*.py")}


def test_library_modules_import_no_verb_and_no_verb_imports_another() -> None:
    assert layering_problems(package_sources()) == []


@pytest.mark.parametrize(("path", "source"), [
    ("report.py", "from sparring.commands.finalize import summarize\n"),
    ("view.py", "def f():\n    from sparring.commands import start\n"),
    ("launch.py", "import sparring.commands.start\n"),
    ("commands/debate.py", "from sparring.commands import start as turns_verbs\n"),
    ("commands/poll.py", "def f():\n    from sparring.commands.seal import seal\n"),
    ("commands/verdict.py", "from .start import unaccepted_violations\n"),
])
def test_the_layering_check_finds_what_it_forbids(path: str, source: str) -> None:
    assert layering_problems({path: source})


def test_the_command_line_may_import_every_verb() -> None:
    wiring = "from sparring.commands import debate\nfrom sparring.commands.poll import poll\n"
    assert layering_problems({"cli/main.py": wiring, "cli/workflows.py": wiring}) == []


# A turn's status written without the state machine: `turn["status"] = ...`, or
# `turn.update(status=...)` / `dict(..., status=...)` on a turn.
_DIRECT_STATUS = re.compile(r"""\[["']status["']\]\s*=(?!=)|\bupdate\(\s*status\s*=""")


def test_no_module_but_the_state_machine_sets_a_turn_status() -> None:
    found = [f"{path}:{source.count(chr(10), 0, m.start()) + 1}"
             for path, source in package_sources().items() if path != "states.py"
             for m in _DIRECT_STATUS.finditer(source)]
    assert found == []
    assert _DIRECT_STATUS.search("        turn.update(\n            status=outcome.status,")
    assert _DIRECT_STATUS.search('        turn["status"] = states.RUNNING')
    assert _DIRECT_STATUS.search("        turn.update(status=states.STOPPED, ended_at=now)")
    assert not _DIRECT_STATUS.search('    if turn["status"] == states.RUNNING:')


def test_move_allows_what_the_machine_allows_and_refuses_the_rest() -> None:
    turn: dict[str, Any] = {"n": 3, "status": states.STARTING, "started_at": None}
    states.move(turn, states.RUNNING, started_at=12.5)
    assert turn == {"n": 3, "status": states.RUNNING, "started_at": 12.5}
    states.move(turn, states.COMPLETED)
    with pytest.raises(states.IllegalTransition, match="turn 3: completed cannot become"):
        states.move(turn, states.RUNNING, started_at=99.0)
    assert turn == {"n": 3, "status": states.COMPLETED, "started_at": 12.5}, "left as it was"
    with pytest.raises(states.IllegalTransition):
        states.move({"n": 1, "status": states.STARTING}, states.TIMEOUT)


def _starting_turn(session_id: str, repo: Path) -> tuple[sessions.Session, int]:
    """A `starting` turn, asked to stop before its runner launched codex."""
    session = sessions.resolve(session_id, repo)
    settings = config.resolve_turn({}, config.load(repo))
    with session.update() as data:
        turn = turns.new_turn(session, data, round_no=1, purpose="round", settings=settings,
                              prompt=b"q", argv=["codex", "exec", "-"], thread_id=None)
        turn["stop_requested"] = True
    return session, turn["n"]


class _Keeper:
    """What _spawn_codex needs of the runner's Keeper (turn/keeper.py)."""

    mark = "a-mark"

    def note(self, **fields: Any) -> None:
        pass

    def ended(self, turn: dict[str, Any]) -> None:
        pass


def test_the_runner_moves_a_turn_through_the_state_machine(session: str, repo: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """_spawn_codex changes the status with states.move: a move the machine does not allow
    is refused, and nothing is written (the turn stays as it was on disk)."""
    found, n = _starting_turn(session, repo)
    before = (found.dir / "session.json").read_bytes()
    with monkeypatch.context() as patched:
        patched.setitem(states._NEXT, states.STARTING, frozenset({states.RUNNING}))
        with pytest.raises(states.IllegalTransition, match="starting cannot become stopped"):
            runner._spawn_codex(found, n, _Keeper())
    assert (found.dir / "session.json").read_bytes() == before
    assert runner._spawn_codex(found, n, _Keeper()) is None
    ended = sessions.find_turn(found.load(), n)
    assert ended["status"] == states.STOPPED and ended["error"]["code"] == "turn_stopped"
