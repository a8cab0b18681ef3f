"""A citation checked for what it says (evidence.py): its quote against the file, within two
lines of the number cited; Codex's citations against what it opened; URLs and commands
against the round's record."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparring import evidence
from sparring.evidence import Checker, Record, opened, quote_holds

LINES = ["def load(path):", "    with open(path) as f:", "        data = f.read()",
         "    return parse(data)", "", "TTL = 30  # seconds"]


@pytest.mark.parametrize(("start", "end", "quote", "holds"), [
    (3, 3, "data = f.read()", True),
    (3, 3, "data   =  f.read()", True),  # spacing does not count
    (1, 1, "data = f.read()", True),  # two lines below the one cited
    (6, 6, "data = f.read()", False),  # three above: too far
    (2, 4, "with open(path) as f: data = f.read()", True),  # across lines
    (2, 2, "with open(path) … return parse(data)", True),  # an ellipsis skips
    (2, 2, "return parse(data) … with open(path)", False),  # in order only
    (6, 6, "TTL = 60", False),
])
def test_a_quote_stands_near_its_line(start: int, end: int, quote: str, holds: bool) -> None:
    assert quote_holds(LINES, start, end, quote) is holds


def test_each_kind_of_citation_gets_its_mark(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "io.py").write_text("\n".join(LINES) + "\n")
    reads = {1: [("/bin/bash -lc 'sed -n 1,10p src/io.py'", "")], 2: []}
    activity = {1: ["/bin/bash -lc 'pytest tests/test_io.py -q'",
                    '{"query": "sqlite wal", "action": {"url": "https://sqlite.org/wal.html"}}']}
    check = Checker(tmp_path, Record(activity, reads))

    def mark(item: object, side: str = "codex", n: int = 1) -> tuple[str, bool]:
        found = check.mark(item, side, n)
        return found.mark, found.holds

    quoted = {"cite": "src/io.py:3", "quote": "data = f.read()"}
    assert mark(quoted) == ("verified", True)
    assert mark(quoted, n=2) == ("unread", False)  # nothing opened it by round 2's record
    assert mark(quoted, side="claude", n=2) == ("verified", True)  # Claude's: no read check
    assert mark({"cite": "src/io.py:3", "quote": "data = f.write()"}) == ("not_matching", False)
    assert mark({"cite": "src/io.py:3", "quote": "f"}) == ("unquoted", False)  # too short
    assert mark("src/io.py:3") == ("unquoted", False)
    assert mark("src/io.py:70") == ("not_matching", False)
    assert mark("pytest tests/test_io.py") == ("unchecked", True)  # Codex ran it that round
    assert mark("pytest tests/test_io.py", n=2) == ("unchecked", False)
    assert mark("https://sqlite.org/wal.html") == ("unchecked", True)  # its search fetched it
    assert mark("https://example.org/other") == ("unchecked", False)


@pytest.mark.parametrize(("command", "output", "read"), [
    ("/bin/bash -lc 'cat src/io.py'", "", True),
    ("/bin/bash -lc 'nl -ba ./src/io.py | sed -n 1,9p'", "", True),
    ("/bin/bash -lc 'cd src && cat io.py'", "", True),  # its file name
    ("/bin/bash -lc 'rg -n TTL'", "src/io.py:6:TTL = 30  # seconds\n", True),  # its lines
    ("/bin/bash -lc 'ls src'", "io.py\n", False),  # listed, not read
    ("/bin/bash -lc 'cat src/io.pyc'", "", False),
])
def test_what_counts_as_opening_a_file(command: str, output: str, read: bool) -> None:
    assert opened("src/io.py", [(command, output)]) is read


def test_a_citation_is_shown_with_its_quote() -> None:
    assert evidence.shown({"cite": "a.py:3", "quote": "x = 1"}) == 'a.py:3 "x = 1"'
    assert evidence.shown("a.py:3") == "a.py:3"
    assert evidence.citation({"cite": "a.py:3", "quote": None}) == ("a.py:3", None)
