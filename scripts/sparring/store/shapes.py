"""The shape of a session file, checked once when it is read.

Every verb indexes into session.json; a file of the right syntax but the wrong shape (a
hand edit, a torn copy, another program's JSON) would otherwise end in a KeyError deep in
some verb. `session_problem` names the first thing that is not as sparring wrote it, so
the reader can report `state_corrupt` and leave the file alone.

What a record must hold is read from its class in records.py, the one declaration of its
type: the keys every such record has, the types of all of them (a record nested in another
is checked in turn, and each item of a list). A turn's settings are checked against the
settings table (config.TURN_SETTINGS); the engine record, the ledger's, against `_ENGINE`
below until it is declared as the others are.
"""

from __future__ import annotations

import functools
import math
import os
import types
import typing
from typing import Annotated, Any, Union

from sparring import config, records, states


def session_problem(data: Any) -> str | None:
    """What is wrong with a session document's shape, or None when it is as expected."""
    found = record_problem(data, records.SessionRecord, "the session")
    if found:
        return found
    if not _is_name(data["skill"]):
        return f"the session's skill {data['skill']!r} is not a workflow's name"
    for i, turn in enumerate(data["turns"]):
        if turn["n"] != i + 1:  # each turn's folder is turns/<n>
            return f"turns[{i}].n is {turn['n']}, not {i + 1}: turns are numbered in order"
    return _thread_problem(data)


@functools.cache
def _declared(record: type) -> tuple[dict[str, Any], frozenset[str]]:
    """A record class's keys with their types, and the keys every such record has."""
    hints = typing.get_type_hints(record, vars(records), include_extras=True)
    return hints, frozenset(getattr(record, "__required_keys__", hints))


def record_problem(value: Any, record: type, where: str) -> str | None:
    """What in `value` is not a `record` (a TypedDict of records.py), or None."""
    if not isinstance(value, dict):
        return f"{where} is not an object"
    hints, required = _declared(record)
    for key in hints:
        if key in required and key not in value:
            return f"{where} has no {key!r}"
    for key, kind in hints.items():
        if key in value:
            found = _problem(value[key], kind, key if where == "the session"
                             else f"{where}.{key}")
            if found:
                return found
    return None


def _problem(value: Any, kind: Any, where: str) -> str | None:
    """What is wrong with `value` as a `kind` (a record's annotation), or None."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is Annotated:
        if args[1] == "ledger":  # by its own spec, not its class (the ledger's NotRequired)
            return _engine_problem(value, where)
        return _problem(value, args[0], where) or _marked(value, args[1], where)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        said = [_problem(value, k, where) for k in args if k is not type(None)]
        return None if None in said else said[0]
    if kind is Any:
        return None
    if typing.is_typeddict(kind):
        return record_problem(value, kind, where)
    if origin is list:
        if not isinstance(value, list):
            return f"{where} is not a list"
        items = (_problem(item, args[0], f"{where}[{i}]") for i, item in enumerate(value))
        return next((said for said in items if said), None)
    if origin is dict or kind is dict:
        return None if isinstance(value, dict) else f"{where} is not an object"
    return None if _is(value, kind) else f"{where} is not {_DESCRIBED[kind]}"


_DESCRIBED = {str: "text", int: "a whole number", float: "a finite number",
              bool: "true or false"}


def _is(value: Any, kind: type) -> bool:
    if kind in (int, float) and isinstance(value, bool):
        return False
    if kind is float:
        return isinstance(value, (int, float)) and math.isfinite(value)
    return isinstance(value, kind)


def _marked(value: Any, mark: str, where: str) -> str | None:
    """The checks records.py asks for by name, beyond a key's type."""
    if mark == "object or null":
        return None if value is None or isinstance(value, dict) else f"{where} is not an object"
    if mark == "status":
        ok = value in states.TERMINAL or value in (states.STARTING, states.RUNNING)
        return None if ok else f"{where} is not a turn status"
    if mark == "settings":  # each setting's shape, as the table says now
        return _fields(value, {s.name: s.shape for s in config.TURN_SETTINGS},
                       tuple(s.name for s in config.TURN_SETTINGS if s.required), where)
    raise AssertionError(mark)


# -- the ledger's records, by their own spec (the ledger keeps its types in records.py) -----
#
# A field spec is a string: `str`, `int`, `num`, `bool`, `dict`, `list`, `any`; a trailing
# `?` allows null.

_ENGINE = {"verdicts": "dict", "decisions": "dict", "seal": "dict?", "revealed_at": "num?",
           "schema": "str?", "barrier": "bool", "rejudged": "list", "independence": "dict?",
           "sent_back": "dict", "challenge_off": "str?"}
_VERDICT = {"points": "list", "convergence": "dict"}


def _engine_problem(engine: Any, where: str) -> str | None:
    found = _fields(engine, _ENGINE, ("verdicts", "decisions"), where)
    for key, verdict in ({} if found else engine["verdicts"]).items():
        found = found or _fields(verdict, _VERDICT, tuple(_VERDICT),
                                 f"{where}.verdicts[{key}]")
    for key, decision in ({} if found else engine["decisions"]).items():
        if found is None and not isinstance(decision, dict):
            found = f"{where}.decisions[{key}] is not an object"
    return found


def _fields(value: Any, spec: dict[str, str], required: tuple[str, ...],
            where: str) -> str | None:
    if not isinstance(value, dict):
        return f"{where} is not an object"
    for key in required:
        if key not in value:
            return f"{where} has no {key!r}"
    for key, kind in spec.items():
        if key in value and not _spec_is(value[key], kind):
            return f"{where}.{key} is not {_SPEC_DESCRIBED[kind.rstrip('?')]}"
    return None


_SPEC = {"str": str, "int": int, "num": float, "bool": bool, "dict": dict, "list": list}
_SPEC_DESCRIBED = {"str": "text", "int": "a whole number", "num": "a finite number",
                   "bool": "true or false", "dict": "an object", "list": "a list",
                   "any": "anything"}


def _spec_is(value: Any, kind: str) -> bool:
    if kind.endswith("?"):
        return value is None or _spec_is(value, kind[:-1])
    return kind == "any" or _is(value, _SPEC[kind])


def is_thread_id(text: str) -> bool:
    """What a Codex thread id looks like (a UUID today): a word of letters, digits, `-`, `_`
    and `.` that begins with a letter or a digit. Anything else, set on codex's command line
    after `resume`, could read as a flag."""
    bare = text.replace("-", "").replace("_", "").replace(".", "")
    return 0 < len(text) <= 128 and text[:1].isalnum() and bare.isascii() and bare.isalnum()


def _thread_problem(data: dict[str, Any]) -> str | None:
    for where, value in [("thread_id", data.get("thread_id")),
                         *((f"turns[{i}].thread_id", turn.get("thread_id"))
                           for i, turn in enumerate(data["turns"]))]:
        if value is not None and not is_thread_id(value):
            return f"{where} {value[:40]!r} is not a Codex thread id"
    return None


def _is_name(text: str) -> bool:
    """A workflow's name as the registry spells them (which ones exist is its business: a
    session of a workflow this sparring does not know is refused where it is used)."""
    bare = text.replace("-", "")
    return text[:1].isalpha() and bare.isascii() and bare.isalnum() and text == text.lower()


# -- where a session file lies ---------------------------------------------------------------

def placement_problem(data: dict[str, Any], directory: str) -> str | None:
    """What in a session document (of the right shape) disagrees with where it lies, or
    None. A cloned repository may hold a `.sparring/sessions/<id>/session.json` sparring
    never wrote: every verb acts on its root, cwd, inbox, debate folder and schema names,
    so each must be this project's own (the root the one it lies in, the rest inside it),
    and its id one sparring makes (it goes into every command the runner prints)."""
    name = os.path.basename(directory)
    if not is_session_id(name) or data["id"] != name:
        return f"the session's id {data['id']!r} is not an id sparring makes, or not its folder's"
    root = os.path.realpath(os.path.dirname(os.path.dirname(os.path.dirname(directory))))
    if not (os.path.isabs(data["root"]) and os.path.isabs(data["cwd"])):
        # a relative one would be judged against whatever folder the reader works in
        return f"the session's root {data['root']!r} or cwd {data['cwd']!r} is not absolute"
    if os.path.realpath(data["root"]) != root:
        return f"the session's root {data['root']!r} is not the project it lies in ({root})"
    if not _inside(os.path.realpath(data["cwd"]), root):  # where codex runs: really inside
        return f"the session's cwd {data['cwd']!r} is not inside the project {root}"
    # The rest as written (every path is opened through paths.py, which follows no link: a
    # folder Codex swapped for a link during its turn leaves the session readable).
    places = [("inbox", data.get("inbox")),
              ("debate.dir", (data.get("debate") or {}).get("dir")),
              *((f"turns[{i}].answer_file", t.get("answer_file"))
                for i, t in enumerate(data["turns"]))]
    for key, value in places:
        if value is not None and not (os.path.isabs(value) and _inside(
                os.path.normpath(value), root)):
            return f"the session's {key} {value!r} is not inside the project {root}"
    if data.get("inbox") and not data["inbox"].endswith(os.path.join(".sparring", "inbox")):
        return f"the session's inbox {data['inbox']!r} is not a .sparring/inbox folder"
    token = data.get("outputs")
    if token is not None and not (len(token) == 16 and all(c in "0123456789abcdef"
                                                           for c in token)):
        return f"the session's outputs {token!r} is not a token sparring makes"
    names = [(data.get("engine") or {}).get("schema"), *(t.get("schema") for t in data["turns"])]
    bad = next((n for n in names if n is not None and not _is_name(n)), None)
    return None if bad is None else f"the session names a schema {bad!r} sparring has not"


def is_session_id(name: str) -> bool:
    """`<workflow>-YYYYmmdd-HHMMSS-<6 hex>`, as session.create makes them."""
    parts = name.rsplit("-", 3)
    return (len(parts) == 4 and _is_name(parts[0]) and _digits(parts[1], 8)
            and _digits(parts[2], 6) and len(parts[3]) == 6
            and all(c in "0123456789abcdef" for c in parts[3]))


def _digits(text: str, n: int) -> bool:
    return len(text) == n and text.isascii() and text.isdigit()


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
