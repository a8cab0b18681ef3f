"""JSON as sparring reads and writes it: the standard library's json, with NaN and the
infinities refused where a record must not hold them, and the one bound on nesting for
everything sparring parses (answers.py, codex/events.py, store/inputs.py).

What a person or Claude hands in past the bound is refused (answers.py, store/inputs.py);
what Codex printed is never dropped for it: `loads_kept` cuts the structure past the bound
and keeps its text (codex/events.py), so a deep tool result still reaches the activity list
and the independence check."""

from __future__ import annotations

import json
import re
from typing import Any

# Far deeper than any answer, verdict, synthesis or event nests (about five levels), and far
# shallower than Python's recursion limit: parsing, validating and printing stay safe.
MAX_DEPTH = 32


def not_json(name: str) -> Any:
    """NaN and Infinity are Python's extensions, not JSON (json's parse_constant)."""
    raise ValueError(f"{name} is not a JSON number")


def loads(text: str | bytes, allow_nan: bool = True) -> Any:
    """json.loads(text); without allow_nan, NaN and the infinities are not JSON either."""
    return json.loads(text) if allow_nan else json.loads(text, parse_constant=not_json)


def dumps(value: Any, allow_nan: bool = True) -> str:
    """One line, as the JSON envelope prints it (`, ` and `: ` between items)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=allow_nan)


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether lists and objects nest more than `limit` levels (measured without recursion)."""
    level: list[Any] = [value]
    for _ in range(limit + 1):
        level = [child for item in level if isinstance(item, (dict, list))
                 for child in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return False
    return True


def loads_kept(text: str | bytes, limit: int = MAX_DEPTH) -> Any:
    """json.loads(text), with every list or object nested deeper than `limit` replaced by
    the text it holds (`text_of`), and half a UTF-16 pair by U+FFFD: the structure is cut,
    no text is lost. A line nested past what the standard library parses (RecursionError)
    is parsed without recursion. ValueError: `text` is not JSON."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = _parse_flat(text.decode("utf-8") if isinstance(text, bytes) else text, limit)
    if too_deep(value, limit):
        value = cut(value, limit)
    escaped = b"\\u" in text if isinstance(text, bytes) else "\\u" in text
    return mend(value) if escaped and lone_surrogate(value) else value


def cut(value: Any, limit: int = MAX_DEPTH) -> Any:
    """`value` with each list or object below the `limit`-th level replaced by its text
    (`text_of`); `value` itself is changed (it is fresh from a parse)."""
    level: list[Any] = [value]
    for _ in range(limit - 1):
        level = [child for item in level for child in _children(item)
                 if isinstance(child, (dict, list))]
        if not level:
            return value
    for item in level:
        for key in (list(item) if isinstance(item, dict) else range(len(item))):
            if isinstance(item[key], (dict, list)):
                item[key] = text_of(item[key])
    return value


def _children(item: Any) -> Any:
    if isinstance(item, dict):
        return item.values()
    return item if isinstance(item, list) else ()


def text_of(value: Any) -> str:
    """The strings `value` holds, keys too, in reading order, one a line (found without
    recursion): what a reader of its structure would have read."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed([part for pair in item.items() for part in pair]))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return "\n".join(found)


def mend(value: Any) -> Any:
    """`value` with half a UTF-16 pair, in any text or key, replaced by U+FFFD."""
    if isinstance(value, str):  # json pairs the halves it can: any left is alone
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
    if isinstance(value, dict):
        return {mend(k): mend(v) for k, v in value.items()}
    return [mend(v) for v in value] if isinstance(value, list) else value


_TOKEN = None  # the tokens of JSON, compiled for the rare line only _parse_flat reads


def _parse_flat(text: str, limit: int) -> Any:
    """JSON parsed without recursion, lists and objects below the `limit`-th level kept as
    their strings (`text_of`). Lenient about commas and colons: it only reads what the
    standard library gave up on for its depth. ValueError: not one JSON value."""

    global _TOKEN
    if _TOKEN is None:
        _TOKEN = re.compile(r'\s*(?:("(?:[^"\\\x00-\x1f]|\\.)*")|([][{},:])|'
                            r'(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null))')
    frames: list[list[Any]] = []  # [container, the key waiting for its value]
    done: list[Any] = []
    buried: list[str] | None = None  # the strings of a part below the limit
    deep = 0  # how deep inside the buried part
    at, end = 0, len(text.rstrip())
    while at < end:
        match = _TOKEN.match(text, at)
        if match is None:
            raise ValueError(f"not JSON at character {at}")
        at = match.end()
        string, mark, scalar = match.groups()
        if mark in ("{", "["):
            if buried is not None or len(frames) == limit:
                buried, deep = buried if buried is not None else [], deep + 1
            else:
                frames.append([{} if mark == "{" else [], None])
            continue
        if mark in ("}", "]"):
            if buried is not None:
                deep -= 1
                if deep == 0:
                    _place(frames, done, "\n".join(buried))
                    buried = None
            elif not frames or isinstance(frames[-1][0], dict) != (mark == "}"):
                raise ValueError(f"{mark} closes nothing at character {at}")
            else:
                _place(frames, done, frames.pop()[0])
            continue
        if mark is not None:  # a comma or a colon
            continue
        item = json.loads(string if string is not None else scalar)
        if buried is not None:
            if isinstance(item, str):
                buried.append(item)
        else:
            _place(frames, done, item)
    if frames or buried is not None or len(done) != 1:
        raise ValueError("not one JSON value")
    return done[0]


def _place(frames: list[list[Any]], done: list[Any], value: Any) -> None:
    """A parsed value into the container being read (a string in an object waiting for a
    key is that key), or as the whole value."""
    if not frames:
        done.append(value)
        return
    frame = frames[-1]
    container = frame[0]
    if isinstance(container, list):
        container.append(value)
    elif frame[1] is None:
        if not isinstance(value, str):
            raise ValueError("an object's key is not a string")
        frame[1] = value
    else:
        container[frame[1]] = value
        frame[1] = None


def lone_surrogate(value: Any) -> bool:
    """Whether a text in `value` (keys included) holds half a UTF-16 pair, as a `\\ud800`
    escape in JSON or YAML makes: no file can hold it as UTF-8, so a text parsed from what
    Codex or Claude handed in must not carry one into a record, a round file or a report."""
    level: list[Any] = [value]
    while level:
        found: list[Any] = []
        for item in level:
            if isinstance(item, str):
                if not item.isascii() and any("\ud800" <= c <= "\udfff" for c in item):
                    return True
            elif isinstance(item, dict):
                found += [*item.keys(), *item.values()]
            elif isinstance(item, list):
                found += item
        level = found
    return False
