"""json.loads and one-line json.dumps without importing json.

`import json` compiles its regular expressions (and imports re and enum) before it parses
a byte: a fifth of what the whole `poll` of an ended turn costs (turn/quick.py). Both functions
go straight to `_json`, the C accelerator that json itself calls for the same work, with
json's own settings, so they return exactly what json would (bytes are decoded as json
decodes them). A Python without it (or with a different one) gets json itself.

`too_deep` is the one bound on nesting for everything sparring parses (answers.py,
codex/events.py, store/inputs.py).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"  # what json skips around a document
# Far deeper than any answer, verdict, synthesis or event nests (about five levels), and far
# shallower than Python's recursion limit: parsing, validating and printing stay safe.
MAX_DEPTH = 32


class _Settings:
    """What json.JSONDecoder() hands the C scanner (its attributes are read by name)."""

    def __init__(self, parse_constant: Callable[[str], Any]) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = parse_constant
        self.memo: dict[str, str] = {}


_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


def not_json(name: str) -> Any:
    """NaN and Infinity are Python's extensions, not JSON (json's parse_constant)."""
    raise ValueError(f"{name} is not a JSON number")


def _scanner(parse_constant: Callable[[str], Any]) -> Callable[[str, int], tuple[Any, int]] | None:
    try:
        from _json import make_scanner
    except ImportError:
        return None
    # A duck-typed context, as json.JSONDecoder is.
    scan: Callable[[str, int], tuple[Any, int]] = make_scanner(
        _Settings(parse_constant))  # type: ignore[arg-type]
    return scan


_scan = _scanner(_CONSTANTS.__getitem__)
_scan_strict = _scanner(not_json)


def loads(text: str | bytes, allow_nan: bool = True) -> Any:
    """json.loads(text); a document that is not JSON raises ValueError, as json's does.
    Without allow_nan, NaN and the infinities (Python's extensions) are not JSON either."""
    if isinstance(text, bytes):
        text = text.decode(_encoding(text), "surrogatepass")
    scan = _scan if allow_nan else _scan_strict
    if scan is None:
        import json

        return json.loads(text) if allow_nan else json.loads(text, parse_constant=not_json)
    if text.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = scan(text, start)
    except StopIteration:
        raise ValueError("Expecting value") from None
    if len(text[end:].lstrip(_WHITESPACE)) != 0:
        raise ValueError("Extra data")
    return value


def _encoding(raw: bytes) -> str:
    """The encoding json.loads reads `raw` in (json.detect_encoding: RFC 4627's rule)."""
    if raw.startswith((b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00")):
        return "utf-32"
    if raw.startswith((b"\xfe\xff", b"\xff\xfe")):
        return "utf-16"
    if raw.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if len(raw) >= 4:
        if not raw[0]:
            return "utf-16-be" if raw[1] else "utf-32-be"
        if not raw[1]:
            return "utf-16-le" if raw[2] or raw[3] else "utf-32-le"
    elif len(raw) == 2:
        if not raw[0]:
            return "utf-16-be"
        if not raw[1]:
            return "utf-16-le"
    return "utf-8"


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


def dumps(value: Any, allow_nan: bool = True) -> str:
    """json.dumps(value, ensure_ascii=False, allow_nan=allow_nan): one line, `, ` and `: `
    between items; without allow_nan a NaN or an infinity raises ValueError, as json's."""
    try:
        from _json import encode_basestring, make_encoder

        encode = make_encoder({}, _unserializable, encode_basestring, None, ": ", ", ",
                              False, False, allow_nan)
        return "".join(encode(value, 0))
    except (ImportError, TypeError):  # no accelerator, or one json calls differently
        import json

        return json.dumps(value, ensure_ascii=False, allow_nan=allow_nan)


def _unserializable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
