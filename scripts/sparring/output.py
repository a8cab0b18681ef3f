"""The JSON envelope every verb prints: one object, versioned, stable keys."""

from __future__ import annotations

import os
import sys

from sparring.errors import SparringError
from sparring.fastjson import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs poll's fast path (turn/quick.py) a few milliseconds
    from typing import Any

# Bump only for a breaking change of the contract; tests/test_contract.py pins it.
SCHEMA_VERSION = 1

# The exit statuses: the verb ran (whatever it found), it failed (the JSON says why), the
# command line was wrong.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


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
    return shell_word(launcher)


def shell_word(text: str) -> str:
    """`text` as one word of a command line: as it is when nothing in it needs quoting,
    else in double quotes when that is enough (a path with a space), else shlex.quote.

    Claude Code's permission rules match a command as written, and of the quoted spellings
    of a path with a space only the double-quoted one can match a rule (`Bash("…" *)`, as
    the skills and install.py write them): in single quotes or with backslashes, every
    call would stop to ask the user."""
    if _SAFE.issuperset(text) and text:
        return text  # what shlex.quote would return, without importing it (and re)
    if not _SPECIAL_IN_DOUBLE_QUOTES.intersection(text):
        return f'"{text}"'
    import shlex

    return shlex.quote(text)


# The characters shlex.quote leaves unquoted.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")
# What a shell still reads inside double quotes (and `!`, which bash may expand there), or
# what cannot be in one word.
_SPECIAL_IN_DOUBLE_QUOTES = frozenset('$`"\\!\n')


_INF = float("inf")

# What Codex and Claude wrote: passed on exactly as written, whatever keys an answer has.
_TEXT_KEYS = frozenset({"review", "last_message"})


def spell_commands(value: Any, prog: str, key: str = "", session: str | None = None) -> Any:
    """`value` with every `sparring …` command in a hint or next step spelled `prog …`, and
    its `SESSION` placeholder filled in when the session is known, so the caller can run it
    exactly as printed."""
    if isinstance(value, dict):
        return {k: v if k in _TEXT_KEYS else
                spell_commands(v, prog, k if k in _COMMAND_KEYS else key, session)
                for k, v in value.items()}
    if isinstance(value, list):
        return [spell_commands(v, prog, key, session) for v in value]
    if not isinstance(value, str) or key not in _COMMAND_KEYS:
        return value
    if key == "command" and value.startswith("sparring "):
        return prog + _fill(value[len("sparring"):], session)
    import re  # here, not at the top: poll's fast path (turn/quick.py) never needs it

    return re.sub(r"`sparring ([^`]*)`",
                  lambda m: f"`{prog} {_fill(m.group(1), session)}`", value)


def _fill(command: str, session: str | None) -> str:
    if not session:
        return command
    import re
    import shlex

    return re.sub(r"\bSESSION\b", shlex.quote(session), command)


def emit(obj: dict[str, Any], session: str | None = None) -> None:
    """Print `obj`; `session`, when the verb named one, fills the hints' placeholders."""
    prog = program()
    if prog != "sparring" or session:
        obj = spell_commands(obj, prog, session=session)
    try:
        text = _dumps(obj) + "\n"
    except ValueError:  # a NaN or an infinity got this far: print null, never NaN
        text = _dumps(finite(obj)) + "\n"
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


def _dumps(obj: Any) -> str:
    """Indented for a person at a terminal; one line for a program (Claude reads every byte).
    A NaN raises ValueError: it is not JSON."""
    if sys.stdout.isatty():
        import json

        return json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False)
    return dumps(obj, allow_nan=False)


def finite(value: Any) -> Any:
    """`value` with every NaN or infinity replaced by None: NaN is not JSON, and no reader of
    ours may see one (limits refuse them at the door; this is the last line)."""
    if isinstance(value, float):  # NaN is the one float unequal to itself
        return value if value == value and value not in (_INF, -_INF) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value
