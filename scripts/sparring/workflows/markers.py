"""Markers in free-text rounds, parsed so that they cannot be spoofed by quoting.

`AGREED:` counts only as the first line of a round. `[CONSENSUS_REACHED]` and
`[SEARCH_REQUEST: "query"]` count only as lines of their own, outside fenced
or indented code and outside quotes. Text that merely mentions a marker (a
quote of the other side, an example in a code block, a sentence about the
rules) never triggers it.

Point lines give a prose round's points their ids, for the agreement audit
(audit.py): `- C-2 disagree: the claim. Evidence: src/a.py:12; pytest tests/x.py`,
a line of its own outside code and quotes, with the point's id (C-n Claude's,
X-n Codex's), the writer's stance on it (agree, disagree or refine) and,
optionally, the evidence it cites, separated by `;`.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing costs every round's call 4 ms of a 10-20 ms Python start
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator

AGREED = "AGREED:"
CONSENSUS = "[CONSENSUS_REACHED]"
# Compiled where they are used (re caches them): a debate's status, every round, reads its
# markers with string methods alone, and each pattern compiled at start costs it time.
_SEARCH = "[SEARCH_REQUEST:"
_POINT = (r"(?:[-*+]\s+)?\**(?P<id>[CX]-[1-9][0-9]*)\**\s+\(?(?P<stance>agree|"
          r"disagree|refine)\)?\s*:\s*(?P<rest>.*)")
_EVIDENCE = r"(?:^|[\s(.;—-])evidence:\s*(?P<items>.*)$"
_PATH_LINE = r"[^\s:`]+:[1-9][0-9]*(?:-[1-9][0-9]*)?"


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
                 evidence: tuple[str, ...]) -> None:
        self.line, self.id, self.stance, self.claim = line, id, stance, claim
        self.evidence = evidence

    def _values(self) -> tuple[int, str, str, str, tuple[str, ...]]:
        return self.line, self.id, self.stance, self.claim, self.evidence

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PointLine) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

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


def _evidence_items(text: str) -> tuple[str, ...]:
    """`a.py:3; pytest x` → each item; a comma list of `path:line`s counts as several."""
    items: list[str] = []
    path_line = _pattern(_PATH_LINE)
    for part in text.strip().rstrip(").").split(";"):
        part = part.strip()
        pieces = [p.strip() for p in part.split(",")]
        if len(pieces) > 1 and all(path_line.fullmatch(p.strip("`")) for p in pieces):
            items += pieces
        elif part:
            items.append(part)
    return tuple(items)
