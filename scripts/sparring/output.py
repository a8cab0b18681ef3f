"""The JSON envelope every verb prints: one object, versioned, stable keys."""

from __future__ import annotations

import os
import sys

from sparring.errors import SparringError
from sparring.fastjson import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs poll's fast path (quick.py) a few milliseconds
    from typing import Any

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
    if not os.path.isabs(launcher):
        return "sparring"
    if _SAFE.issuperset(launcher):
        return launcher  # what shlex.quote would return, without importing it (and re)
    import shlex

    return shlex.quote(launcher)


# The characters shlex.quote leaves unquoted.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


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
    if sys.stdout.isatty():
        import json

        text = json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
    else:
        text = dumps(obj) + "\n"
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
