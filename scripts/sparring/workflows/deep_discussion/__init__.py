"""deep-discussion: free-text rounds with markers, a transcript, a synthesis.

transcript.py reads the arguments, the transcript and its markers; status.py says where the
discussion stands; verbs.py holds its own verbs (`sparring discuss ...`); go_on.py how it
carries on after `guard accept`.
"""

from __future__ import annotations

from sparring.params import Verb, argument, option, options
from sparring.workflows.workflow import Workflow

# The help of its verbs (as a click docstring: --help and docs/runner.md show it).
_GROUP = """deep-discussion: up to 10 rounds on one Codex thread, then a synthesis and a report.

    \b
    sparring discuss new --args "high CODEX topic" # effort, model, then the topic
    sparring discuss frame SESSION --file F        # YAML: TOPIC, FRAMING, CONTEXT, CLAUDE_VIEW
    sparring discuss round SESSION --file F        # YAML: response, search_results
    sparring discuss status SESSION                # markers, search requests, what next
    sparring discuss synthesis SESSION             # Codex's synthesis turn
    sparring discuss report SESSION --file F       # YAML: the synthesis sections

    Markers count only as lines of their own, outside code blocks and quotes:
    [CONSENSUS_REACHED] (consensus needs both sides, in consecutive messages)
    and [SEARCH_REQUEST: "query"] (Claude searches and passes the results on).
    """
_NEW = """Parse /deep-discussion arguments and create the session.

    The effort (high, the default, or xhigh) and model (CODEX, the default, or
    NONE) words come first, in any order and case; the rest is the topic
    (`--` ends the words early). Prints session, effort, model, topic (null
    when none was given), max_rounds, inbox, next. Conflicting words, or a lone
    word naming a setting the skill does not offer (low, medium, a model
    slug), are invalid_arguments, listing the valid forms.
    """
_FRAME = """Record the problem framing and Claude's opening view; start Codex's round 1.

    YAML keys: TOPIC, FRAMING, CLAUDE_VIEW (required), CONTEXT. With model NONE no
    Codex runs. Returns like `start`, plus `discussion` (as `discuss status`).
    """
_ROUND = """Hand in Claude's response and start Codex's next round on the same thread.

    YAML keys: response (required), search_results (for Codex's search requests).
    Model NONE: critic (Claude's labelled counter-argument, standing in for Codex)
    and response. If Codex's last round failed, the response asks it again. When
    both sides have now marked [CONSENSUS_REACHED], no round starts.
    """
_STATUS = """Rounds, the last message, consensus per side, search requests, what to do next."""
_SYNTHESIS = """Ask Codex for its synthesis (agreed points, trade-offs, recommendation, open
    questions, implementation hints) on the same thread. Then `wait`."""
_REPORT = """Write the report: Timestamp, Topic, Model, Effort, Rounds, Consensus, the
    synthesis, Codex's synthesis, Claude's final observations, how the agreement was
    reached (from the messages' point lines), the transcript, tokens.

    YAML keys: agreed_points, key_trade_offs, recommended_approach, open_questions,
    implementation_hints, final_observations (markdown text each).
    """
_SESSION = argument("session", "session", metavar="SESSION")
_ACCEPT = option("--accept-changes", "Go on although the guard found files changed during the "
                 "last turn (only after the user has seen them).", "flag")

WORKFLOW = Workflow(
    "deep-discussion", __name__, answer_schema=None, claude_schemas=(), barrier=False,
    max_rounds=10, effort="high",
    report_path=".kkachi/{branch}/completed/deep-discussion-{epoch}.md",
    templates=("deep-discussion/first", "deep-discussion/round", "deep-discussion/synthesis",
               "deep-discussion/report"),
    report_templates=("deep-discussion/report",),
    parts={"go_on": "go_on:go_on", "status": "status:after_turn",
           "next_step": "status:next_step"},
    records_hint="`sparring discuss report {session}`",
    status_key="discussion", status_replaces_review=True, command="discuss",
    command_help=_GROUP, verbs=(
        Verb("new", "verbs:new", _NEW, (
            option("--args", "The skill's arguments as typed (`-` reads them from stdin).",
                   "text", name="arguments", default=""),
            option("--file", "A file holding the skill's arguments as typed (instead of "
                   "--args)."),
            options("new-budget"))),
        Verb("frame", "verbs:frame", _FRAME, (
            _SESSION, option("--file", "The framing YAML (default: stdin)."),
            options("turn-limits"))),
        Verb("round", "verbs:round_", _ROUND, (
            _SESSION, option("--file", "The round YAML (default: stdin)."), _ACCEPT,
            options("turn-limits"))),
        Verb("status", "status:verb", _STATUS, (_SESSION,)),
        Verb("synthesis", "verbs:synthesis", _SYNTHESIS, (_SESSION, options("turn-limits"))),
        Verb("report", "verbs:report", _REPORT, (
            _SESSION, option("--file", "Claude's synthesis YAML (default: stdin)."),
            option("--out", "Where to write it, inside the project (default: "
                   ".kkachi/{branch}/completed/deep-discussion-{epoch}.md, or "
                   "deep-discussion.report_path in sparring.yaml)."))),
    ))
