"""The JSON envelope every verb prints: one object, versioned, stable keys."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from sparring.errors import Hint, SparringError
from sparring.jsontext import dumps
from sparring.quoting import shell_word

# Bump only for a breaking change of the contract; tests/test_contract.py pins it.
SCHEMA_VERSION = 1

# The exit statuses: the verb ran (whatever it found), it failed (the JSON says why), the
# command line was wrong.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class Text(str):
    """What a verb prints as it is instead of its JSON object: a table or a rendering for
    a person, who asked for it (`status --table`, `render --raw`, `doctor --text`)."""

    exit_status = EXIT_OK


class Answer(dict[str, Any]):
    """A verb's JSON object whose exit status says more than "done": `doctor` when not
    ready exits EXIT_FAILED though it did its job."""

    exit_status = EXIT_OK


def with_status(payload: dict[str, Any] | Text, status: int) -> Answer | Text:
    """`payload`, printed as ever, the process exiting with `status`."""
    made = Text(payload) if isinstance(payload, Text) else Answer(payload)
    made.exit_status = status
    return made


def success(verb: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "ok": True, "verb": verb, **payload}


def failure(verb: str, error: SparringError) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "ok": False, "verb": verb, "error": error.to_dict()}


class Command(Hint):
    """One whole command line the runner made (`next.command`): `sparring`, a verb, and
    words that are sparring's own (see `command`)."""

    __slots__ = ()


def command(*words: str) -> Command:
    """`sparring WORDS…` as one command line, each word quoted as it needs (shell_word).
    Only pass what sparring made: verbs, options, session ids, its own paths."""
    return Command(" ".join(["sparring", *(shell_word(w) for w in words)]))


def is_text(arg: str) -> bool:
    """Whether an argument is text (bytes that are not UTF-8 arrive as surrogate escapes):
    one that is not is `not_utf8` (cli/main.py), before any verb runs."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def program() -> str:
    """How the caller runs sparring: the skill launcher's full path when called through it
    (Claude Code approves the launcher by that path only), else `sparring`."""
    launcher = os.environ.get("SPARRING_LAUNCHER", "")
    if not os.path.isabs(launcher):
        return "sparring"
    return shell_word(launcher)


# A command in a hint is spelled with the launcher only when a shell reads it as words and
# nothing more: each word bare (no character a shell treats specially) or quoted as
# shell_word quotes, one space apart. A hint is the runner's own words, but some are read
# back from a record a cloned repository may hold; one that would chain, substitute,
# redirect or glob stays plain `sparring …`, which no rule approves. Read with string
# methods, not re: every round's status prints hints (tests/test_printed_commands.py holds
# the readers to the patterns they stand for).
_NOT_BARE = frozenset(";&|<>()$`\\\"'*?[]{}~!#")  # and whitespace
_NOT_IN_DOUBLE_QUOTES = frozenset('"$`\\!\n')

_INF = float("inf")


def spell_commands(value: Any, prog: str, session: str | None = None) -> Any:
    """`value` with every `sparring …` command the runner wrote (a `Hint`: an error's hint,
    a next step, a `Command`) spelled `prog …`, and its `SESSION` placeholder filled in when
    the session is known, so the caller can run it exactly as printed. Any other string is
    data (a file name, Codex's or Claude's text, a question) and passes untouched, whatever
    key it sits under: no text from outside ever comes out looking like a runner command."""
    if isinstance(value, Hint):
        return _spelled(value, prog, _session_id(session))
    if isinstance(value, dict):
        return {k: spell_commands(v, prog, session) for k, v in value.items()}
    if isinstance(value, list):
        return [spell_commands(v, prog, session) for v in value]
    return value


def _spelled(hint: Hint, prog: str, session: str | None) -> str:
    if isinstance(hint, Command):
        return prog + _fill(hint[len("sparring"):], session)
    # re.sub(r"`sparring ([^`]*)`", …): each `sparring …` span, left to right.
    text, opening, done, at = str(hint), "`sparring ", [], 0
    while (start := text.find(opening, at)) >= 0:
        end = text.find("`", start + len(opening))
        if end < 0:
            break
        command = text[start + len(opening):end]
        done += [text[at:start], f"`{prog} {_fill(command, session)}`"
                 if _plain_words(command) else text[start:end + 1]]
        at = end + 1
    return "".join([*done, text[at:]])


def _plain_words(text: str) -> bool:
    """Whether `text` is words one space apart, each made of bare characters (no
    whitespace, none of _NOT_BARE), "double-quoted" runs (none of _NOT_IN_DOUBLE_QUOTES
    inside) and 'single-quoted' runs (no line feed inside)."""
    pieces, at = 0, 0  # pieces of the word being read
    while at < len(text):
        char = text[at]
        if char == " ":
            if not pieces:
                return False  # a leading space, or two in a row
            pieces, at = 0, at + 1
            continue
        if char in "\"'":
            end = text.find(char, at + 1)
            inside = text[at + 1:end]
            stop = _NOT_IN_DOUBLE_QUOTES if char == '"' else {"\n"}
            if end < 0 or any(c in stop for c in inside):
                return False
            at = end + 1
        elif char.isspace() or char in _NOT_BARE:
            return False
        else:
            at += 1
        pieces += 1
    return pieces > 0


def _session_id(ref: str | None) -> str | None:
    """The id to fill in for SESSION: only a session id as sparring makes them (what the
    command line named may be a folder, or anything typed): `[a-z][a-z-]*-` then 8 and 6
    decimal digits and 6 lowercase hex digits, `-` apart."""
    if not ref:
        return None
    name = ref.rstrip("/").rpartition("/")[2]
    parts = name.rsplit("-", 3)
    if len(parts) != 4:
        return None
    workflow, day, moment, tail = parts
    lower = "abcdefghijklmnopqrstuvwxyz"
    return name if (workflow[:1] in lower and workflow and all(c in lower + "-" for c in workflow)
                    and _decimal(day, 8) and _decimal(moment, 6) and len(tail) == 6
                    and all(c in "0123456789abcdef" for c in tail)) else None


def _decimal(text: str, length: int) -> bool:
    return len(text) == length and text.isdecimal()


def _fill(command: str, session: str | None) -> str:
    """Every SESSION that stands as a word of its own (re's `\\bSESSION\\b`) made `session`."""
    if not session:
        return command
    done, at, word = [], 0, "SESSION"
    while (found := command.find(word, at)) >= 0:
        after = found + len(word)
        if _wordy(command, found - 1) or _wordy(command, after):
            done.append(command[at:found + 1])
            at = found + 1
            continue
        done += [command[at:found], session]
        at = after
    return "".join([*done, command[at:]])


def _wordy(text: str, at: int) -> bool:
    """Whether text[at] is a word character as re's \\w reads one (none outside the text)."""
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")


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
        return json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False)
    return dumps(obj, allow_nan=False)


def finite(value: Any) -> Any:
    """`value` with every NaN or infinity replaced by None: NaN is not JSON, and no reader of
    ours may see one (limits refuse them first; this is the last line)."""
    if isinstance(value, float):  # NaN is the one float unequal to itself
        return value if value == value and value not in (_INF, -_INF) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value
