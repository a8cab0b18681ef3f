"""Prompt templates, rendered strictly.

Templates live in the repository's `templates/<workflow>/<name>.md.j2` (the
installed package carries the same files). jinja2 renders them with
`StrictUndefined`, so a missing variable fails and names itself instead of
leaving a hole in a prompt. Values are inserted as text and never evaluated:
a value holding `{{ … }}` or `{% … %}` comes out exactly as given.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from sparring.errors import SparringError

if TYPE_CHECKING:
    import jinja2

SUFFIX = ".md.j2"
_UNDEFINED = r"'([^']+)' is undefined"
_NO_FIELD = r"has no attribute '([^']+)'"


def templates_dir() -> Path:
    installed = Path(__file__).resolve().parent / "templates"
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "templates"  # a source checkout


def names() -> list[str]:
    """Every template's name (`think-about/round1`); files starting with `_` are partials."""
    root = templates_dir()
    found = (p.relative_to(root).as_posix()[: -len(SUFFIX)] for p in root.rglob(f"*{SUFFIX}"))
    return sorted(n for n in found if not n.rpartition("/")[2].startswith("_"))


def _jinja() -> ModuleType:
    """jinja2, with its `meta`, for a template rendered or read."""
    # Here: jinja2's import would add 103 ms, 3.7x Python's own start, to every call that
    # renders nothing, each round's look at an arch-debate among them (bench/status_bench.py).
    import jinja2.meta

    return jinja2


@functools.cache
def _environment() -> jinja2.Environment:
    """One environment for the process, as jinja2 means it: a template, and the partials it
    includes, is compiled once (and again only once its file changed), not at every render.
    (The suite renders in one process thousands of times: a tenth of its own CPU went to
    compiling the same templates again.)"""
    lib = _jinja()
    made: jinja2.Environment = lib.Environment(
        loader=lib.FileSystemLoader(str(templates_dir())),
        undefined=lib.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return made


def _require(name: str) -> None:
    if name not in names():
        raise SparringError("template_not_found", f"no template named {name!r}",
                            f"available: {', '.join(names())}")


def render(name: str, variables: dict[str, Any]) -> str:
    _require(name)
    try:
        return _environment().get_template(name + SUFFIX).render(**variables)
    except _jinja().UndefinedError as exc:
        match = re.search(_UNDEFINED, str(exc)) or re.search(_NO_FIELD, str(exc))
        missing = match.group(1) if match else str(exc)
        raise SparringError(
            "template_missing_var", f"template {name} needs {missing}, which was not given",
            f"pass --var {missing}=VALUE (or --var-file {missing}=PATH, or --vars-file)",
            variable=missing) from exc


def variables(name: str) -> set[str]:
    """The variables a template (with the partials it includes) refers to."""
    _require(name)
    env, meta = _environment(), _jinja().meta
    found: set[str] = set()
    pending, seen = [name + SUFFIX], set()
    while pending:
        source_name = pending.pop()
        seen.add(source_name)
        assert env.loader is not None
        source = env.loader.get_source(env, source_name)[0]
        tree = env.parse(source)
        found |= meta.find_undeclared_variables(tree)
        pending += [t for t in meta.find_referenced_templates(tree) if t and t not in seen]
    return found
