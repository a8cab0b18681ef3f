"""deep-discussion: arguments, the transcript, and markers read by the runner.

The transcript alternates Claude and the other side (Codex, or Claude's own
labelled critic when the model is NONE): Claude opens round 1, the other side
answers it, Claude answers that in round 2, and so on. Consensus needs two
consecutive messages — one from each side — each carrying `[CONSENSUS_REACHED]`
as a line of its own; one side saying it is only a proposal.
"""

from __future__ import annotations

import re
from typing import Any

from sparring.errors import SparringError
from sparring.records import AnySession
from sparring.store.sessions import Session
from sparring.turn import view
from sparring.turn.view import ANSWER_SHOWN
from sparring.workflows import markers
from sparring.workflows.deep_discussion import WORKFLOW

Arguments = tuple[str, str, str | None]  # effort, model, topic

EFFORTS = ("high", "xhigh")
MODELS = ("CODEX", "NONE")
VALID_FORMS = ("/deep-discussion [high|xhigh] [CODEX|NONE] [topic…]: the effort and model "
               "words first, in any order and case (defaults high and CODEX), then the topic "
               "(without one, Claude takes it from the conversation; put `--` before a topic "
               "that starts with one of those words, or with a word like low, medium or "
               "gpt-5). For example: `/deep-discussion`, "
               "`/deep-discussion xhigh`, `/deep-discussion NONE`, `/deep-discussion codex "
               "XHIGH Should the cache be write-through?`, `/deep-discussion -- High "
               "availability for the queue?`")
# Words that name a setting this skill does not offer (an effort Codex knows, a model's name),
# in any case: leading the arguments, they are a mistake, never the first words of the topic.
_NOT_OFFERED = ("low", "medium", "minimal", "max", "maximum", "x-high", "extra-high")
# Compiled where used (re caches them): only a new discussion's arguments are parsed.
_MODEL_NAME = r"(gpt|o\d|codex-|claude|gemini)[\w.-]*"
_WORD = r"(\S+)\s*(.*)"
SPEAKERS = {"claude": "Claude", "codex": "Codex",
            "critic": "Claude as critic (standing in for Codex)"}


def parse_arguments(text: str) -> Arguments:
    """Effort and model words first, the rest the topic; conflicting words are an error."""
    effort = model = None
    rest = text.strip()
    while match := re.fullmatch(_WORD, rest, re.S):
        token, after = match.groups()
        if token == "--":
            rest = after
            break
        if token.lower() in EFFORTS:
            effort = _once("effort", effort, token.lower())
        elif token.upper() in MODELS:
            model = _once("model", model, token.upper())
        elif _not_offered(token):
            raise _invalid(f"{token!r} is neither an effort (high, xhigh) nor a model (CODEX, "
                           "NONE); a topic that starts with it takes `--` before it")
        else:
            break
        rest = after
    return effort or WORKFLOW.effort, model or "CODEX", _topic(rest.strip())


def _topic(text: str) -> str | None:
    if not text:
        return None
    if text.startswith("-"):
        raise _invalid(f"{text.split()[0]!r} looks like an option; the skill takes words "
                       "(high, xhigh, CODEX, NONE), then the topic")
    return text


def _not_offered(token: str) -> bool:
    return token.lower() in _NOT_OFFERED or bool(re.fullmatch(_MODEL_NAME, token, re.I))


def _once(what: str, current: str | None, value: str) -> str:
    if current is not None and current != value:
        raise _invalid(f"two {what}s given: {current} and {value}")
    return value


def _invalid(why: str) -> SparringError:
    return SparringError("invalid_arguments", f"invalid /deep-discussion arguments: {why}",
                         f"valid forms: {VALID_FORMS}")


# A plain class with slots, not a dataclass or a named tuple: `discuss status` and a
# discussion's `wait` read the transcript every round, and those would bring inspect, ast or
# typing along.
class Message:
    __slots__ = ("round", "search_results", "speaker", "text")

    def __init__(self, round: int, speaker: str, text: str, search_results: str = "") -> None:
        self.round, self.text = round, text
        self.speaker = speaker  # claude | codex | critic
        self.search_results = search_results  # what Claude found for the other side (never
        # read for markers)

    @property
    def consensus(self) -> bool:
        return markers.has_consensus(self.text)

    def to_dict(self) -> dict[str, Any]:
        """The message as printed: a text longer than poll and wait print of an answer is
        cut there (`cut`: how long it is; the turn's events hold it whole)."""
        shown = self.text[:ANSWER_SHOWN]
        cut = {"cut": {"shown_chars": ANSWER_SHOWN, "total_chars": len(self.text)}} if len(
            self.text) > ANSWER_SHOWN else {}
        return {"round": self.round, "speaker": self.speaker, "label": SPEAKERS[self.speaker],
                "text": shown, **cut, "search_results": self.search_results,
                "consensus": self.consensus,
                "search_requests": markers.search_requests(self.text),
                "ignored_markers": self.ignored()}

    def ignored(self) -> list[int]:
        """Lines that mention a marker without counting (quoted, in code, in a sentence)."""
        lines = markers.stray_mentions(self.text, markers.CONSENSUS)
        lines += [n for n, line in enumerate(self.text.splitlines(), start=1)
                  if "[SEARCH_REQUEST:" in line and n not in self._counted_searches()]
        return sorted(set(lines))

    def _counted_searches(self) -> set[int]:
        return {n for n, line in markers.plain_lines(self.text)
                if markers.search_requests(line)}


def transcript(session: Session, data: AnySession) -> list[Message]:
    """Claude's messages and the other side's, in the order they were written."""
    found = [Message(m["round"], m["speaker"], m["text"], m.get("search_results", ""))
             for m in data["discussion"]["messages"]]
    for turn in data["turns"]:
        if turn["status"] == "completed" and turn["purpose"] != "synthesis":
            found.append(Message(turn["round"], "codex", view.final_text(session, turn) or ""))
    order = {"claude": 0, "codex": 1, "critic": 1}
    return sorted(found, key=lambda m: (m.round, order[m.speaker]))


def consensus(messages: list[Message]) -> bool:
    """The last two messages, one from each side, both carry the marker."""
    if len(messages) < 2:
        return False
    last, before = messages[-1], messages[-2]
    return last.speaker != before.speaker and last.consensus and before.consensus


def codex_synthesis(session: Session, data: AnySession) -> str | None:
    for turn in reversed(data["turns"]):
        if turn["purpose"] == "synthesis" and turn["status"] == "completed":
            return view.final_text(session, turn)
    return None
