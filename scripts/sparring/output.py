"""The JSON envelope every verb prints: one object, versioned, stable keys."""

from __future__ import annotations

import json
import math
import os
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


def spell_commands(value: Any, prog: str, key: str = "") -> Any:
    """`value` with every `sparring …` command in a hint or next step spelled `prog …`, so the
    caller can run it exactly as printed."""
    if isinstance(value, dict):
        return {k: spell_commands(v, prog, k if k in _COMMAND_KEYS else key)
                for k, v in value.items()}
    if isinstance(value, list):
        return [spell_commands(v, prog, key) for v in value]
    if isinstance(value, str) and key in _COMMAND_KEYS:
        if key == "command" and value.startswith("sparring "):
            value = prog + value[len("sparring"):]
        return value.replace("`sparring ", f"`{prog} ")
    return value


def emit(obj: dict[str, Any]) -> None:
    prog = program()
    if prog != "sparring":
        obj = spell_commands(obj, prog)
    # Indented for a person at a terminal; one line for a program (Claude reads every byte).
    indent = 2 if sys.stdout.isatty() else None
    try:
        text = json.dumps(obj, ensure_ascii=False, indent=indent, allow_nan=False) + "\n"
    except ValueError:  # a NaN or an infinity got this far: print null, never NaN
        text = json.dumps(finite(obj), ensure_ascii=False, indent=indent) + "\n"
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


def finite(value: Any) -> Any:
    """`value` with every NaN or infinity replaced by None: NaN is not JSON, and no reader of
    ours may see one (limits refuse them at the door; this is the last line)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value
