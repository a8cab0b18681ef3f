"""JSON as sparring reads and writes it: the standard library's json, with NaN and the
infinities refused where a record must not hold them, and the one bound on nesting for
everything sparring parses (answers.py, codex/events.py, store/inputs.py)."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing costs every round's call 4 ms of a 10-20 ms Python start
if TYPE_CHECKING:
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
