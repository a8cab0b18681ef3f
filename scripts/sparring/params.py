"""A verb of the command line, declared as data: its name, the function that runs it, its
help, its arguments and options (the SPARRING_* variable an option reads, how a value is
checked and what it becomes). cli/main.py builds the click command line from these, and
nothing else parses one: sparring's own verbs are declared in cli/verbs.py, each
workflow's in its package (workflows/*/__init__.py).

A `Group` names options every verb that starts a Codex turn shares: those of a turn's
settings (config.TURN_SETTINGS, read when the command line is built) and its token budget,
which reach the verb's function together, as `options`; or a new session's budget.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sparring import config, limits
from sparring.choices import CODEX_ANSWER

KINDS = ("text", "choice", "seconds", "count", "file", "folder", "place", "flag")


@dataclass(frozen=True)
class Option:
    """`--flag VALUE`, or a bare flag (`--a/--b`: one of two, None when neither is
    given). `kind` says what a value is (KINDS: a `file` or a `folder` that need not exist
    yet, a `place`, a folder that does); `env`, the SPARRING_* variable read when the option
    is not given; `least`, a count's least value, or 0 for seconds that may be zero. The
    verb's function gets it as `dest` (by default the flag's words joined by `_`)."""

    flag: str
    kind: str = "text"
    help: str = ""
    dest: str = ""
    env: str | None = None
    default: Any = None
    choices: tuple[str, ...] = ()
    least: int | None = None
    metavar: str | None = None
    multiple: bool = False
    show_default: bool = False
    required: bool = False

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind
        if not self.dest:
            name = self.flag.split("/")[0].removeprefix("--").replace("-", "_")
            object.__setattr__(self, "dest", name)
        if self.multiple:
            object.__setattr__(self, "default", ())
        elif self.kind == "flag" and "/" not in self.flag:
            object.__setattr__(self, "default", False)


@dataclass(frozen=True)
class Argument:
    """A word (`text`), or a folder that may not be a file (`folder`)."""

    name: str
    kind: str = "text"
    metavar: str | None = None
    required: bool = True


@dataclass(frozen=True)
class Group:
    """Options the command line declares once for every verb that takes them: `codex-turn`
    (every setting of a turn, and its token budget), `turn-limits` (the limits the runner
    enforces, and the budget), `new-budget` (a new session's token budget). With `later`,
    only what a later round of the thread may set (`resume`: not the model)."""

    name: str
    later: bool = False

    def __post_init__(self) -> None:
        assert self.name in GROUPS, self.name

    @property
    def together(self) -> bool:
        """Whether its values reach the verb together, as `options` (a turn's settings)."""
        return self.name != "new-budget"


Param = Argument | Option | Group


@dataclass(frozen=True)
class Verb:
    """`sparring NAME ...`: `function`, `module:function` (in sparring.commands for
    sparring's own verbs, in its package for a workflow's), is called with the values of its
    arguments and options by name; its help is what --help and docs/runner.md show."""

    name: str
    function: str
    help: str
    params: tuple[Param, ...] = field(default=())


def argument(name: str, kind: str = "text", *, metavar: str | None = None,
             required: bool = True) -> Argument:
    """An argument: `kind` dir (a folder, DIR), session or text (a word)."""
    assert kind in ("dir", "session", "text"), kind
    return Argument(name, "folder" if kind == "dir" else "text", metavar, required)


def option(flag: str, help: str, kind: str = "file", *, name: str | None = None,
           metavar: str | None = None, default: str | None = None) -> Option:
    """A workflow's option `--flag`: a file (its value is the path, or None; `-`: stdin,
    as the verb reads it), a text or a flag."""
    assert kind in ("file", "text", "flag"), kind
    return Option(flag, kind, help, dest=name or "", metavar=metavar, default=default,
                  show_default=default is not None)


def options(group: str) -> Group:
    return Group(group)


# -- values ----------------------------------------------------------------------------------


def value(param: Option | Argument, raw: str) -> Any:
    """`raw`, as given for `param`, as the verb gets it; ValueError, saying why, when it is
    not one (click reports it as a usage error)."""
    kind = param.kind
    if kind == "choice":
        assert isinstance(param, Option)
        if raw not in param.choices:
            raise ValueError(f"{raw!r} is not one of {', '.join(map(repr, param.choices))}.")
        return raw
    if kind == "seconds":
        assert isinstance(param, Option)
        return limits.seconds(raw, allow_zero=param.least == 0)
    if kind == "count":
        assert isinstance(param, Option) and param.least is not None
        try:
            number = int(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a whole number.") from None
        if number < param.least:
            raise ValueError(f"{number} is less than {param.least}.")
        return number
    if kind in ("file", "folder", "place"):
        return _path(raw, folder=kind != "file", there=kind == "place")
    return raw


def _path(raw: str, folder: bool, there: bool) -> str:
    """A file (or folder) argument, as given: what stands there must be of that kind and
    readable; what does not stand there yet is the verb's to report (paths.py), but a
    `there` folder must. Each verb opens it through paths.py."""
    if os.path.exists(raw):
        if os.path.isdir(raw) != folder:
            raise ValueError(f"{raw!r} is {'not ' if folder else ''}a folder.")
        if not os.access(raw, os.R_OK):
            raise ValueError(f"{raw!r} is not readable.")
    elif there:
        raise ValueError(f"{raw!r} does not exist.")
    return raw


# -- what the verbs share --------------------------------------------------------------------

SESSION = Argument("session", metavar="SESSION")
DIR = argument("directory", "dir", metavar="DIR")
FULL = Option("--full", "flag", "Print every key (thread_id, settings, files, all activities, "
              "full usage and guard details), not just what a debate round needs.")
CWD = Option("--cwd", "place", "A folder of the project sparring runs in (its git root holds "
             ".sparring/); never one outside it.", default=".", show_default=True)
BUDGET = Option("--budget-tokens", "count", "Set the session's token budget to N first (to go "
                "on after budget_exhausted).", least=1, metavar="N")
NEW_BUDGET = Option("--budget-tokens", "count", "The session's token budget (Codex's input + "
                    "output tokens): once used, no further round starts. Default: "
                    "sparring.yaml `budget_tokens`, else none.", least=1, metavar="N")
TEMPLATE = (
    Option("--template", help="Render this prompt template instead of reading a prompt "
           "(`sparring render --list` lists them).", metavar="NAME"),
    Option("--var", help="A template variable (repeatable).", dest="var_pairs",
           metavar="KEY=VALUE", multiple=True),
    Option("--var-file", help="A template variable read from a file, for long text "
           "(repeatable).", dest="var_file_pairs", metavar="KEY=PATH", multiple=True),
    Option("--vars-file", "file", "Template variables from a YAML or JSON mapping."),
)
PROMPT = (
    Option("--prompt-file", "file", "Read the prompt from this file (default: stdin)."),
    *TEMPLATE,
    Option("--schema", "choice", "JSON schema codex must answer in (validated; one re-ask). "
           "Default: the workflow's (think-about, dual-model: codex-answer; others: none).",
           choices=(CODEX_ANSWER, "none")),
)

# The setting groups of each option group (config.Setting.group), and whether it ends with
# the turn's budget or is a new session's.
GROUPS = {"codex-turn": ("codex", "limit"), "turn-limits": ("limit",), "new-budget": ()}
_LATER = {config.KEPT: " A later round of the thread keeps round one's.",
          config.CARRIED: " A later round: the previous round's, unless given.",
          config.FRESH: ""}


def expand(params: Sequence[Param]) -> list[Argument | Option]:
    """`params` with each Group replaced by its options, as the settings table says now."""
    found: list[Argument | Option] = []
    for param in params:
        found += group_options(param) if isinstance(param, Group) else [param]
    return found


def group_options(group: Group) -> list[Option]:
    if group.name == "new-budget":
        return [NEW_BUDGET]
    rows = [s for s in config.TURN_SETTINGS if s.option and s.group in GROUPS[group.name]
            and not (group.later and s.resume == config.KEPT)]
    return [*(setting_option(row) for row in rows), BUDGET]


def setting_option(row: config.Setting) -> Option:
    """The option of a turn's setting."""
    return Option(row.flag, row.kind, row.help + "." + _LATER[row.resume], env=row.env,
                  choices=row.choices)
