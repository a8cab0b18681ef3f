"""arch-debate: the state of a debate folder, read from its round files.

The folder is the decision record (`DEBATE-PROTOCOL.md`, `round-0-claude.md`,
then `round-N-codex.md` / `round-N-claude.md`, and `round-N-agreed.md` or
`DECISION-NEEDED.md`). Everything here is computed from those files plus the
hashes the runner recorded when it sent a file to Codex, so the state cannot
drift from what the team will commit.

Agreement: a side agrees only by opening a round with `AGREED:` on its first
line; the other side's next round must open with `AGREED:` too (it confirms
the brief). A stand-in round (Claude playing Codex) opens with a NOTE line,
so it can never agree.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
from pathlib import Path
from typing import Any

from sparring import paths
from sparring.errors import SparringError
from sparring.records import AnySession
from sparring.workflows import markers

PROTOCOL = "DEBATE-PROTOCOL.md"
DECISION_NEEDED = "DECISION-NEEDED.md"
STAND_IN_NOTE = "> NOTE: written by Claude playing devil's advocate (Codex was unavailable)"
STUCK = "stuck on values, not facts — decide"
_SIDES = ("claude", "codex", "agreed")
NAMES = {"claude": "Claude", "codex": "Codex"}


# Plain classes with slots, not dataclasses or named tuples: `debate status` and an
# arch-debate's `wait` read the folder every round, and those would bring inspect, ast or
# typing along.
class Round:
    __slots__ = ("authentic", "n", "path", "side", "text")

    def __init__(self, n: int, side: str, path: str, text: str,
                 authentic: bool = True) -> None:
        self.n, self.side, self.path, self.text = n, side, path, text
        self.authentic = authentic  # a Codex round the runner wrote and nobody edited since

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def words(self) -> int:
        return len(self.text.split())

    @property
    def agrees(self) -> bool:
        # A Codex round only speaks for Codex when the runner wrote it, unchanged.
        return self.authentic and markers.opens_with_agreed(self.text)


class DebateState:
    __slots__ = ("agreed", "misplaced", "proposal", "rounds")

    def __init__(self, rounds: list[Round], misplaced: list[str],
                 agreed: dict[str, Any] | None, proposal: Round | None) -> None:
        self.rounds, self.misplaced = rounds, misplaced
        self.agreed = agreed  # the two rounds that agree, once agreement is confirmed
        self.proposal = proposal  # else the latest round, when it proposes agreement

    @property
    def last(self) -> Round | None:
        return self.rounds[-1] if self.rounds else None

    @property
    def codex_rounds(self) -> int:
        return sum(1 for r in self.rounds if r.side == "codex")


def sequence() -> Any:
    """The order rounds are written in: claude 0, codex 1, claude 1, codex 2, ..."""
    yield 0, "claude"
    n = 1
    while True:
        yield n, "codex"
        yield n, "claude"
        n += 1


def read(directory: str | Path, root: str | Path,
         written: dict[str, str] | None = None) -> DebateState:
    """The rounds in order; `written` maps each Codex round file the runner wrote (from
    Codex's answer, or a labelled stand-in) to the digest it wrote. Each round file is read
    through paths.py: a link, a FIFO, a huge file or one that is not UTF-8,
    committed or planted in the folder, is refused and named, never followed or rewritten."""
    present = {}
    for name in os.listdir(directory) if os.path.isdir(directory) else []:
        key = _round_file(name)
        if key is not None and key[1] != "agreed":
            present[key] = os.path.join(directory, name)
    rounds = []
    for key in sequence():
        if key not in present:
            break
        path = present.pop(key)
        text = read_file(path, root)
        recorded = (written or {}).get(os.path.basename(path))
        authentic = key[1] == "claude" or recorded == digest(text)
        rounds.append(Round(key[0], key[1], path, text, authentic))
    return DebateState(rounds, sorted(os.path.basename(p) for p in present.values()),
                       *_agreement(rounds))


def _round_file(name: str) -> tuple[int, str] | None:
    """(n, side) of a round file's name, as `^round-(\\d+)-(claude|codex|agreed)\\.md$`
    matches it (any decimal digits; `$` before one final line feed too), without re."""
    body = name[:-1] if name.endswith("\n") else name
    if not (body.startswith("round-") and body.endswith(".md")):
        return None
    number, _, side = body[len("round-"):-len(".md")].partition("-")
    if not (number and number.isdecimal() and side in _SIDES):
        return None
    return int(number), side


def locate(directory: Path, root: Path, create: bool = False) -> Path:
    """`where`, as a Path."""
    return Path(where(directory, root, create))


def where(directory: str | Path, root: str | Path, create: bool = False) -> str:
    """The debate folder `directory` names, inside the project `root` and reached without a
    link (paths.folder); made with `create`, else it may be missing (not made yet, or moved
    away: a debate with no round files). Its path goes into the commands the runner prints,
    so it may hold no backtick and no control character (a command in a hint is quoted in
    backticks, and a line break would end it)."""
    unsafe = sorted({c for c in str(directory) if c == "`" or ord(c) < 32 or ord(c) == 127})
    if unsafe:
        raise SparringError("usage_error", f"the debate folder {str(directory)!r} holds "
                            f"{', '.join(repr(c) for c in unsafe)}, which no command the "
                            "runner prints could carry safely",
                            "choose a folder name without backticks or control characters")
    try:
        return paths.folder(directory, root, "the debate folder", create).text
    except SparringError as exc:
        if create or exc.code != "file_not_found":
            raise
    return paths.place(directory, root, "the debate folder").text


def read_file(path: str | Path, root: str | Path) -> str:
    """A file of the debate folder, as text (paths.read_text names what is wrong with it)."""
    name = os.path.basename(path)
    return paths.read_text(path, root, "a file of the debate folder",
                           hint=f"{name} in the debate folder must be a plain UTF-8 text "
                           "file: fix or remove it, then run the command again")


def _agreement(rounds: list[Round]) -> tuple[dict[str, Any] | None, Round | None]:
    """(agreed, proposal) of DebateState."""
    for earlier, later in itertools.pairwise(rounds):
        if earlier.agrees and later.agrees:
            return {"proposed": earlier, "confirmed": later}, None
    last = rounds[-1] if rounds else None
    if last is not None and last.agrees and last.n > 0:
        return None, last
    return None, None


def next_step(state: DebateState, max_rounds: int) -> str:
    """`agreed`, `stuck`, `codex` (run the next Codex round) or `claude` (write a round)."""
    if state.agreed:
        return "agreed"
    last = state.last
    if last is None:
        return "claude"
    pairs = min(state.codex_rounds, sum(1 for r in state.rounds if r.side == "claude" and r.n))
    if pairs >= max_rounds and state.proposal is None:
        return "stuck"
    if state.proposal is not None and state.codex_rounds > max_rounds:
        return "stuck"  # the one confirmation round over the cap went by unconfirmed
    return "codex" if last.side == "claude" else "claude"


def rule_breaks(state: DebateState, sent: dict[str, str], word_limit: int) -> list[str]:
    found = [f"{name} is out of order: an earlier round is missing" for name in state.misplaced]
    for item in state.rounds:
        if item.words > word_limit:
            found.append(f"{item.name} has {item.words} words (limit {word_limit})")
        for line in markers.stray_mentions(item.text, markers.AGREED):
            found.append(f"{item.name} line {line}: AGREED: only counts as a round's first "
                         "line; this one does not count")
        recorded = sent.get(item.name)
        if recorded and recorded != digest(item.text):
            found.append(f"{item.name} was changed after Codex read it")
        if not item.authentic:
            found.append(f"{item.name} is not what the runner wrote from Codex's answer (written "
                         "or edited by someone else): it does not count as Codex's round")
    return found


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lead(text: str, limit: int = 280) -> str:
    """A round's first paragraph of prose, for the side-by-side table."""
    for block in re.split(r"\n\s*\n", text.strip()):
        block = " ".join(line.strip() for line in block.splitlines())
        if block and not block.startswith(("#", ">", "```")):
            return block if len(block) <= limit else block[: limit - 1] + "…"
    return ""


def positions(state: DebateState) -> list[dict[str, Any]]:
    """Side by side, round by round: the lead of each side's round."""
    by_round: dict[int, dict[str, Any]] = {}
    for item in state.rounds:
        row = by_round.setdefault(item.n, {"round": item.n, "claude": "", "codex": ""})
        row[item.side] = lead(item.text)
    return [by_round[n] for n in sorted(by_round)]


def written_by_runner(data: AnySession) -> dict[str, str]:
    """Codex round files the runner wrote: delivered answers and labelled stand-ins."""
    found = dict(data["debate"].get("written", {}))
    for turn in data["turns"]:
        answer_file, digest = turn.get("answer_file"), turn.get("answer_sha256")
        if answer_file and digest and not turn.get("answer_file_kept"):
            found[os.path.basename(answer_file.rstrip(os.sep))] = digest  # its name
    return found
