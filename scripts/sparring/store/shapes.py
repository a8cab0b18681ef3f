"""The shape of a session file, checked once when it is read.

Every verb indexes into session.json; a file of the right syntax but the wrong shape (a
hand edit, a torn copy, another program's JSON) would otherwise end in a KeyError deep in
some verb. `session_problem` names the first thing that is not as sparring wrote it, so
the reader can report `state_corrupt` and leave the file alone.

A field spec is a string: `str`, `int`, `num`, `bool`, `dict`, `list`, `any`, or `status`;
a trailing `?` allows null. Keys in REQUIRED must be present; the others are checked when
they are.
"""

from __future__ import annotations

import math
import os

from sparring import states

TYPE_CHECKING = False  # typing costs every round's call 4 ms of a 10-20 ms Python start
if TYPE_CHECKING:  # every round's poll checks shapes, through cli/entry.py
    from typing import Any

_SESSION = {"id": "str", "skill": "str", "root": "str", "cwd": "str", "created_at": "num",
            "turns": "list", "codex": "dict", "thread_id": "str?", "inbox": "str?",
            "engine": "dict", "debate": "dict", "discussion": "dict", "degraded_notes": "list",
            "reports": "list", "finalized_at": "num?", "foreign_writes": "list",
            "outputs": "str?"}
_SESSION_REQUIRED = ("id", "skill", "root", "cwd", "created_at", "turns", "codex")
# The session format's own keys (written by session.py, state.py, turn/budget.py, the report;
# `question` by an early version): any other top-level key is a workflow's own record
# (`debate`, `discussion`), whose status the CLI adds to poll and wait.
SESSION_KEYS = frozenset({
    "id", "skill", "root", "cwd", "created_at", "thread_id", "codex", "turns", "inbox",
    "budget_tokens", "engine", "degraded_notes", "reports", "finalized_at", "foreign_writes",
    "format", "kind", "question", "budget_stop", "report_sha256", "outputs"})

_TURN = {"n": "int", "round": "int", "purpose": "str", "status": "status", "created_at": "num",
         "settings": "dict", "argv": "list", "started_at": "num?", "ended_at": "num?",
         "thread_id": "str?", "recovers": "int?", "schema": "str?", "template": "dict?",
         "guard": "dict?", "answer_file": "str?", "runner": "dict?", "codex": "dict?",
         "stop_requested": "bool", "exit_code": "int?", "end_reason": "str?", "error": "dict?",
         "recoverable": "bool", "usage_cumulative": "dict?", "usage": "dict?",
         "sandbox": "dict?", "go_on": "str?", "summary_id": "str?"}
_TURN_REQUIRED = ("n", "round", "purpose", "status", "created_at", "settings", "argv")
_SETTINGS = {"effort": "str", "model": "str?", "sandbox": "str", "timeout": "num",
             "stall_after": "num"}
_PROCESS = {"pid": "int", "started": "num"}

_ENGINE = {"verdicts": "dict", "decisions": "dict", "seal": "dict?", "revealed_at": "num?",
           "schema": "str?", "barrier": "bool", "rejudged": "list", "independence": "dict?"}
_VERDICT = {"points": "list", "convergence": "dict"}
_DEBATE = {"dir": "str", "question": "str", "sent": "dict", "max_rounds": "int",
           "written": "dict", "stand_ins": "list"}
_DISCUSSION = {"effort": "str", "model": "str", "max_rounds": "int", "topic": "str?",
               "messages": "list"}
_MESSAGE = {"round": "int", "speaker": "str", "text": "str"}


def session_problem(data: Any) -> str | None:
    """What is wrong with a session document's shape, or None when it is as expected."""
    found = _fields(data, _SESSION, _SESSION_REQUIRED, "the session")
    if found:
        return found
    if not _is_name(data["skill"]):
        return f"the session's skill {data['skill']!r} is not a workflow's name"
    for i, turn in enumerate(data["turns"]):
        found = _turn_problem(turn, f"turns[{i}]")
        if found is None and turn["n"] != i + 1:  # each turn's folder is turns/<n>
            found = f"turns[{i}].n is {turn['n']}, not {i + 1}: turns are numbered in order"
        if found:
            return found
    return _thread_problem(data) or _sections_problem(data)


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


def _turn_problem(turn: Any, where: str) -> str | None:
    found = _fields(turn, _TURN, _TURN_REQUIRED, where)
    found = found or _fields(turn["settings"], _SETTINGS, tuple(_SETTINGS), f"{where}.settings")
    for key in ("runner", "codex"):
        if found is None and turn.get(key):
            found = _fields(turn[key], _PROCESS, tuple(_PROCESS), f"{where}.{key}")
    if found is None and not all(isinstance(arg, str) for arg in turn["argv"]):
        found = f"{where}.argv holds something other than text"
    return found


def _sections_problem(data: dict[str, Any]) -> str | None:
    engine = data.get("engine")
    if engine is not None:
        found = _fields(engine, _ENGINE, ("verdicts", "decisions"), "engine")
        for key, verdict in ({} if found else engine["verdicts"]).items():
            found = found or _fields(verdict, _VERDICT, tuple(_VERDICT),
                                     f"engine.verdicts[{key}]")
        for key, decision in ({} if found else engine["decisions"]).items():
            if found is None and not isinstance(decision, dict):
                found = f"engine.decisions[{key}] is not an object"
        if found:
            return found
    if "debate" in data:
        found = _fields(data["debate"], _DEBATE, ("dir", "question", "sent", "max_rounds"),
                        "debate")
        if found:
            return found
    if "discussion" in data:
        found = _fields(data["discussion"], _DISCUSSION, tuple(_DISCUSSION), "discussion")
        for i, message in enumerate([] if found else data["discussion"]["messages"]):
            found = found or _fields(message, _MESSAGE, tuple(_MESSAGE),
                                     f"discussion.messages[{i}]")
        return found
    return None


def _fields(value: Any, spec: dict[str, str], required: tuple[str, ...],
            where: str) -> str | None:
    if not isinstance(value, dict):
        return f"{where} is not an object"
    for key in required:
        if key not in value:
            return f"{where} has no {key!r}"
    for key, kind in spec.items():
        if key in value and not _is(value[key], kind):
            return f"{where}.{key} is not {_DESCRIBED[kind.rstrip('?')]}"
    return None


_DESCRIBED = {"str": "text", "int": "a whole number", "num": "a finite number",
              "bool": "true or false", "dict": "an object", "list": "a list",
              "status": "a turn status", "any": "anything"}


def _is(value: Any, kind: str) -> bool:
    if kind.endswith("?"):
        return value is None or _is(value, kind[:-1])
    if kind == "any":
        return True
    if kind == "status":
        return value in states.TERMINAL or value in (states.STARTING, states.RUNNING)
    if kind in ("int", "num") and isinstance(value, bool):
        return False
    if kind == "num":
        return isinstance(value, (int, float)) and math.isfinite(value)
    return isinstance(value, _TYPES[kind])


_TYPES: dict[str, type] = {"str": str, "int": int, "bool": bool, "dict": dict, "list": list}


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
