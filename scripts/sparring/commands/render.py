"""`sparring render`: a prompt template rendered strictly, or the list of templates."""

from __future__ import annotations

from typing import Any

from sparring import paths, templates
from sparring.output import Text
from sparring.store.inputs import project_root, template_variables


def render(here: str, name: str | None, list_all: bool, out: str | None, raw: bool,
           var_pairs: tuple[str, ...], var_file_pairs: tuple[str, ...],
           vars_file: str | None) -> dict[str, Any] | Text:
    """`sparring render`: the template (or, with --list or no name, every template)."""
    if list_all or name is None:
        return listing()
    result = rendered(name, var_pairs, var_file_pairs, vars_file, out)
    return Text(result["text"]) if raw else result


def rendered(name: str, pairs: tuple[str, ...], file_pairs: tuple[str, ...],
             vars_file: str | None, out: str | None) -> dict[str, Any]:
    text = templates.render(name, template_variables(pairs, file_pairs, vars_file))
    result: dict[str, Any] = {"template": name, "text": text}
    if out is not None:  # a new file inside the project, never over one (paths.write)
        result["out"] = str(paths.write(out, text, project_root(), "--out", mode=0o666))
    return result


def listing() -> dict[str, Any]:
    return {"templates": [{"name": n, "variables": sorted(templates.variables(n))}
                          for n in templates.names()]}
