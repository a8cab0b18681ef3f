"""The records sparring keeps, typed: a session (session.json), its turns, its engine record,
and the ledger's documents (Codex's answers, Claude's verdicts, the decisions).

These are the types of the JSON on disk, exactly as written today (session.py's FORMAT and
shapes.py's checks are unchanged): a key marked NotRequired may be absent from a file an
earlier version wrote, or until the step that adds it has run, so readers use `.get` for
it and writers assign it whole (never `setdefault`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, Union, cast

if TYPE_CHECKING:  # Python 3.10 has no typing.NotRequired; annotations are never evaluated
    from typing_extensions import NotRequired

# --- the ledger's documents ---------------------------------------------------------------

_Classified = TypedDict("_Classified", {"class": str}, total=False)  # `class` is a keyword


class _Point(TypedDict):
    id: str
    stance: str  # agree | disagree | refine


class PointEntry(_Point, _Classified, total=False):
    """One point of an answer or a verdict (`class`: Claude's classification, verdicts only)."""

    claim: str
    evidence: list[str]
    note: str | None
    sealed: str  # a verdict on round one: the sealed analysis's C-n that held this point


class Convergence(TypedDict):
    state: str  # continue | agree | stalemate
    reason: str


class Answer(TypedDict):
    """Codex's structured answer of one round (schemas/codex-answer.schema.json)."""

    position: str
    points: list[PointEntry]
    convergence: Convergence
    proposed_summary: str | None
    approve_summary: str | None


class Verdict(TypedDict):
    """Claude's verdict on one round (schemas/claude-verdict.schema.json)."""

    points: list[PointEntry]
    convergence: Convergence
    position: NotRequired[str]
    message: NotRequired[str]
    proposed_summary: NotRequired[str | None]
    approve_summary: NotRequired[str | None]


class SummaryRow(TypedDict):
    id: str
    by: str
    text: str


class DecisionRecord(TypedDict):
    """The loop's decision for one judged round (engine.decision_dict)."""

    round: int
    decision: str  # consensus | stalemate | continue
    kind: str  # round | confirmation
    reasons: list[str]
    open_points: list[dict[str, Any]]
    agreed_points: list[dict[str, Any]]
    summary: SummaryRow | None
    concessions_without_evidence: list[dict[str, Any]]


class Judged(TypedDict):
    verdict: Verdict
    decision: DecisionRecord


class Rejudged(TypedDict):
    """A round whose verdict Claude replaced (`verdict --rejudge`): both versions."""

    round: int
    at: float
    before: Judged
    after: Judged


class Seal(TypedDict):
    sha256: str
    sealed_at: float
    bytes: int
    file: str


class EngineRecord(TypedDict):
    """A session's `engine`: its workflow's answer schema and seal barrier (workflows/registry.py),
    the seal, Claude's verdicts and the decisions, by round number as text."""

    schema: str | None
    barrier: bool
    seal: Seal | None
    revealed_at: float | None
    verdicts: dict[str, Verdict]
    decisions: dict[str, DecisionRecord]
    rejudged: NotRequired[list[Rejudged]]  # added by the first `verdict --rejudge`
    # added by `seal`: the runner's check of Codex's round one (turn/independence.py)
    independence: NotRequired[dict[str, Any] | None]


# --- a session and its turns --------------------------------------------------------------


class TurnRecord(TypedDict, total=False):
    """One Codex turn (turns.new_turn writes every key but those marked as added later)."""

    n: int
    round: int
    purpose: str  # turn/contract.py's PURPOSES
    status: str  # states.py
    created_at: float
    started_at: float | None
    ended_at: float | None
    settings: dict[str, Any]
    argv: list[str]
    thread_id: str | None
    recovers: int | None
    schema: str | None
    template: dict[str, Any] | None
    answer: Any  # an Answer once validated, else None
    guard: Any  # a guard.TurnGuard (guard/records.py) once checked, else None
    answer_file: str | None
    runner: dict[str, Any] | None
    codex: dict[str, Any] | None
    stop_requested: bool
    exit_code: int | None
    end_reason: str | None
    error: dict[str, Any] | None
    recoverable: bool
    usage_cumulative: dict[str, int] | None
    usage: dict[str, int] | None
    prompt_bytes: int
    prompt_sha256: str
    # added by launch.py (and the runner's re-ask): the sandbox and where it came from
    sandbox: dict[str, Any] | None
    go_on: str | None  # kept by older sparring; never read (a command is rebuilt, not read)
    summary_id: str  # the id of the summary Codex's answer proposes (record.py), when it does
    # added when Codex's answer is delivered to its file (arch-debate)
    answer_sha256: str
    answer_file_kept: str
    answer_file_error: str


class DebateRecord(TypedDict):
    """arch-debate's `debate`: its folder, the question, what Codex was sent."""

    dir: str
    question: str
    sent: dict[str, str]  # file name -> digest of what Codex read
    max_rounds: int
    stand_ins: NotRequired[list[int]]  # rounds Claude wrote for an unavailable Codex
    written: NotRequired[dict[str, str]]  # runner-written round files -> digest


class Message(TypedDict):
    round: int
    speaker: str  # claude | critic
    text: str
    search_results: NotRequired[str]


class DiscussionRecord(TypedDict):
    """deep-discussion's `discussion`."""

    effort: str
    model: str  # CODEX | NONE
    max_rounds: int
    topic: str | None
    topic_given: NotRequired[str | None]
    messages: list[Message]
    opened_at: NotRequired[float]
    framing: NotRequired[str]  # once framed
    context: NotRequired[str]


class SessionRecord(TypedDict):
    """session.json (shapes.py checks it as read; `format` and `kind` are state.py's)."""

    id: str
    skill: str  # workflows.SKILLS
    root: str
    cwd: str
    created_at: float
    thread_id: str | None
    codex: dict[str, Any]
    turns: list[TurnRecord]
    inbox: NotRequired[str | None]
    budget_tokens: NotRequired[int | None]
    engine: NotRequired[EngineRecord]  # every session since engine records began
    debate: NotRequired[DebateRecord]  # arch-debate
    discussion: NotRequired[DiscussionRecord]  # deep-discussion
    question: NotRequired[str]
    degraded_notes: NotRequired[list[list[Any]]]  # [round or None, why]
    reports: NotRequired[list[str]]  # the reports this session wrote
    report_sha256: NotRequired[dict[str, str]]  # each report file (and JSON beside) -> digest
    finalized_at: NotRequired[float | None]
    foreign_writes: NotRequired[list[float]]
    # the token naming its turns' output folder out of the project (store/locate.py); absent
    # in a session made before it, which keeps that output in its own folder
    outputs: NotRequired[str | None]
    format: NotRequired[int]
    kind: NotRequired[str]


# A session as these records type it, or as the modules that do not use them yet pass it
# (`Session.load`'s dict): functions both kinds call take this; keys are checked against
# SessionRecord either way.
AnySession = Union[SessionRecord, "dict[str, Any]"]


def untyped(data: AnySession) -> dict[str, Any]:
    """`data` (the same object) for a function that does not use these records yet."""
    return cast("dict[str, Any]", data)
