"""`sparring render`: a prompt template rendered strictly, or the list of templates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring import paths, templates
from sparring.store.inputs import project_root, template_variables


def render(name: str, pairs: tuple[str, ...], file_pairs: tuple[str, ...],
           vars_file: Path | None, out: Path | None) -> dict[str, Any]:
    text = templates.render(name, template_variables(pairs, file_pairs, vars_file))
    result: dict[str, Any] = {"template": name, "text": text}
    if out is not None:  # a new file inside the project, never over one (paths.write)
        result["out"] = str(paths.write(out, text, project_root(), "--out", mode=0o666))
    return result


def listing() -> dict[str, Any]:
    return {"templates": [{"name": n, "variables": sorted(templates.variables(n))}
                          for n in templates.names()]}
