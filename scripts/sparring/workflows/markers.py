"""Markers in free-text rounds, parsed so that they cannot be spoofed by quoting.

`AGREED:` counts only as the first line of a round. `[CONSENSUS_REACHED]` and
`[SEARCH_REQUEST: "query"]` count only as lines of their own, outside fenced
or indented code and outside quotes. Text that merely mentions a marker (a
quote of the other side, an example in a code block, a sentence about the
rules) never triggers it.

Point lines give a prose round's points their ids, for the agreement audit
(audit.py): `- C-2 disagree: the claim. Evidence: src/a.py:12 "the line quoted"; pytest
tests/x.py`, a line of its own outside code and quotes, with the point's id (C-n Claude's,
X-n Codex's), the writer's stance on it (agree, refine, disagree, or withdraw for one's own
point) and, optionally, the evidence it cites, separated by `;`: a `path:line` followed by
the line it quotes in double quotes, a URL, or a command.

`Revisit when: …`, a line of its own outside code and quotes, says what would change the
writer's mind about what the debate settles: the report's "Revisit when" line takes each
side's latest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

AGREED = "AGREED:"
CONSENSUS = "[CONSENSUS_REACHED]"
# Compiled where they are used (re caches them): a debate's status, every round, reads its
# markers with string methods alone, and each pattern compiled at start costs it time.
_SEARCH = "[SEARCH_REQUEST:"
REVISIT = "Revisit when:"
_POINT = (r"(?:[-*+]\s+)?\**(?P<id>[CX]-[1-9][0-9]*)\**\s+\(?(?P<stance>agree|"
          r"disagree|refine|withdraw)\)?\s*:\s*(?P<rest>.*)")
_EVIDENCE = r"(?:^|[\s(.;—-])evidence:\s*(?P<items>.*)$"
# A `path:line` and the line it quotes ("…", “…” or `…`), as one item.
_CITED = (r"(?P<cite>[^\s:`\"“;,]+:[1-9][0-9]*(?:-[1-9][0-9]*)?)"
          r"(?:\s*(?:\"(?P<a>[^\"]*)\"|“(?P<b>[^”]*)”|`(?P<c>[^`]*)`))?")


def _pattern(text: str, ignore_case: bool = False) -> re.Pattern[str]:
    return re.compile(text, re.I if ignore_case else 0)


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
        opened = _fence(line)
        if fence is not None:
            if opened == fence:
                fence = None
            continue
        if opened:
            fence = opened
            continue
        if line.startswith(("    ", "\t")) or line.lstrip().startswith(">"):
            continue
        yield number, line.strip()


def _fence(line: str) -> str | None:
    """The fence a line opens or closes, ``` or ~~~ after at most three spaces, else None."""
    body = line.lstrip(" ")
    if len(line) - len(body) > 3 or not body.startswith(("```", "~~~")):
        return None
    return body[:3]


def has_consensus(text: str) -> bool:
    return any(line == CONSENSUS for _, line in plain_lines(text))


def search_requests(text: str) -> list[str]:
    found = []
    for _, line in plain_lines(text):
        query = _search_request(line)
        if query is not None:
            found.append(query.strip())
    return found


def _search_request(line: str) -> str | None:
    """The query of a line that is `[SEARCH_REQUEST: "query"]` and nothing more, as
    `\\[SEARCH_REQUEST:\\s*"([^"\\n]+)"\\s*\\]` reads it (with string methods: a discussion's
    status, every round, reads its markers)."""
    if not (line.startswith(_SEARCH) and line.endswith("]")):
        return None
    quoted = line[len(_SEARCH):-1].strip()
    query = quoted[1:-1]
    if len(quoted) < 3 or quoted[0] != '"' or quoted[-1] != '"' or '"' in query or "\n" in query:
        return None
    return query


def revisit_when(text: str) -> str | None:
    """What the round's last `Revisit when:` line says (a line of its own, outside code and
    quotes; a list item's `- ` and bold marks around the words allowed), or None."""
    found = None
    for _, line in plain_lines(text):
        body = line.lstrip("-*+ ").replace("**", "")
        if body[:len(REVISIT)].lower() == REVISIT.lower() and body[len(REVISIT):].strip():
            found = body[len(REVISIT):].strip()
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



class PointLine:
    """A point line of a round (a plain class: markers load with every debate's status)."""
    __slots__ = ("claim", "evidence", "id", "line", "stance")

    def __init__(self, line: int, id: str, stance: str, claim: str,
                 evidence: tuple[Any, ...]) -> None:
        self.line, self.id, self.stance, self.claim = line, id, stance, claim
        self.evidence = evidence

    def _values(self) -> tuple[int, str, str, str, tuple[Any, ...]]:
        return self.line, self.id, self.stance, self.claim, self.evidence

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PointLine) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(repr(self._values()))

    def __repr__(self) -> str:
        return f"PointLine{self._values()!r}"


def point_lines(text: str) -> list[PointLine]:
    """The round's point lines, in order (outside code blocks and quotes)."""
    found = []
    point, evidence = _pattern(_POINT, ignore_case=True), _pattern(_EVIDENCE, ignore_case=True)
    for number, line in plain_lines(text):
        match = point.fullmatch(line)
        if match is None:
            continue
        rest = match.group("rest").strip()
        cited = evidence.search(rest)
        claim = rest[:cited.start()] if cited else rest
        items = _evidence_items(cited.group("items")) if cited else ()
        found.append(PointLine(number, match.group("id"), match.group("stance").lower(),
                               claim.strip().rstrip(" (—-").strip(), items))
    return found


def _evidence_items(text: str) -> tuple[Any, ...]:
    """`a.py:3 "x = 1"; pytest x` → each item (a quoted `path:line` as `{"cite", "quote"}`);
    a comma list of `path:line`s counts as several."""
    items: list[Any] = []
    cited = _pattern(_CITED)
    for part in _outside_quotes(text.strip().rstrip(").")):
        part = part.strip()
        found = list(cited.finditer(part))
        if found and not cited.sub("", part).replace(",", "").strip():
            for match in found:
                quote = match.group("a") or match.group("b") or match.group("c")
                items.append({"cite": match.group("cite"), "quote": quote} if quote
                             else match.group("cite"))
        elif part:
            items.append(part)
    return tuple(items)


def _outside_quotes(text: str) -> list[str]:
    """`text` split at each `;` that is not inside a quote."""
    parts, current, closing = [], "", None
    for char in text:
        if closing is None and char in _OPENING:
            closing = _OPENING[char]
        elif closing is not None and char == closing:
            closing = None
        elif closing is None and char == ";":
            parts.append(current)
            current = ""
            continue
        current += char
    return [*parts, current]


_OPENING = {'"': '"', "“": "”", "`": "`"}
