"""Markers in free-text rounds, parsed so that they cannot be spoofed by quoting.

`AGREED:` counts only as the first line of a round. `[CONSENSUS_REACHED]` and
`[SEARCH_REQUEST: "query"]` count only as lines of their own, outside fenced
or indented code and outside quotes. Text that merely mentions a marker (a
quote of the other side, an example in a code block, a sentence about the
rules) never triggers it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

AGREED = "AGREED:"
CONSENSUS = "[CONSENSUS_REACHED]"
_SEARCH = re.compile(r'\[SEARCH_REQUEST:\s*"([^"\n]+)"\s*\]')
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def first_line(text: str) -> str:
    """The round's first line: leading blank lines and a byte-order mark do not count."""
    for line in text.lstrip("\ufeff").splitlines():
        if line.strip():
            return line
    return ""


def opens_with_agreed(text: str) -> bool:
    return first_line(text).startswith(AGREED)


def after_agreed(text: str) -> str:
    """The brief an `AGREED:` round proposes: everything after the marker."""
    body = text.lstrip("\ufeff").lstrip()
    return body[len(AGREED):].strip() if body.startswith(AGREED) else ""


def plain_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, stripped line) of lines outside code blocks and quotes."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1) == fence:
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        if line.startswith(("    ", "\t")) or line.lstrip().startswith(">"):
            continue
        yield number, line.strip()


def has_consensus(text: str) -> bool:
    return any(line == CONSENSUS for _, line in plain_lines(text))


def search_requests(text: str) -> list[str]:
    found = []
    for _, line in plain_lines(text):
        match = _SEARCH.fullmatch(line)
        if match:
            found.append(match.group(1).strip())
    return found


def stray_mentions(text: str, marker: str) -> list[int]:
    """Lines that mention `marker` without counting as it (for rule-break reports)."""
    if marker == AGREED:
        counted = {_first_line_number(text)} if opens_with_agreed(text) else set()
    else:
        counted = {n for n, line in plain_lines(text) if line == marker}
    return [n for n, line in enumerate(text.splitlines(), start=1)
            if marker in line and n not in counted]


def _first_line_number(text: str) -> int:
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        if line.strip():
            return number
    return 0

