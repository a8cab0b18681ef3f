"""Structured answers: the JSON schemas both sides answer in, and their validation.

The schema file we pass to codex with `--output-schema` is the very file we
validate against (codex sends it to the model but never checks the reply).
Claude's verdict and synthesis are checked the same way (schema.py).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from sparring import schema, yamltext
from sparring.choices import CLAUDE_SYNTHESIS, CLAUDE_VERDICT
from sparring.choices import CODEX_ANSWER as CODEX_ANSWER  # what answers names
from sparring.errors import SparringError
from sparring.fence import unfence
from sparring.jsontext import MAX_DEPTH as MAX_DEPTH  # store/inputs.py bounds with these too
from sparring.jsontext import lone_surrogate as lone_surrogate
from sparring.jsontext import too_deep as too_deep

_MAX_ERRORS = 8


def schema_path(name: str) -> Path:
    return Path(__file__).resolve().parent / "schemas" / f"{name}.schema.json"


@cache
def _schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_path(name).read_text(encoding="utf-8"))
    unchecked = schema.unsupported(data)
    if unchecked:  # never half-checked (schema.py)
        raise ValueError(f"the schema {name} uses keywords sparring does not check: {unchecked}")
    return data


def problems(name: str, data: Any) -> list[str]:
    """Each way `data` breaks schema `name`, as `where: what` lines (empty when valid). What
    is wrong is said from where it is and the schema's rule it breaks, never from the value:
    a turn's error is on record, and shown, while Codex's answer is still withheld from
    Claude, and a re-ask sends it on."""
    found = sorted(schema.problems(_schema(name), data), key=lambda p: p.path)
    return [f"{_where(p.path)}: {p.message}" for p in found[:_MAX_ERRORS]]


def _where(path: Any) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return text.lstrip(".") or "(top level)"


# A text parsed from JSON or YAML escapes that no file can hold (jsontext.lone_surrogate).
NOT_UNICODE = "holds half a UTF-16 pair (a \\ud800 escape), which is not Unicode text"


def parse_bounded(text: str) -> Any:
    """`json.loads`, with nesting past MAX_DEPTH refused (ValueError) before it can exhaust
    the stack here or in whatever reads the result."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None
    if too_deep(value):
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    if lone_surrogate(value):
        raise ValueError(NOT_UNICODE)
    return value


def load_json(raw: bytes, what: str) -> Any:
    """Parse what Claude handed us: JSON, or YAML (block style reads well for long prose);
    a fenced ```json or ```yaml block is accepted (fence.unfence)."""
    text = unfence(raw.decode("utf-8", errors="replace"), lenient=True).strip()
    hint = (f"write the {what} as one JSON object or YAML mapping (schema: "
            f"{schema_path(_SCHEMA_OF[what])})")
    try:
        return parse_bounded(text)
    except json.JSONDecodeError as exc:
        if not text.startswith(("{", "[")):
            found = _yaml_mapping(text, what, hint)
            if found is not None:
                return found
        raise SparringError(f"{what}_invalid", f"the {what} is neither JSON nor a YAML mapping: "
                            f"{exc.msg} at line {exc.lineno}", hint) from exc
    except ValueError as exc:
        raise SparringError(f"{what}_invalid", f"the {what} is {exc}", hint) from exc


def _yaml_mapping(text: str, what: str, hint: str) -> dict[str, Any] | None:
    try:
        found = yamltext.load(text)
    except ValueError:
        return None
    except RecursionError:
        raise _nested(what, hint) from None
    if too_deep(found):
        raise _nested(what, hint)
    if lone_surrogate(found):
        raise SparringError(f"{what}_invalid", f"the {what} {NOT_UNICODE}", hint)
    return found if isinstance(found, dict) else None


def _nested(what: str, hint: str) -> SparringError:
    return SparringError(f"{what}_invalid", f"the {what} is nested more than {MAX_DEPTH} "
                         "levels deep", hint)


_SCHEMA_OF = {"verdict": CLAUDE_VERDICT, "synthesis": CLAUDE_SYNTHESIS}


def require_valid(what: str, data: Any, extra: list[str] | None = None) -> None:
    """Raise `<what>_invalid` listing every problem (schema first, then `extra` rules)."""
    found = problems(_SCHEMA_OF[what], data) + (extra or [])
    if found:
        raise SparringError(f"{what}_invalid", f"the {what} has {len(found)} problem(s): "
                            + "; ".join(found), f"fix them and run the command again (schema: "
                            f"{schema_path(_SCHEMA_OF[what])})", problems=found)
