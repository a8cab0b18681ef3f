"""arch-debate: a folder of round files, read and judged by the runner.

folder.py reads a debate folder's state, status.py says where the debate stands (and writes
its outcome files), verbs.py holds its own verbs (`sparring debate new|round|status`),
go_on.py how it carries on after `guard accept`.
"""

from __future__ import annotations

from sparring.params import Verb, argument, option, options
from sparring.workflows.workflow import Workflow

# The help of its verbs (as a click docstring: --help and docs/runner.md show it).
_GROUP = """arch-debate: a folder of round files that is the decision record.

    \b
    sparring debate new DIR --file PROTOCOL.yaml   # DEBATE-PROTOCOL.md
    sparring debate round DIR --file ROUND.md      # Claude's round, then Codex answers it
    sparring debate status DIR                     # whose turn, agreed or not, what next

    Codex keeps one thread across rounds and runs read-only; the runner writes
    round-N-codex.md from its answer, and round-N-claude.md from the file Claude
    hands in. A side agrees only by opening a round with AGREED: on its first
    line; the other side must confirm in its next round.
    """
_NEW = """Scaffold DIR/DEBATE-PROTOCOL.md with the question, the rules and the protocol's
    slots; never overwrites.

    Give the question as QUESTION, or the whole protocol with --file. Prints dir,
    session, files, inbox, next.
    """
_ROUND = """Hand in Claude's round (--file), then run Codex's next round: it answers the
    newest round-N-claude.md.

    Round one starts the Codex thread; later rounds resume it, with only the new
    round in the prompt. Returns like `start` (status running) with `started`;
    then `sparring wait SESSION`, which prints `debate` (as `debate status DIR`)
    once Codex's round is in. When Claude's round settles the debate (it confirms
    an AGREED:), nothing starts: `started` is false and `debate` says where the
    debate stands (`debate.step`: agreed).
    """
_STATUS = """Whose turn, how many rounds, agreed or not, rule breaks, and what to do next.

    Writes round-N-agreed.md once an AGREED: round is confirmed by the other side,
    and DECISION-NEEDED.md (positions side by side) when the round cap passes
    without agreement, each with how the agreement was reached (from the rounds'
    point lines) and its facts as JSON beside it. Prints step
    (claude|codex|agreed|stuck), agreed, proposal, outcome (once agreed: agreed,
    or contested when it rests on a concession made without new evidence, or
    unchallenged when no point was ever disputed; once stuck: stalemate) with
    outcome_reasons, positions, rule_breaks, degraded, next.
    """
_DIR = argument("directory", "dir", metavar="DIR")

WORKFLOW = Workflow(
    "arch-debate", __name__, answer_schema=None, claude_schemas=(), barrier=False,
    max_rounds=6, effort="high", report_path=None,
    templates=("arch-debate/protocol", "arch-debate/codex-round", "arch-debate/agreed",
               "arch-debate/decision-needed"),
    report_templates=("arch-debate/agreed", "arch-debate/decision-needed"),
    parts={"go_on": "go_on:go_on", "status": "status:after_turn",
           "next_step": "status:next_step"},
    records_hint="`sparring debate status DIR` writes its records",
    status_key="debate", command="debate", command_help=_GROUP, verbs=(
        Verb("new", "verbs:new", _NEW, (
            _DIR, argument("question", metavar="[QUESTION]", required=False),
            option("--file", "The protocol as YAML: question (required), codebase_context, "
                   "options, open_questions (`-` reads stdin)."),
            options("new-budget"))),
        Verb("round", "verbs:round_", _ROUND, (
            _DIR,
            option("--file", "Claude's next round, written to round-N-claude.md before "
                   "Codex answers it (`-` reads stdin). Without it, that file must already "
                   "exist."),
            option("--stand-in", "Codex is unavailable: FILE is its round, written by Claude "
                   "as devil's advocate; it is labelled and the debate is marked DEGRADED.",
                   metavar="FILE"),
            options("codex-turn"))),
        Verb("status", "status:verb", _STATUS, (_DIR,)),
    ))
