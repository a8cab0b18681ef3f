"""The verbs a debate calls every round, declared once: their arguments and options (the
SPARRING_* variable an option reads, how each value is checked and what it becomes), their
help, and what runs them.

Two readers, one declaration. cli/main.py makes their click commands from these (a click
parameter of each option and argument, cli/options.py, whose type checks a value with
`value` below); the entry (cli/entry.py) parses a command line against the very same
declarations without loading click (`parse`), and runs the very same function. A workflow's
own verbs are declared in its package (workflows/workflow.py: `Verb`, `Param`); `of_workflow`
reads them as declarations too, their option groups from `GROUPS` here.

Light at import (standard library only, lazily where a verb runs): every call a debate makes
each round loads this module.
"""

from __future__ import annotations

import os

from sparring.choices import CODEX_ANSWER, EFFORTS, SANDBOXES

TYPE_CHECKING = False  # typing costs every round's call 4 ms of a 10-20 ms Python start
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from sparring.workflows.workflow import Param, Workflow
    from sparring.workflows.workflow import Verb as FlowVerb

KINDS = ("text", "choice", "seconds", "count", "file", "folder", "place", "flag")


class Option:
    """`--flag VALUE` (or a bare flag): `kind` says what a value is (KINDS: a file or a
    folder that need not exist yet, a `place`, a folder that does); `env`, the SPARRING_*
    variable read when the option is not given; `least`, a count's least value, or 0 for
    seconds that may be zero."""

    __slots__ = ("choices", "default", "dest", "env", "flag", "help", "kind", "least",
                 "metavar", "multiple", "required", "show_default")

    def __init__(self, flag: str, kind: str = "text", *, dest: str | None = None,
                 help: str = "", env: str | None = None, default: Any = None,
                 choices: Sequence[str] = (), least: int | None = None,
                 metavar: str | None = None, multiple: bool = False,
                 show_default: bool = False, required: bool = False) -> None:
        assert kind in KINDS, kind
        self.flag, self.kind, self.help, self.env = flag, kind, help, env
        self.dest = dest or flag.removeprefix("--").replace("-", "_")
        self.default = (() if multiple else False if kind == "flag" else default)
        self.choices, self.least, self.metavar = tuple(choices), least, metavar
        self.multiple, self.show_default, self.required = multiple, show_default, required


class Argument:
    """A word (`text`), or a folder that may not be a file (`folder`)."""

    __slots__ = ("kind", "metavar", "name", "required")

    def __init__(self, name: str, kind: str = "text", *, metavar: str | None = None,
                 required: bool = True) -> None:
        self.name, self.kind, self.metavar, self.required = name, kind, metavar, required


class Verb:
    """`sparring NAME ...`: its arguments and options, in the order --help lists them, and
    `run(values, cwd)`, which does its work and returns its JSON object."""

    __slots__ = ("arguments", "help", "name", "options", "run")

    def __init__(self, name: str, run: Callable[[dict[str, Any], str], dict[str, Any]],
                 help: str, arguments: tuple[Argument, ...] = (),
                 options: tuple[Option, ...] = ()) -> None:
        self.name, self.run, self.help = name, run, help
        self.arguments, self.options = arguments, options


# -- values ----------------------------------------------------------------------------------


def value(option: Option | Argument, raw: str) -> Any:
    """`raw`, as given for `option`, as the verb gets it; ValueError, saying why, when it
    is not one (both report it: click as a usage error, the entry by leaving the
    call to click)."""
    kind = option.kind
    if kind == "choice":
        assert isinstance(option, Option)
        if raw not in option.choices:
            raise ValueError(f"{raw!r} is not one of {', '.join(map(repr, option.choices))}.")
        return raw
    if kind == "seconds":
        from sparring import limits

        assert isinstance(option, Option)
        return limits.seconds(raw, allow_zero=option.least == 0)
    if kind == "count":
        assert isinstance(option, Option) and option.least is not None
        try:
            number = int(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a whole number.") from None
        if number < option.least:
            raise ValueError(f"{number} is less than {option.least}.")
        return number
    if kind in ("file", "folder", "place"):
        return _path(raw, folder=kind != "file", there=kind == "place")
    return raw


def _path(raw: str, folder: bool, there: bool) -> str:
    """A file (or folder) argument, as given: what stands there must be of that kind and
    readable; what does not stand there yet is the verb's to report (paths.py), but a
    `there` folder must. Text, not a Path: pathlib, with what it loads, costs a round's
    look about 5 ms (bench/status_bench.py), and each reader opens it through paths.py."""
    if os.path.exists(raw):
        if os.path.isdir(raw) != folder:
            raise ValueError(f"{raw!r} is {'not ' if folder else ''}a folder.")
        if not os.access(raw, os.R_OK):
            raise ValueError(f"{raw!r} is not readable.")
    elif there:
        raise ValueError(f"{raw!r} does not exist.")
    return raw


# -- parsing, as click parses ----------------------------------------------------------------


def parse(verb: Verb, words: Sequence[str]) -> dict[str, Any] | None:
    """The values click gives `verb` for `words`, when every word is an argument or an
    option the declaration names, each value is one (`value`), and nothing asks for help;
    None for anything else (nothing read, nothing done), which click then answers, saying
    what is wrong."""
    flags = {option.flag: option for option in verb.options}
    given: dict[str, Any] = {}
    arguments: list[str] = []
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if not word.startswith("-") or word == "-":
            arguments.append(word)
            continue
        name, equals, inline = word.partition("=")
        option = flags.get(name)
        if option is None or (option.kind == "flag" and equals) or (
                not option.multiple and option.dest in given):
            return None  # another option, --help, `--`, a repeat: click's business
        if option.kind == "flag":
            given[option.dest] = True
            continue
        if not equals:
            if not rest or (rest[0].startswith("-") and rest[0] != "-"):
                return None
            inline = rest.pop(0)
        try:
            converted = value(option, inline)
        except ValueError:
            return None
        given[option.dest] = (*given.get(option.dest, ()), converted) if option.multiple \
            else converted
    return _complete(verb, given, arguments)


def _complete(verb: Verb, given: dict[str, Any], words: list[str]) -> dict[str, Any] | None:
    """The arguments, then every option not given: from its variable, or its default."""
    if len(words) > len(verb.arguments) or any(
            a.required for a in verb.arguments[len(words):]):
        return None
    values: dict[str, Any] = {}
    for argument, word in zip(verb.arguments, words, strict=False):
        try:
            values[argument.name] = value(argument, word)
        except ValueError:
            return None
    for argument in verb.arguments[len(words):]:
        values[argument.name] = None
    for option in verb.options:
        if option.dest in given:
            values[option.dest] = given[option.dest]
        elif option.env and os.environ.get(option.env):
            try:
                values[option.dest] = value(option, os.environ[option.env])
            except ValueError:
                return None  # click reports the setting (config_invalid)
        elif option.required:
            return None
        else:
            values[option.dest] = default(option)
    return values


def default(option: Option) -> Any:
    """An option's default, as its values are (click converts a default as it converts a
    value given)."""
    if option.default is None or option.kind in ("flag", "text") or option.multiple:
        return option.default
    return value(option, str(option.default))


# -- what the verbs share --------------------------------------------------------------------

SESSION = Argument("session", metavar="SESSION")
FULL = Option("--full", "flag", help="Print every key (thread_id, settings, files, all "
              "activities, full usage and guard details), not just what a debate round "
              "needs.")
CWD = Option("--cwd", "place", default=".", show_default=True, help="A folder of the project "
             "sparring runs in (its git root holds .sparring/); never one outside it.")
LIMITS = (
    Option("--timeout", "seconds", env="SPARRING_TIMEOUT", help="Wall-clock limit of the "
           "turn, seconds (at most a day). Default by effort: low 600, medium 1200, high "
           "1800, xhigh 3600."),
    Option("--stall-after", "seconds", env="SPARRING_STALL_AFTER", help="End the turn when "
           "codex prints no event for this many seconds. Default by effort: 180/300/600/900."),
    Option("--offline-after", "seconds", env="SPARRING_OFFLINE_AFTER", help="End the turn as "
           "network_unreachable when codex reports only reconnecting for this many seconds. "
           "Default: 60."),
)
BUDGET = Option("--budget-tokens", "count", least=1, metavar="N", help="Set the session's "
                "token budget to N first (to go on after budget_exhausted).")
NEW_BUDGET = Option("--budget-tokens", "count", least=1, metavar="N", help="The session's "
                    "token budget (Codex's input + output tokens): once used, no further round "
                    "starts. Default: sparring.yaml `budget_tokens`, else none.")
SANDBOX = Option("--sandbox", "choice", choices=SANDBOXES, help="Narrow Codex's sandbox. "
                 "Default: what the user allows (SPARRING_SANDBOX in their shell, else their "
                 "config file; else read-only). Never wider.")
TEMPLATE = (
    Option("--template", metavar="NAME", help="Render this prompt template instead of "
           "reading a prompt (`sparring render --list` lists them)."),
    Option("--var", dest="var_pairs", multiple=True, metavar="KEY=VALUE",
           help="A template variable (repeatable)."),
    Option("--var-file", dest="var_file_pairs", multiple=True, metavar="KEY=PATH",
           help="A template variable read from a file, for long text (repeatable)."),
    Option("--vars-file", "file", help="Template variables from a YAML or JSON mapping."),
)
PROMPT = (Option("--prompt-file", "file", help="Read the prompt from this file (default: "
                 "stdin)."), *TEMPLATE,
          Option("--schema", "choice", choices=(CODEX_ANSWER, "none"), help="JSON schema "
                 "codex must answer in (validated; one re-ask). Default: the workflow's "
                 "(think-about, dual-model: codex-answer; others: none)."))
# A workflow's option groups (workflow.GROUPS): the token budget of a new session; a turn's
# limits and budget; and those with the Codex settings a round may set (the thread keeps its
# model). A turn's settings reach the verb together, as `options`.
GROUPS: dict[str, tuple[Option, ...]] = {
    "new-budget": (NEW_BUDGET,),
    "turn-limits": (*LIMITS, BUDGET),
    "codex-turn": (
        Option("--effort", "choice", choices=EFFORTS, env="SPARRING_EFFORT",
               help="Codex reasoning effort for this round."),
        Option("--model", env="SPARRING_MODEL",
               help="Codex model (round one only; later rounds keep the thread's)."),
        SANDBOX, *LIMITS, BUDGET),
}
TURN_GROUPS = ("turn-limits", "codex-turn")
# What start's and resume's callbacks take by name; the rest are the turn's `options`.
_PROMPT_NAMES = ("prompt_file", "template", "var_pairs", "var_file_pairs", "vars_file",
                 "schema")


# -- the verbs -------------------------------------------------------------------------------


def _poll(values: dict[str, Any], cwd: str) -> dict[str, Any]:
    from sparring.commands.poll import poll

    return poll(values["session"], cwd, values["full"])


def _wait(values: dict[str, Any], cwd: str) -> dict[str, Any]:
    from sparring.commands.poll import wait

    analysis = None
    if values["seal_file"] is not None:
        from sparring.store.inputs import read_input

        analysis = read_input(values["seal_file"], "--seal")
    return wait(values["session"], cwd, values["timeout"], values["full"], analysis)


def _status(values: dict[str, Any], cwd: str) -> dict[str, Any]:
    from sparring.cli.verb import project_place
    from sparring.commands import status

    return status.status(values["session"], project_place(values["cwd"]).text,
                         values["only_open"])


def _start(values: dict[str, Any], cwd: str) -> dict[str, Any]:
    from pathlib import Path

    from sparring.commands import start

    n, options = _split(values, ("session", *_PROMPT_NAMES))
    return start.start(n["session"], Path(cwd), options, n["prompt_file"], n["template"],
                       n["var_pairs"], n["var_file_pairs"], n["vars_file"], n["schema"])


def _resume(values: dict[str, Any], cwd: str) -> dict[str, Any]:
    from pathlib import Path

    from sparring.commands import start

    n, options = _split(values, ("session", *_PROMPT_NAMES, "recover", "accept_changes"))
    return start.resume(n["session"], Path(cwd), options, n["prompt_file"], n["template"],
                        n["var_pairs"], n["var_file_pairs"], n["vars_file"], n["schema"],
                        n["recover"], n["accept_changes"])


def _guard_check(values: dict[str, Any], cwd: str) -> dict[str, Any]:
    from pathlib import Path

    from sparring.commands.guard import check

    return check(Path(values["baseline"]))


def _split(values: dict[str, Any], names: Sequence[str]) -> tuple[dict[str, Any],
                                                                   dict[str, Any]]:
    return ({k: v for k, v in values.items() if k in names},
            {k: v for k, v in values.items() if k not in names})


POLL = Verb("poll", _poll, """\
Report the current turn without blocking.

\b
Keys: session, status (running|completed|failed|timeout|stalled|stopped),
round, turn, purpose, elapsed_s; while running last_event_s and the last
activities (commands, file changes, reasoning summaries, notices); once
completed review ({data} when the answer is structured, else {text}; or
review_withheld until you seal); on a failure error {code, message, hint}
and recoverable; guard ({clean: true} or the changed files); usage {round,
total} in input/output tokens, and budget {used, budget} when the session
has a token budget. Until you seal, a completed round shows no usage, and
its guard only when files changed. For an arch-debate or a deep-discussion
whose Codex turn has ended, also `debate` or `discussion` (as their status
verbs print; a discussion's `last_message` then carries Codex's answer).
--full adds thread_id, settings, files, every activity, review.text and
the complete usage.""", (SESSION,), (FULL,))

WAIT = Verb("wait", _wait, """\
Block until the turn ends (or --timeout passes); print the poll object.

Adds `wait_timed_out`: true when the turn was still running (absent
otherwise). The default stays under the two minutes a Bash tool call gets by
default. With --seal
(once Codex's round one has ended) the analysis is sealed before anything of
Codex's is shown (adds `sealed` and the check's `independence`); if the seal
is refused, nothing is shown and the seal's error is printed.""", (SESSION,), (
    Option("--timeout", "seconds", least=0, default=100.0, show_default=True,
           help="Return after this many seconds even if the turn still runs (0 to a day)."),
    FULL,
    Option("--seal", "file", dest="seal_file", help="Seal this file as Claude's own analysis "
           "first (what `sparring seal --file` does, once Codex's round one has ended), then "
           "wait: one call instead of two.")))

STATUS = Verb("status", _status, """\
Show one session, or list every session of this project.

One session: its summary (rounds, turns, tokens) and `budget` {used, budget}
when it has a token budget. A session not finalized also shows `question` and
`next`: the step its record says comes next, to pick it up in a new conversation.""",
              (Argument("session", metavar="[SESSION]", required=False),), (
    CWD,
    Option("--open", "flag", dest="only_open", help="List only the sessions not finalized "
           "yet that sparring itself wrote (a session folder planted in .sparring or "
           "committed in a clone is left out), each with its question and next step (what "
           "picking one up needs)."),
))

START = Verb("start", _start, """\
Start round one in the background and return.

The prompt is --template rendered with its variables, or --prompt-file, or
stdin — passed to codex byte for byte. Returns once
codex has survived its first second (SPARRING_STARTSECS), with the same
object as `poll`. A codex that dies in that second is an error carrying its
`stderr_tail` (codes codex_not_found, codex_usage_error, codex_start_failed,
or the turn's own code such as rate_limited).

Codex runs in the sandbox the user allows: SPARRING_SANDBOX in their shell, else
`sandbox:` in ~/.config/sparring/config.yaml, else read-only. --sandbox and
sparring.yaml may only narrow it (asking for more: sandbox_not_allowed). The
output's `sandbox` says which one runs and where it came from.""", (SESSION,), (
    Option("--effort", "choice", choices=EFFORTS, env="SPARRING_EFFORT",
           help="Codex reasoning effort. Default: sparring.yaml `effort`, else high."),
    Option("--model", env="SPARRING_MODEL", help="Codex model. Default: codex's own "
           "configuration."),
    Option("--sandbox", "choice", choices=SANDBOXES, help="Narrow Codex's sandbox. Default: "
           "what the user allows (SPARRING_SANDBOX in their shell, else their config file; "
           "else read-only; resume: the previous round's). Never wider."),
    *LIMITS, BUDGET, *PROMPT))

RESUME = Verb("resume", _resume, """\
Start the next round on the same Codex thread (by its thread id).

The prompt comes from --template, --prompt-file or stdin. The model stays the thread's;
effort and sandbox default to the previous round's (the sandbox never wider than
the user allows now; see `start`). With --recover the
interrupted round is asked again instead (allowed once per round). When the
guard found files changed in the last turn, resume refuses (guard_violation)
until the user has decided: `sparring guard accept SESSION` (or
--accept-changes here) says so.""", (SESSION,), (
    Option("--effort", "choice", choices=EFFORTS, env="SPARRING_EFFORT",
           help="Codex reasoning effort. Default: the previous round's."),
    START.options[2], *LIMITS, BUDGET, *PROMPT,
    Option("--recover", "flag", help="Re-send the interrupted round's prompt (once, when poll "
           "said recoverable)."),
    Option("--accept-changes", "flag", help="Go on although the guard found files changed "
           "during the last turn (only after the user has seen them).")))

GUARD_CHECK = Verb("guard check", _guard_check, """\
Compare the tree with --baseline: prints `clean` and `changed` [{path, change}].

change is added, modified or deleted. Exit status 0 whether clean or not.""", (), (
    Option("--baseline", "file", required=True, help="A file written by `guard snapshot`."),))

VERBS = {verb.name: verb for verb in (POLL, WAIT, STATUS, START, RESUME, GUARD_CHECK)}


# -- a workflow's own verbs ------------------------------------------------------------------


def of_workflow(flow: Workflow, verb: FlowVerb) -> Verb:
    """A workflow's own verb (workflows/workflow.py) as a declaration: its arguments, its
    options (a group's, from GROUPS), and what runs it: the registry's call, with a turn's
    settings together as `options`."""
    arguments: list[Argument] = []
    options: list[Option] = []
    together: list[str] = []
    for param in verb.params:
        if param.kind in GROUPS:
            options += GROUPS[param.kind]
            if param.kind in TURN_GROUPS:
                together += [option.dest for option in GROUPS[param.kind]]
        elif param.flag is None:
            arguments.append(Argument(param.name, "folder" if param.kind == "dir" else "text",
                                      metavar=param.metavar, required=param.required))
        else:
            options.append(_option(param))

    def run(values: dict[str, Any], cwd: str) -> dict[str, Any]:
        from sparring.workflows import registry

        if together:
            settings = {name: values[name] for name in together}
            values = {k: v for k, v in values.items() if k not in settings}
            values["options"] = settings
        return registry.call(flow, verb.name, values, cwd)

    return Verb(f"{flow.command} {verb.name}", run, verb.help, tuple(arguments),
                tuple(options))


def _option(param: Param) -> Option:
    assert param.flag is not None, param.name
    kind = {"file": "file", "flag": "flag"}.get(param.kind, "text")
    return Option(param.flag, kind, dest=param.name, help=param.help, metavar=param.metavar,
                  default=param.default, show_default=param.default is not None)


def find(words: Sequence[str]) -> tuple[Verb, list[str]] | None:
    """The declared verb `words` begin with, and the words after its name; None when they
    begin with none (a verb the entry does not take)."""
    if not words:
        return None
    if words[0] in VERBS:
        return VERBS[words[0]], list(words[1:])
    if len(words) >= 2 and f"{words[0]} {words[1]}" in VERBS:
        return VERBS[f"{words[0]} {words[1]}"], list(words[2:])
    if len(words) < 2 or words[0].startswith("-"):
        return None
    from sparring.workflows import registry

    flow = next((f for f in registry.WORKFLOWS.values() if f.command == words[0]), None)
    found = next((v for v in flow.verbs if v.name == words[1]), None) if flow else None
    return None if flow is None or found is None else (of_workflow(flow, found),
                                                       list(words[2:]))
