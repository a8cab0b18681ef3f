"""The package's layers, as its folders show them, and one home per concern.

Top down: the command line, the verbs, the workflows, one Codex turn, then codex, the guard
and the installer side by side, the store, the process door, and the leaf modules directly in
scripts/sparring/. A module imports only from its own folder or from a lower layer, lazily
inside a function too; folders side by side in one layer, the verbs, and the workflows'
own packages do not import each other; and no import closes a circle. Nothing is exempt.
Among the workflows, the registry stands above their packages, which stand above what they
share: neither a package nor a shared module imports the registry, and no shared module
imports a package.
A turn's status changes only through the state machine (states.py).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from sparring import config, states
from sparring.store import sessions
from sparring.turn import runner, turns
from support.processes import KeeperStub

PACKAGE = Path(__file__).resolve().parents[1] / "scripts" / "sparring"
# Top down; a room is a folder of the package, "" the modules directly in it. __main__, the
# entry point, belongs to the command line.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli",), ("commands",), ("workflows",), ("turn",), ("codex", "guard", "installer"),
    ("store",), ("process",), ("",))
# What stands side by side, so that neither imports the other: two verbs, and two workflows'
# own packages (each knows only itself and what the workflows share).
VERBS = "sparring.commands."
WORKFLOW_PACKAGES = "sparring.workflows."
REGISTRY = "sparring.workflows.registry"


def module_name(path: str) -> str:
    """`turn/launch.py` -> `sparring.turn.launch`; a package's `__init__.py` is the package."""
    parts = ["sparring", *Path(path).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, package: str, known: set[str]) -> set[str]:
    """The sparring modules `source` imports anywhere in it (inside functions and under
    TYPE_CHECKING too), as dotted names; `package` is the dotted name of the package holding
    it (for relative imports); a name taken from a package is its module when it is one."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                inner = f"{base}.{alias.name}"
                found.add(inner if inner in known else base)
    return {name for name in found if name.split(".")[0] == "sparring"}


def room(module: str) -> str:
    parts = module.split(".")
    if module == "sparring.__main__":
        return "cli"
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and _is_package(module)) else ""


def _is_package(module: str) -> bool:
    return (PACKAGE.joinpath(*module.split(".")[1:]) / "__init__.py").is_file()


def layer(module: str) -> int:
    here = room(module)
    return next(i for i, rooms in enumerate(LAYERS) if here in rooms)


def graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the sparring modules it imports, for {path relative to the package: source}."""
    names = {module_name(path): path for path in sources}
    known = set(names) | {module_name(path) for path in package_sources()}
    edges = {}
    for module, path in names.items():
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        edges[module] = imported(sources[path], package, known) - {module}
    return edges


def layering_problems(sources: dict[str, str]) -> list[str]:
    """Every import that goes up a layer, across a layer, or between side-by-side modules."""
    problems = []
    for module, targets in sorted(graph(sources).items()):
        for target in sorted(targets):
            mine, theirs = layer(module), layer(target)
            if theirs < mine:
                problems.append(f"{module} imports {target}, a higher layer")
            elif theirs == mine and room(module) != room(target):
                problems.append(f"{module} imports {target}, beside it in the same layer")
            elif _side_by_side(module, target):
                problems.append(f"{module} imports {target}: they stand side by side")
            elif theirs == mine and _rank(target) > _rank(module):
                problems.append(f"{module} imports {target}, above it among the workflows")
    return problems


def _rank(module: str) -> int:
    """Among the workflows: the registry 2, a workflow's own package 1, what they share 0
    (and 0 for every module of another layer)."""
    if module == REGISTRY:
        return 2
    return 1 if _workflow_package(module) is not None else 0


def _side_by_side(module: str, target: str) -> bool:
    if module.startswith(VERBS) and target.startswith(VERBS):
        return True
    mine, theirs = _workflow_package(module), _workflow_package(target)
    return mine is not None and theirs is not None and mine != theirs


def _workflow_package(module: str) -> str | None:
    """`structured` for sparring.workflows.structured.engine; None for a shared module."""
    parts = module.split(".")
    if module.startswith(WORKFLOW_PACKAGES) and (len(parts) > 3 or _is_package(module)):
        return parts[2]
    return None


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles (strongly connected components of more than one module, or a
    module importing itself), by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def package_sources() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8")
            for p in PACKAGE.rglob("*.py")}


def test_every_module_sits_in_a_layer() -> None:
    for path in package_sources():
        assert layer(module_name(path)) in range(len(LAYERS)), path


def test_no_import_goes_up_a_layer_or_sideways() -> None:
    assert layering_problems(package_sources()) == []


def test_no_import_closes_a_circle() -> None:
    assert circles(graph(package_sources())) == []


@pytest.mark.parametrize(("sources", "needle"), [
    ({"workflows/report.py": "from sparring.commands.finalize import summarize\n"},
     "a higher layer"),
    ({"turn/view.py": "def f():\n    from sparring.commands import start\n"}, "a higher layer"),
    ({"store/sessions.py": "import sparring.turn.budget\n"}, "a higher layer"),
    ({"config.py": "from sparring.workflows import registry\n"}, "a higher layer"),
    ({"turn/launch.py": "TYPE_CHECKING = False\nif TYPE_CHECKING:\n"
                        "    from sparring.cli.entry import main\n"}, "a higher layer"),
    ({"guard/check.py": "from sparring.codex import events\n"}, "beside it"),
    ({"commands/debate.py": "from sparring.commands import start as turns_verbs\n"},
     "side by side"),
    ({"commands/poll.py": "def f():\n    from sparring.commands.seal import seal\n"},
     "side by side"),
    ({"commands/verdict.py": "from .start import unaccepted_violations\n"}, "side by side"),
    ({"workflows/arch_debate/status.py": "from sparring.workflows.structured import engine\n"},
     "side by side"),
    ({"workflows/report.py": "from sparring.workflows import registry\n"}, "above it"),
    ({"workflows/arch_debate/status.py": "def f():\n    from sparring.workflows.registry "
                                         "import get\n"}, "above it"),
    ({"workflows/sessions.py": "from sparring.workflows.structured import engine\n"},
     "above it"),
])
def test_the_layering_check_finds_what_it_forbids(sources: dict[str, str], needle: str) -> None:
    found = layering_problems(sources)
    assert found and needle in found[0], found


def test_the_command_line_may_import_every_verb_and_the_verbs_what_is_below() -> None:
    sources = {"cli/main.py": "from sparring.commands import debate\n"
                              "from sparring.commands.poll import poll\n",
               "commands/debate.py": "from sparring.workflows.arch_debate import status\n"
                                     "from sparring import ledger\n",
               "turn/launch.py": "from .brief import brief\n",
               "workflows/registry.py": "from sparring.workflows import arch_debate\n",
               "workflows/arch_debate/verbs.py": "from sparring.workflows import sessions\n"}
    assert layering_problems(sources) == []


def test_the_circle_check_finds_a_circle_through_a_lazy_import() -> None:
    edges = graph({"turn/a.py": "from sparring.turn import b\n",
                   "turn/b.py": "def f():\n    from sparring.turn import c\n",
                   "turn/c.py": "import sparring.turn.a\n", "turn/d.py": "from . import a\n"})
    assert circles(edges) == [["sparring.turn.a", "sparring.turn.b", "sparring.turn.c"]]


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


def test_the_runner_moves_a_turn_through_the_state_machine(session: str, repo: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """_start_codex changes the status with states.move: a move the machine does not allow
    is refused, and nothing is written (the turn stays as it was on disk)."""
    found, n = _starting_turn(session, repo)
    before = Path(found.path, "session.json").read_bytes()
    with monkeypatch.context() as patched:
        patched.setitem(states._NEXT, states.STARTING, frozenset({states.RUNNING}))
        with pytest.raises(states.IllegalTransition, match="starting cannot become stopped"):
            runner._start_codex(found, n, KeeperStub(), runner.Stop())
    assert Path(found.path, "session.json").read_bytes() == before
    assert runner._start_codex(found, n, KeeperStub(), runner.Stop()) is None
    ended = sessions.find_turn(found.load(), n)
    assert ended["status"] == states.STOPPED and ended["error"]["code"] == "turn_stopped"
