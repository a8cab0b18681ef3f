"""The JSON envelope every verb prints: one object, versioned, stable keys."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from typing import Any

from sparring.errors import SparringError

# Bump only for a breaking change of the contract; tests/test_contract.py pins it.
SCHEMA_VERSION = 1


def success(verb: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "ok": True, "verb": verb, **payload}


def failure(verb: str, error: SparringError) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "ok": False, "verb": verb, "error": error.to_dict()}


# Where the runner tells the caller what to run next. Only these are respelled: Codex's and
# Claude's own texts are passed on exactly as written.
_COMMAND_KEYS = frozenset({"hint", "hints", "next", "command"})


def program() -> str:
    """How the caller runs sparring: the skill launcher's full path when called through it
    (Claude Code approves the launcher by that path only), else `sparring`."""
    launcher = os.environ.get("SPARRING_LAUNCHER", "")
    return shlex.quote(launcher) if os.path.isabs(launcher) else "sparring"


_QUOTED_COMMAND = re.compile(r"`sparring ([^`]*)`")
_SESSION = re.compile(r"\bSESSION\b")


def spell_commands(value: Any, prog: str, key: str = "", session: str | None = None) -> Any:
    """`value` with every `sparring …` command in a hint or next step spelled `prog …`, and
    its `SESSION` placeholder filled in when the session is known, so the caller can run it
    exactly as printed."""
    if isinstance(value, dict):
        return {k: spell_commands(v, prog, k if k in _COMMAND_KEYS else key, session)
                for k, v in value.items()}
    if isinstance(value, list):
        return [spell_commands(v, prog, key, session) for v in value]
    if not isinstance(value, str) or key not in _COMMAND_KEYS:
        return value
    if key == "command" and value.startswith("sparring "):
        return prog + _fill(value[len("sparring"):], session)
    return _QUOTED_COMMAND.sub(lambda m: f"`{prog} {_fill(m.group(1), session)}`", value)


def _fill(command: str, session: str | None) -> str:
    return _SESSION.sub(shlex.quote(session), command) if session else command


def emit(obj: dict[str, Any], session: str | None = None) -> None:
    """Print `obj`; `session`, when the verb named one, fills the hints' placeholders."""
    prog = program()
    if prog != "sparring" or session:
        obj = spell_commands(obj, prog, session=session)
    # Indented for a person at a terminal; one line for a program (Claude reads every byte).
    indent = 2 if sys.stdout.isatty() else None
    text = json.dumps(obj, ensure_ascii=False, indent=indent) + "\n"
    # A file name that is not UTF-8 arrives as lone surrogates: print it escaped
    # rather than fail after the verb has done its work.
    data = text.encode("utf-8", errors="backslashreplace")
    if hasattr(sys.stdout, "buffer"):
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:  # an in-memory stream (tests)
        sys.stdout.write(data.decode("utf-8"))
        sys.stdout.flush()
