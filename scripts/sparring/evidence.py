"""Evidence as a side cites it, checked for what it says, not only for where it points.

A citation is a `path:line` (or `path:line-line`) with the line it quotes, a URL, or a
command or test. Each is marked:

- `verified`: a `path:line` whose quote is in the file, within `NEAR` lines of the cited
  number (read through paths.py: inside the project, no link followed), and, when Codex
  cites it, a file Codex's recorded activity on its thread opened by then;
- `not_matching`: the quote is not there, or the file or line is not;
- `unquoted`: a `path:line` with no quote (or one too short to check anything);
- `unread`: Codex cites a file its recorded activity never opened (the quote may match:
  it read it in the other side's citation, not in the code);
- `unchecked`: a URL or a command, which the runner cannot read; it is `seen` when it is
  in that round's recorded activity (a command Codex ran, a search it made, the search
  results handed in with the round).

A citation *holds* when it is verified, or unchecked and seen: only such evidence moves a
point (workflows/audit.py: a concession is backed by it) or counts as new in a round
(ledger.py's stalemate rule).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from sparring import paths
from sparring.errors import SparringError

VERIFIED, NOT_MATCHING, UNQUOTED, UNREAD, UNCHECKED = (
    "verified", "not_matching", "unquoted", "unread", "unchecked")
MARKS = (VERIFIED, NOT_MATCHING, UNQUOTED, UNREAD, UNCHECKED)
PATH_LINE, URL, COMMAND = "path_line", "url", "command"
NEAR = 2  # lines either side of the cited number where the quote may stand
MIN_QUOTE = 5  # characters, spaces aside, a quote needs to check anything
# What the runner reads of one cited file, at most (a source file is far smaller).
FILE_BYTES = 4 * 1024 * 1024

_PATH_LINE = re.compile(r"(?P<path>[^\s:`\"]+):(?P<line>[1-9][0-9]*)(?:-(?P<end>[1-9][0-9]*))?")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.I)
_ELLIPSIS = re.compile(r"\.\.\.|…")
_SPACE = re.compile(r"\s+")
_PAIRS = {('"', '"'), ("'", "'"), ("`", "`"), ("“", "”"), ("‘", "’")}
_TOKEN_EDGE = re.compile(r"[\s'\"`|;&<>()=,]+")


class Citation(NamedTuple):
    cite: str
    quote: str | None = None


def citation(item: Any) -> Citation:
    """One evidence item as a record holds it: a string (an older record, or a citation
    without a quote), or `{"cite": …, "quote": …}`; a Citation is itself."""
    if isinstance(item, Citation):
        return item
    if isinstance(item, Mapping):
        quote = item.get("quote")
        return Citation(str(item.get("cite") or ""), str(quote) if quote else None)
    return Citation(str(item))


def citations(items: Sequence[Any] | None) -> tuple[Citation, ...]:
    return tuple(citation(item) for item in items or ())


def normal(cite: str) -> str:
    """A citation as compared: backticks, a leading `./` and runs of space do not count."""
    text = " ".join(cite.strip().strip("`").split())
    return text[2:] if text.startswith("./") else text


def kind(cite: str) -> str:
    text = normal(cite)
    if _PATH_LINE.fullmatch(text):
        return PATH_LINE
    if _URL.match(text):
        return URL
    return COMMAND


def shown(item: Any) -> str:
    """A citation as a prompt or a report writes it: `path:line "quote"`."""
    found = citation(item)
    return f'{found.cite} "{found.quote}"' if found.quote else found.cite


class Mark(NamedTuple):
    cite: str
    quote: str | None
    kind: str
    mark: str
    seen: bool  # a URL or a command: in that round's recorded activity
    why: str

    @property
    def holds(self) -> bool:
        return self.mark == VERIFIED or (self.mark == UNCHECKED and self.seen)

    def to_dict(self) -> dict[str, Any]:
        return {"cite": self.cite, "quote": self.quote, "kind": self.kind, "mark": self.mark,
                "seen": self.seen, "holds": self.holds, "why": self.why}


class Record(NamedTuple):
    """What the record shows Codex did, round by round, for the checks."""

    # round -> texts where a command or a URL counts as seen: the commands Codex ran that
    # round (and its searches), and the text handed in with the round (search results)
    activity: Mapping[int, Sequence[str]] = {}
    # round -> (what Codex ran or called, what it got back) on the thread that answered
    # that round, up to that round: what Codex opened by then
    reads: Mapping[int, Sequence[tuple[str, str]]] = {}


class Checker:
    """Marks citations; reads each cited file once."""

    def __init__(self, root: Path, record: Record | None = None) -> None:
        self.root, self.record = root, record or Record()
        self._files: dict[str, tuple[list[str] | None, str]] = {}

    def mark(self, item: Any, side: str, round_no: int) -> Mark:
        """`item` as `side` ("codex" or "claude") cited it in round `round_no`."""
        cite, quote = citation(item)
        text, found = normal(cite), _clean(quote)
        what = kind(cite)
        if what == PATH_LINE:
            return self._path_line(cite, found, side, round_no)
        seen = len(text) > 2 and any(text in normal(done)
                                     for done in self.record.activity.get(round_no, ()))
        why = "" if seen else (f"not in round {round_no}'s recorded activity (no command or "
                               "search of Codex's, nor the text handed in)")
        return Mark(cite, found, what, UNCHECKED, seen, why)

    def _path_line(self, cite: str, quote: str | None, side: str, round_no: int) -> Mark:
        match = _PATH_LINE.fullmatch(normal(cite))
        assert match is not None
        path = match.group("path")
        start = int(match.group("line"))
        end = int(match.group("end") or start)
        lines, why = self._lines(path)
        if lines is None:
            return Mark(cite, quote, PATH_LINE, NOT_MATCHING, False, why)
        if max(start, end) > len(lines):
            return Mark(cite, quote, PATH_LINE, NOT_MATCHING, False,
                        f"{path} has {len(lines)} line{'s' if len(lines) != 1 else ''}, "
                        f"not {max(start, end)}")
        if side == "codex" and not opened(path, self.record.reads.get(round_no, ())):
            return Mark(cite, quote, PATH_LINE, UNREAD, False,
                        f"no command Codex ran on its thread by round {round_no} opened {path}")
        if quote is None:
            return Mark(cite, None, PATH_LINE, UNQUOTED, False,
                        "no quote of the line (or one too short to check)")
        if not quote_holds(lines, min(start, end), max(start, end), quote):
            return Mark(cite, quote, PATH_LINE, NOT_MATCHING, False,
                        f"the quote is not within {NEAR} lines of {path}:{start}")
        return Mark(cite, quote, PATH_LINE, VERIFIED, False, "")

    def _lines(self, path: str) -> tuple[list[str] | None, str]:
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    def _read(self, path: str) -> tuple[list[str] | None, str]:
        try:
            data = paths.read(self.root / path, self.root, "cited evidence", FILE_BYTES).data
        except SparringError as error:
            return None, f"{path}: {error.code.replace('_', ' ')}"
        except OSError as error:  # a folder on the way is not one, and the like
            return None, f"{path}: {error.strerror or 'unreadable'}"
        return data.decode("utf-8", errors="replace").splitlines(), ""


def _clean(quote: str | None) -> str | None:
    """A quote as checked: its own quotation marks and spacing do not count; too short to
    tell one line from another, it checks nothing."""
    if quote is None:
        return None
    text = _SPACE.sub(" ", quote).strip()
    if len(text) > 1 and (text[0], text[-1]) in _PAIRS:  # the quote put in quotation marks
        text = text[1:-1].strip()
    return text if len(text.replace(" ", "")) >= MIN_QUOTE else None


def quote_holds(lines: Sequence[str], start: int, end: int, quote: str) -> bool:
    """Whether `quote` stands in lines `start`..`end` (1-based) or within NEAR of them:
    spacing does not count, and an ellipsis stands for what the quote left out."""
    window = _SPACE.sub(" ", " ".join(lines[max(start - 1 - NEAR, 0):end + NEAR]))
    at = 0
    for piece in (_SPACE.sub(" ", p).strip() for p in _ELLIPSIS.split(quote)):
        if not piece:
            continue
        found = window.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def opened(path: str, reads: Sequence[tuple[str, str]]) -> bool:
    """Whether something Codex ran names `path` (or its file name), or got back lines of it
    (a search prints `path:line:text`)."""
    path = normal(path)
    name = posixpath.basename(path)
    for command, output in reads:
        if any(_names(token, path, name) for token in _TOKEN_EDGE.split(command)):
            return True
        if any(line.removeprefix("./").startswith(f"{path}:") for line in output.splitlines()):
            return True
    return False


def _names(token: str, path: str, name: str) -> bool:
    token = token.removeprefix("./")
    return bool(token) and (token in (path, name) or token.endswith((f"/{path}", f"/{name}")))
