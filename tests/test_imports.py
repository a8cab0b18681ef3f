"""Imports go at the top of a module (docs/how-to-change.md, style.md 13): an import inside a
function is a speed trick, and it must say beside it the figure a user feels that pays for
it and the benchmark that prints that figure. `TYPE_CHECKING` comes from `typing`, never
defined by hand."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*sorted((ROOT / "scripts").rglob("*.py")), ROOT / "install.py"]

FIGURE = re.compile(r"\d+(?:\.\d+)?\s*(?:ms|s|%|x|×)(?![A-Za-z])")
BENCH = re.compile(r"bench/\w+\.py")


def _comment_before(lines: list[str], lineno: int) -> str:
    """The comment on line `lineno` (1-based) and on the comment lines right above it."""
    found = [lines[lineno - 1].partition("#")[2]]
    at = lineno - 2
    while at >= 0 and lines[at].lstrip().startswith("#"):
        found.append(lines[at].lstrip()[1:])
        at -= 1
    return " ".join(found)


def unexplained_imports(source: str) -> list[str]:
    """Each import inside a function whose comment gives no figure and no benchmark."""
    tree, lines = ast.parse(source), source.splitlines()
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, (ast.Import, ast.ImportFrom)):
                said = _comment_before(lines, inner.lineno)
                if not (FIGURE.search(said) and BENCH.search(said)):
                    found.append(f"line {inner.lineno}: {ast.unparse(inner)}")
    return found


def hand_made_type_checking(source: str) -> list[str]:
    return [f"line {node.lineno}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "TYPE_CHECKING" for t in node.targets)]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_inside_a_function_without_its_figure(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert unexplained_imports(source) == []
    assert hand_made_type_checking(source) == [], "use `from typing import TYPE_CHECKING`"


@pytest.mark.parametrize(("source", "caught"), [
    ("def f():\n    import json\n", True),
    ("def f():\n    # lazy: it is heavy\n    import json\n", True),
    ("def f():\n    import json  # 40 ms\n", True),
    ("class C:\n    def f(self):\n        from x import y\n", True),
    ("def f():\n    # 38 ms of every round's call, 2.1x python (bench/status_bench.py)\n"
     "    import json\n", False),
    ("def f():\n    import json  # 12.5 ms (bench/start_bench.py)\n", False),
    ("import json\n\n\ndef f():\n    return json\n", False),
])
def test_the_check_finds_an_import_without_its_figure(source: str, caught: bool) -> None:
    assert bool(unexplained_imports(source)) is caught


def test_the_check_finds_a_hand_made_type_checking() -> None:
    assert hand_made_type_checking("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    pass\n")
    assert not hand_made_type_checking("from typing import TYPE_CHECKING\n")
