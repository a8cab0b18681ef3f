"""The command line of the two workflows with verbs of their own: `sparring debate ...`
(arch-debate) and `sparring discuss ...` (deep-discussion). cli/main.py adds both groups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from sparring.cli.options import (
    BUDGET_OPTION,
    LIMIT_OPTIONS,
    NEW_BUDGET_OPTION,
    SESSION_ARG,
    apply_options,
    file_input,
    run_verb,
)
from sparring.config import EFFORTS, SANDBOXES
from sparring.errors import SparringError

# The codex settings a debate round may set (the thread keeps its model).
debate_turn_options = apply_options([
    click.option("--effort", type=click.Choice(EFFORTS), envvar="SPARRING_EFFORT",
                 help="Codex reasoning effort for this round."),
    click.option("--model", envvar="SPARRING_MODEL",
                 help="Codex model (round one only; later rounds keep the thread's)."),
    click.option("--sandbox", type=click.Choice(SANDBOXES),
                 help="Narrow Codex's sandbox. Default: what the user allows "
                 "(SPARRING_SANDBOX in their shell, else their config file; else read-only). "
                 "Never wider."),
    *LIMIT_OPTIONS,
    BUDGET_OPTION,
])


@click.group("debate")
def debate_group() -> None:
    """arch-debate: a folder of round files that is the decision record.

    \b
    sparring debate new DIR --file PROTOCOL.yaml   # DEBATE-PROTOCOL.md
    sparring debate round DIR --file ROUND.md      # Claude's round, then Codex answers it
    sparring debate status DIR                     # whose turn, agreed or not, what next

    Codex keeps one thread across rounds and runs read-only; the runner writes
    round-N-codex.md from its answer, and round-N-claude.md from the file Claude
    hands in. A side agrees only by opening a round with AGREED: on its first
    line; the other side must confirm in its next round.
    """


@debate_group.command("new")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.argument("question", metavar="[QUESTION]", required=False)
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="The protocol as YAML: question (required), codebase_context, options, "
              "open_questions (`-` reads stdin).")
@NEW_BUDGET_OPTION
def debate_new(directory: Path, question: str | None, file: Path | None,
               budget_tokens: int | None) -> int:
    """Scaffold DIR/DEBATE-PROTOCOL.md with the question, the rules and the protocol's
    slots; never overwrites.

    Give the question as QUESTION, or the whole protocol with --file. Prints dir,
    session, files, inbox, next.
    """
    from sparring.commands import debate as verb

    def call() -> dict[str, Any]:
        if (question is None) == (file is None):
            raise SparringError("usage_error", "give QUESTION or --file, one of them",
                                "sparring debate new DIR --file PROTOCOL.yaml")
        if file is not None:
            text, slots = verb.protocol_from(file_input(file))
            return verb.new(directory, text, Path.cwd(), slots, budget_tokens)
        assert question is not None
        return verb.new(directory, question.strip(), Path.cwd(), None, budget_tokens)

    return run_verb("debate new", call)


@debate_group.command("round")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="Claude's next round, written to round-N-claude.md before Codex answers it "
              "(`-` reads stdin). Without it, that file must already exist.")
@click.option("--stand-in", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Codex is unavailable: FILE is its round, written by Claude as devil's "
              "advocate; it is labelled and the debate is marked DEGRADED.")
@debate_turn_options
def debate_round(directory: Path, file: Path | None, stand_in: Path | None,
                 **options: Any) -> int:
    """Hand in Claude's round (--file), then run Codex's next round: it answers the
    newest round-N-claude.md.

    Round one starts the Codex thread; later rounds resume it, with only the new
    round in the prompt. Returns like `start` (status running) with `started`;
    then `sparring wait SESSION`, which prints `debate` (as `debate status DIR`)
    once Codex's round is in. When Claude's round settles the debate (it confirms
    an AGREED:), nothing starts: `started` is false and `debate` says where the
    debate stands (`debate.step`: agreed).
    """
    from sparring.commands import debate as verb

    return run_verb("debate round", lambda: verb.round_(
        directory, Path.cwd(), options, file_input(file) if file is not None else None,
        file_input(stand_in) if stand_in is not None else None))


@debate_group.command("status")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
def debate_status(directory: Path) -> int:
    """Whose turn, how many rounds, agreed or not, rule breaks, and what to do next.

    Writes round-N-agreed.md once an AGREED: round is confirmed by the other side,
    and DECISION-NEEDED.md (positions side by side) when the round cap passes
    without agreement. Prints step (claude|codex|agreed|stuck), agreed, proposal,
    positions, rule_breaks, degraded, next.
    """
    from sparring.commands import debate as verb

    return run_verb("debate status", lambda: verb.status(directory, Path.cwd()))


# A discussion step's codex turn: its limits (the effort comes from the arguments).
discuss_turn_options = apply_options([*LIMIT_OPTIONS, BUDGET_OPTION])


@click.group("discuss")
def discuss_group() -> None:
    """deep-discussion: up to 10 rounds on one Codex thread, then a synthesis and a report.

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


@discuss_group.command("new")
@click.option("--args", "arguments", default="", show_default=True,
              help="The skill's arguments as typed (`-` reads them from stdin).")
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="A file holding the skill's arguments as typed (instead of --args).")
@NEW_BUDGET_OPTION
def discuss_new(arguments: str, file: Path | None, budget_tokens: int | None) -> int:
    """Parse /deep-discussion arguments and create the session.

    The effort (high, the default, or xhigh) and model (CODEX, the default, or
    NONE) words come first, in any order and case; the rest is the topic
    (`--` ends the words early). Prints session, effort, model, topic (null
    when none was given), max_rounds, inbox, next. Conflicting words, or a lone
    word naming a setting the skill does not offer (low, medium, a model
    slug), are invalid_arguments, listing the valid forms.
    """
    from sparring.commands import discuss as verb

    def call() -> dict[str, Any]:
        if file is not None or arguments == "-":
            text = file_input(file).decode("utf-8", errors="replace")
        else:
            text = arguments
        return verb.new(text, Path.cwd(), budget_tokens)

    return run_verb("discuss new", call)


@discuss_group.command("frame")
@SESSION_ARG
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="The framing YAML (default: stdin).")
@discuss_turn_options
def discuss_frame(session: str, file: Path | None, **options: Any) -> int:
    """Record the problem framing and Claude's opening view; start Codex's round 1.

    YAML keys: TOPIC, FRAMING, CLAUDE_VIEW (required), CONTEXT. With model NONE no
    Codex runs. Returns like `start`, plus `discussion` (as `discuss status`).
    """
    from sparring.commands import discuss as verb

    return run_verb("discuss frame", lambda: verb.frame(session, Path.cwd(), file_input(file),
                                                        options))


@discuss_group.command("round")
@SESSION_ARG
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="The round YAML (default: stdin).")
@click.option("--accept-changes", is_flag=True,
              help="Go on although the guard found files changed during the last turn "
              "(only after the user has seen them).")
@discuss_turn_options
def discuss_round(session: str, file: Path | None, accept_changes: bool,
                  **options: Any) -> int:
    """Hand in Claude's response and start Codex's next round on the same thread.

    YAML keys: response (required), search_results (for Codex's search requests).
    Model NONE: critic (Claude's labelled counter-argument, standing in for Codex)
    and response. If Codex's last round failed, the response asks it again. When
    both sides have now marked [CONSENSUS_REACHED], no round starts.
    """
    from sparring.commands import discuss as verb

    return run_verb("discuss round", lambda: verb.round_(session, Path.cwd(), file_input(file),
                                                         options, accept_changes))


@discuss_group.command("status")
@SESSION_ARG
def discuss_status(session: str) -> int:
    """Rounds, the last message, consensus per side, search requests, what to do next."""
    from sparring.commands import discuss as verb

    return run_verb("discuss status", lambda: verb.status(session, Path.cwd()))


@discuss_group.command("synthesis")
@SESSION_ARG
@discuss_turn_options
def discuss_synthesis(session: str, **options: Any) -> int:
    """Ask Codex for its synthesis (agreed points, trade-offs, recommendation, open
    questions, implementation hints) on the same thread. Then `wait`."""
    from sparring.commands import discuss as verb

    return run_verb("discuss synthesis", lambda: verb.synthesis(session, Path.cwd(), options))


@discuss_group.command("report")
@SESSION_ARG
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="Claude's synthesis YAML (default: stdin).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write it, inside the project (default: .kkachi/{branch}/completed/"
              "deep-discussion-{epoch}.md, or deep-discussion.report_path in sparring.yaml).")
def discuss_report(session: str, file: Path | None, out: Path | None) -> int:
    """Write the report: Timestamp, Topic, Model, Effort, Rounds, Consensus, the
    synthesis, Codex's synthesis, Claude's final observations, the transcript, tokens.

    YAML keys: agreed_points, key_trade_offs, recommended_approach, open_questions,
    implementation_hints, final_observations (markdown text each).
    """
    from sparring.commands import discuss as verb

    return run_verb("discuss report", lambda: verb.report(session, Path.cwd(), file_input(file),
                                                          out))
