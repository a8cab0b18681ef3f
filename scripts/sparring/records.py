"""The records sparring keeps, typed: a session (session.json), its turns, its engine record,
and the ledger's documents (Codex's answers, Claude's verdicts, the decisions).

These are the types of the JSON on disk, exactly as written today: a key that is not
required may be absent from a file an earlier version wrote, or until the step that adds
it has run, so readers use `.get` for it and writers assign it whole (never `setdefault`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, TypedDict, Union, cast

if TYPE_CHECKING:  # Python 3.10 has no typing.NotRequired; annotations are never evaluated
    from typing_extensions import NotRequired

# --- the ledger's documents ---------------------------------------------------------------

_Classified = TypedDict("_Classified", {"class": str}, total=False)  # `class` is a keyword


class _Point(TypedDict):
    id: str
    stance: str  # agree | refine | disagree | withdraw (one's own point)


class Cited(TypedDict):
    """One piece of evidence with the line it quotes (evidence.py); an older record, or a
    citation without a quote, holds a plain string instead."""

    cite: str
    quote: str | None


class PointEntry(_Point, _Classified, total=False):
    """One point of an answer or a verdict (`class`: Claude's classification, verdicts only)."""

    claim: str
    evidence: list[Cited | str]
    note: str | None
    would_change_my_mind: str | None
    sealed: str  # a verdict on round one: the sealed analysis's C-n that held this point


class Convergence(TypedDict):
    state: str  # continue | agree | stalemate
    reason: str


class Objection(TypedDict):
    sentence: int  # of the summary, as the confirmation numbers them (ledger.numbered)
    reason: str


class Answer(TypedDict):
    """Codex's structured answer of one round (schemas/codex-answer.schema.json). The keys
    marked NotRequired are absent from an answer an older sparring recorded."""

    position: str
    points: list[PointEntry]
    convergence: Convergence
    proposed_summary: str | None
    approve_summary: str | None
    summary_objections: NotRequired[list[Objection]]
    choice: NotRequired[str | None]
    confidence: NotRequired[int | None]  # private: never shown to the other side


class Verdict(TypedDict):
    """Claude's verdict on one round (schemas/claude-verdict.schema.json)."""

    points: list[PointEntry]
    convergence: Convergence
    position: NotRequired[str]
    message: NotRequired[str]
    proposed_summary: NotRequired[str | None]
    approve_summary: NotRequired[str | None]
    summary_objections: NotRequired[list[Objection]]
    choice: NotRequired[str]
    confidence: NotRequired[int]  # private: never shown to the other side


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
    # added with the rule that both sides may reject a claim: the points rejected by both,
    # and why a consensus is qualified (contested, unchallenged), when it is
    rejected_points: NotRequired[list[dict[str, Any]]]
    qualified: NotRequired[str | None]
    # a consensus a challenge turn tests first (kind challenge): what it is without one
    fallback: NotRequired[dict[str, Any]]


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
    # round -> the points whose concession without new evidence a verdict had sent back
    sent_back: NotRequired[dict[str, list[str]]]
    # why no challenge turn may test a consensus that came cheap (`start --no-challenge`)
    challenge_off: NotRequired[str | None]


# --- a session and its turns --------------------------------------------------------------
#
# Each record below is declared once: its class is the type (mypy), and store/shapes.py
# checks a file against the same class when it is read (its keys' types; the keys of its
# first class are the ones every such record has, its `total=False` class adds the rest). A
# key added later (or by one workflow) belongs in the latter: files written before lack it.
# `Annotated[..., "status"]` and `Annotated[..., "settings"]` ask shapes.py for the turn
# state machine's statuses and the settings table's shapes (config.TURN_SETTINGS).


class ProcessRecord(TypedDict):
    """A process as recorded (process.Identity): pid and start time."""

    pid: int
    started: float


class _TurnKeys(TypedDict):
    n: int
    round: int
    purpose: str  # turn/contract.py's PURPOSES
    status: Annotated[str, "status"]  # states.py
    created_at: float
    settings: Annotated[dict[str, Any], "settings"]  # config.TURN_SETTINGS, by name
    argv: list[str]


class TurnRecord(_TurnKeys, total=False):
    """One Codex turn (turns.new_turn writes every key but those marked as added later)."""

    started_at: float | None
    ended_at: float | None
    thread_id: str | None
    recovers: int | None
    schema: str | None
    template: dict[str, Any] | None
    answer: Any  # an Answer once validated, else None
    guard: Annotated[Any, "object or null"]  # a guard TurnGuard (guard/records.py), checked
    answer_file: str | None
    runner: ProcessRecord | None
    codex: ProcessRecord | None
    stop_requested: bool
    exit_code: int | None
    end_reason: str | None
    error: dict[str, Any] | None
    recoverable: bool
    usage_cumulative: dict[str, int] | None
    usage: dict[str, int] | None
    prompt_bytes: int
    prompt_sha256: str
    # the model Claude Code named at the start of the session that sent the turn (claude.py),
    # None when none was named; absent in a turn of an older sparring
    claude_model: str | None
    # added by launch.py (and the runner's re-ask): the sandbox and where it came from
    sandbox: dict[str, Any] | None
    go_on: str | None  # kept by older sparring; never read (a command is rebuilt, not read)
    summary_id: str | None  # the id of the summary Codex's answer proposes, when it does
    # the points its answer conceded without new evidence, sent back once (turns.py)
    reconsider: list[dict[str, Any]]
    # added when the turn ends: the model, effort and sandbox codex's rollout recorded for it
    # (only those it recorded; None when it recorded none)
    ran: dict[str, Any] | None
    # added when Codex's answer is delivered to its file (arch-debate)
    answer_sha256: str
    answer_file_kept: str
    answer_file_error: str


class _DebateKeys(TypedDict):
    dir: str
    question: str
    sent: dict[str, str]  # file name -> digest of what Codex read
    max_rounds: int


class DebateRecord(_DebateKeys, total=False):
    """arch-debate's `debate`: its folder, the question, what Codex was sent."""

    stand_ins: list[int]  # rounds Claude wrote for an unavailable Codex
    written: dict[str, str]  # runner-written round files -> digest


class _MessageKeys(TypedDict):
    round: int
    speaker: str  # claude | critic
    text: str


class Message(_MessageKeys, total=False):
    search_results: str


class _DiscussionKeys(TypedDict):
    effort: str
    model: str  # CODEX | NONE
    max_rounds: int
    topic: str | None
    messages: list[Message]


class DiscussionRecord(_DiscussionKeys, total=False):
    """deep-discussion's `discussion`."""

    topic_given: str | None
    opened_at: float
    framing: str  # once framed
    context: str


class _SessionKeys(TypedDict):
    id: str
    skill: str  # workflows.SKILLS
    root: str
    cwd: str
    created_at: float
    codex: dict[str, Any]
    turns: list[TurnRecord]


class SessionRecord(_SessionKeys, total=False):
    """session.json (store/shapes.py checks it as read; `format` and `kind` are
    statefile.py's)."""

    thread_id: str | None
    inbox: str | None
    budget_tokens: int | None
    budget_stop: dict[str, Any]  # why no turn may start: the budget is spent (budget.py)
    engine: Annotated[EngineRecord, "ledger"]  # every session since engine records began
    debate: DebateRecord  # arch-debate
    discussion: DiscussionRecord  # deep-discussion
    question: str
    degraded_notes: list[list[Any]]  # [round or None, why]
    reports: list[str]  # the reports this session wrote
    report_sha256: dict[str, str]  # each report file (and JSON beside) -> digest
    finalized_at: float | None
    foreign_writes: list[float]
    # the token naming its turns' output folder out of the project (store/locate.py); absent
    # in a session made before it, which keeps that output in its own folder
    outputs: str | None
    # what the user's earlier debate's Codex ran with (store/lastrun.py), kept at this one's
    # first turn that recorded its own; None when there was none
    codex_before: dict[str, Any] | None
    format: int
    kind: str


# A session as these records type it, or as the modules that do not use them yet pass it
# (`Session.load`'s dict): functions both kinds call take this; keys are checked against
# SessionRecord either way.
AnySession = Union[SessionRecord, "dict[str, Any]"]


def untyped(data: AnySession) -> dict[str, Any]:
    """`data` (the same object) for a function that does not use these records yet."""
    return cast("dict[str, Any]", data)
