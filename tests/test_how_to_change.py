"""docs/how-to-change.md says where each change goes: what it claims, checked. Every path,
Python name and test it gives exists; it is the first page docs/architecture.md links to;
the command line has no verb but those the declarations give, and only cli/ knows click."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import click

from sparring.cli import verbs
from sparring.cli.main import build
from sparring.workflows import registry

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "how-to-change.md"
TEXT = PAGE.read_text(encoding="utf-8")
CODE = re.findall(r"`([^`\n]+)`", TEXT)
# The short names the page uses for sparring's modules.
MODULES = {"config": "sparring.config", "params": "sparring.params", "codex": "sparring.codex",
           "sandbox": "sparring.codex.sandbox", "errors": "sparring.errors",
           "output": "sparring.output", "layout": "sparring.installer.layout",
           "runs": "sparring.store.runs", "Workflow": "sparring.workflows.workflow"}


def test_every_path_it_names_exists() -> None:
    paths = [c.split("::")[0] for c in CODE
             if re.match(r"(scripts|tests|docs|templates|bench)/", c)]
    assert len(paths) > 20
    for path in paths:
        if "<" not in path:
            assert (ROOT / path).exists(), path


def test_every_test_it_names_exists() -> None:
    named = [c for c in CODE if "::" in c]
    assert len(named) >= 8
    for item in named:
        path, test = item.split("::")
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        assert test in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, item


def test_every_name_it_gives_is_there() -> None:
    names = [c for c in CODE if re.fullmatch(r"[A-Za-z_]+\.[A-Za-z_]+", c)
             and c.split(".")[0] in MODULES]
    assert len(names) >= 10
    for name in names:
        module, attribute = name.split(".")
        found = importlib.import_module(MODULES[module])
        if module == "Workflow":
            assert attribute in found.Workflow.__slots__, name
        else:
            assert hasattr(found, attribute), name


def test_architecture_links_to_it_first() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert re.findall(r"\]\(([^)#]+)", text)[0] == "how-to-change.md"


def test_the_command_line_has_only_the_declared_verbs() -> None:
    """One declaration: every command of the click tree is a row of cli/verbs.py or a
    workflow's Verb, and every declared verb is a command."""
    def leaves(group: click.Group, prefix: str = "") -> set[str]:
        found = set()
        for name, command in group.commands.items():
            found |= (leaves(command, f"{prefix}{name} ") if isinstance(command, click.Group)
                      else {prefix + name})
        return found

    declared = {verb.name for verb in verbs.VERBS} | {
        f"{flow.command} {verb.name}" for flow in registry.WORKFLOWS.values() for verb in
        flow.verbs}
    assert leaves(build()) == declared


def test_only_the_command_line_imports_click() -> None:
    package = ROOT / "scripts" / "sparring"
    found = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                    node.module or ""]
                if any(n.split(".")[0] == "click" for n in names):
                    found.append(path.relative_to(package).parts[0])
    assert found and set(found) == {"cli"}


def test_the_walk_through_counts_the_files_it_lists() -> None:
    """architecture.md's walk-through for a new workflow says how many files outside its
    folders change, and how many of them are regenerated: the table lists that many."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    said = re.search(r"\*\*Outside them: (\d+) files, (\d+) of them regenerated\.\*\*\n\n"
                     r"\| # \| file \| why \|\n\|---\|---\|---\|\n((?:\|.*\n)+)", text)
    assert said is not None
    rows = said.group(3).splitlines()
    assert len(rows) == int(said.group(1))
    assert sum("regenerated, not written" in row for row in rows) == int(said.group(2))
    for row in rows:
        path = re.findall(r"`([^`]+)`", row.split("|")[2])[0]
        assert "premortem" in path or (ROOT / path).exists(), path
