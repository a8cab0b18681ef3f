"""Structured answers: the JSON schemas both sides answer in, and their validation.

The schema file we pass to codex with `--output-schema` is the very file we
validate against (codex sends it to the model but never checks the reply).
Claude's verdict and synthesis are checked the same way, with `jsonschema`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from sparring.errors import SparringError

CODEX_ANSWER = "codex-answer"
CLAUDE_VERDICT = "claude-verdict"
CLAUDE_SYNTHESIS = "claude-synthesis"
_MAX_ERRORS = 8


def schema_path(name: str) -> Path:
    return Path(__file__).resolve().parent / "schemas" / f"{name}.schema.json"


@cache
def _schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_path(name).read_text(encoding="utf-8"))
    return data


def problems(name: str, data: Any) -> list[str]:
    """Each way `data` breaks schema `name`, as `where: what` lines (empty when valid)."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(_schema(name))
    found = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    return [f"{_where(e.absolute_path)}: {e.message}" for e in found[:_MAX_ERRORS]]


def _where(path: Any) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return text.lstrip(".") or "(top level)"


def load_json(raw: bytes, what: str) -> Any:
    """Parse JSON handed to us by Claude; a fenced ```json block is accepted."""
    text = raw.decode("utf-8", errors="replace").strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SparringError(f"{what}_invalid", f"the {what} is not JSON: {exc.msg} at line "
                            f"{exc.lineno}", f"write the {what} as one JSON object "
                            f"(schema: {schema_path(_SCHEMA_OF[what])})") from exc


_SCHEMA_OF = {"verdict": CLAUDE_VERDICT, "synthesis": CLAUDE_SYNTHESIS}


def require_valid(what: str, data: Any, extra: list[str] | None = None) -> None:
    """Raise `<what>_invalid` listing every problem (schema first, then `extra` rules)."""
    found = problems(_SCHEMA_OF[what], data) + (extra or [])
    if found:
        raise SparringError(f"{what}_invalid", f"the {what} has {len(found)} problem(s): "
                            + "; ".join(found), f"fix them and run the command again (schema: "
                            f"{schema_path(_SCHEMA_OF[what])})", problems=found)
