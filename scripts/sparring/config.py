"""Settings: command line (or its environment variable) > sparring.yaml > defaults.

`sparring.yaml` sits at the project root. Unknown keys are an error rather
than silently ignored, because a misspelt `stall_afer: 60` would otherwise
leave a user waiting ten minutes for a stall they thought they had bounded.
The sandbox is the exception to "the command line wins": what the user allows is the
ceiling, and a flag or this file may only ask for less (codex/sandbox.py).
"""

from __future__ import annotations

import json
import os
import re
import string
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparring import limits, paths, yamltext
from sparring.choices import EFFORTS as EFFORTS  # settings name them
from sparring.choices import SANDBOXES as SANDBOXES
from sparring.errors import SparringError

CONFIG_FILE = "sparring.yaml"

# A turn at higher effort legitimately thinks longer between events.
TIMEOUT_BY_EFFORT = {"low": 600.0, "medium": 1200.0, "high": 1800.0, "xhigh": 3600.0}
STALL_BY_EFFORT = {"low": 180.0, "medium": 300.0, "high": 600.0, "xhigh": 900.0}
# Seconds of nothing but reconnect notices before a turn ends as network_unreachable.
OFFLINE_AFTER = 60.0


def _choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return str(value)

    return check


def _seconds(value: Any) -> float:
    if isinstance(value, str):  # YAML's own numbers only: "600" in quotes is a typo to show
        raise ValueError(f"must be a number of seconds, not the text {value!r}")
    return limits.seconds(value)


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError("must be a positive whole number")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value


def model_name(value: Any) -> str:
    """A model name codex is given as `-m NAME`: no whitespace, and not a word codex would
    read as one of its flags (`--dangerously-bypass-approvals-and-sandbox`, say)."""
    text = _text(value)
    if text.startswith("-") or any(c.isspace() or not c.isprintable() for c in text):
        raise ValueError(f"{text!r} is not a model name (no spaces, not starting with -)")
    return text


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{value!r} is not true or false")
    return value


_UNTRUSTED = '={trust_level="untrusted"}'
_UNTRUSTED_ENTRY = re.compile(r'("(?:[^"\\]|\\.)*")' + re.escape(_UNTRUSTED))


def untrusted_table(folders: Any) -> str:
    """`{"/p"={trust_level="untrusted"},…}`: codex's `projects` table marking each folder
    untrusted (a TOML inline table; a JSON string is a TOML basic string)."""
    return "{" + ",".join(json.dumps(f) + _UNTRUSTED for f in folders) + "}"


def _untrusted(value: Any) -> list[str]:
    """The folders whose `.codex/` layer codex does not load: absolute paths, as a list, or
    the table untrusted_table spells (a command line's `-c projects=…`), no other."""
    if isinstance(value, str):
        found = [json.loads(entry) for entry in _UNTRUSTED_ENTRY.findall(value)]
        if not found or untrusted_table(found) != value:
            raise ValueError("is not a table of folders marked untrusted")
        value = found
    if not isinstance(value, (list, tuple)) or not value or not all(
            isinstance(f, str) and os.path.isabs(f) and f.isprintable() for f in value):
        raise ValueError("must be a list of absolute paths")
    return list(value)


def _off(value: Any) -> bool:
    if value is not False:
        raise ValueError(f"{value!r}: it is always off")
    return False


REPORT_PLACEHOLDERS = ("date", "epoch", "slug", "skill", "session", "branch")


def _report_path(value: Any) -> str:
    text = _text(value)

    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion
                  in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:
        raise ValueError(f"is not a valid pattern: {exc}") from exc
    used = {name for name, _, _ in fields}
    # A format spec or conversion is not a placeholder: `{slug:>3000000000}` (a committed
    # sparring.yaml) would build a name of gigabytes before anything could refuse it.
    dressed = sorted(f"{{{n}{'!' + c if c else ''}{':' + s if s else ''}}}"
                     for n, s, c in fields if s or c)
    if dressed:
        raise ValueError(f"uses {dressed}: placeholders are plain, as {{slug}}")
    unknown = sorted(used - set(REPORT_PLACEHOLDERS))
    if unknown:
        raise ValueError(f"uses unknown placeholders {unknown}; known: "
                         f"{', '.join('{' + p + '}' for p in REPORT_PLACEHOLDERS)}")
    return text


# -- the settings of a Codex turn, declared once ----------------------------------------------

# How a later round of the same thread gets a setting (`resume`, a workflow's later rounds).
KEPT = "kept"  # the thread's, always: no later round sets it (a switch of model mid-thread
# makes codex inject a large model-switch message)
CARRIED = "carried"  # the previous round's, unless this round sets it
FRESH = "fresh"  # as for round one: the option, else sparring.yaml, else the default


@dataclass(frozen=True)
class CodexArg:
    """Where a setting goes on codex's command line: `flag VALUE`, or with `key`
    `flag KEY=VALUE` (a `-c` override of codex's config); `long`, the flag as `codex exec
    --help` spells it (doctor checks it is there); `exec_only`: a flag of `codex exec`
    itself, given before `resume` (the resume subcommand does not take it); `features`: a
    switch of codex's features, `flag FEATURE` for each of them when the value is false
    (`--disable memories`), nothing when it is true (codex's own configuration decides)."""

    flag: str
    long: str
    key: str | None = None
    exec_only: bool = False
    features: tuple[str, ...] = ()
    spell: Callable[[Any], str] | None = None  # a `-c` value's own spelling (else TOML's)

    def words(self, value: Any) -> list[str]:
        if self.features:
            return [] if value else [w for f in self.features for w in (self.flag, f)]
        text = (self.spell or _toml)(value) if self.key else str(value)
        return [self.flag, f"{self.key}={text}" if self.key else text]

    def value_of(self, word: str) -> Any:
        """The value in `word`, the word after `flag` on a command line, as `words` made it,
        when it is this argument's (its key's, for `-c`); None when it is not."""
        if self.features:
            return False if word in self.features else None
        if self.key is None:
            return word
        key, equals, value = word.partition("=")
        if not equals or key != self.key:
            return None
        if self.spell is not None:  # its own spelling: its check reads the text
            return value
        return {"true": True, "false": False}.get(value, value)


def _toml(value: Any) -> str:
    """A value as a `-c` override spells it (TOML): true and false for a switch."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class Setting:
    """One setting of a Codex turn. From this row come: its option on every verb that starts
    a turn (`--NAME`, its `help`, value `kind` and `choices`, the variable `env` it reads),
    its key at the top of sparring.yaml (`in_file`), its check (`check`: a value as
    sparring.yaml or the option gives it, returned as the setting's value, or ValueError),
    its default, given the settings chosen before it (`default`), its entry in the turn's
    record and the shape store/shapes.py checks (`shape`; `required`: every turn recorded
    since it exists has it), its words on codex's command line, which the last gate before
    codex allows only as this row makes them (`codex`; None: the runner enforces it, codex
    never sees it), and what a later round of the thread does with it (`resume`).

    `group`: `codex` (what Codex runs with) or `limit` (what the runner enforces): a
    workflow's verb takes the options of one group or of both (sparring/params.py)."""

    name: str
    help: str
    kind: str
    check: Callable[[Any], Any]
    default: Callable[[Mapping[str, Any]], Any]
    shape: str
    group: str
    choices: tuple[str, ...] = ()
    env: str | None = None
    option: bool = True
    in_file: bool = True
    required: bool = True
    codex: CodexArg | None = None
    resume: str = FRESH

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


TURN_SETTINGS: tuple[Setting, ...] = (
    Setting("effort", "Codex reasoning effort. Default: sparring.yaml `effort`, else high",
            "choice", _choice(EFFORTS), lambda chosen: "high", "str", "codex",
            choices=EFFORTS, env="SPARRING_EFFORT", resume=CARRIED,
            codex=CodexArg("-c", "--config", key="model_reasoning_effort")),
    Setting("model", "Codex model. Default: sparring.yaml `model`, else codex's own "
            "configuration", "text", model_name, lambda chosen: None, "str?", "codex",
            env="SPARRING_MODEL", resume=KEPT, codex=CodexArg("-m", "--model")),
    # A request: it may only narrow what the user allows (codex/sandbox.py decides, and the
    # gate checks it against what they allow when codex starts).
    Setting("sandbox", "Narrow Codex's sandbox. Default: what the user allows "
            "(SPARRING_SANDBOX in their shell, else their config file; else read-only). "
            "Never wider", "choice", _choice(SANDBOXES), lambda chosen: "read-only", "str",
            "codex", choices=SANDBOXES, resume=CARRIED,
            codex=CodexArg("-s", "--sandbox", exec_only=True)),
    Setting("timeout", "Wall-clock limit of the turn, seconds (at most a day). Default by "
            "effort: low 600, medium 1200, high 1800, xhigh 3600", "seconds", _seconds,
            lambda chosen: TIMEOUT_BY_EFFORT[chosen["effort"]], "num", "limit",
            env="SPARRING_TIMEOUT"),
    Setting("stall_after", "End the turn when codex prints no event for this many seconds. "
            "Default by effort: 180/300/600/900", "seconds", _seconds,
            lambda chosen: STALL_BY_EFFORT[chosen["effort"]], "num", "limit",
            env="SPARRING_STALL_AFTER"),
    Setting("offline_after", "End the turn as network_unreachable when codex reports only "
            "reconnecting for this many seconds. Default: 60", "seconds", _seconds,
            lambda chosen: OFFLINE_AFTER, "num", "limit", env="SPARRING_OFFLINE_AFTER",
            required=False),  # turns recorded before it had none
    # What escapes the record: off in every turn, so that all Codex does is in its events and
    # its rollout. Nobody's option and no key of sparring.yaml: only the user's own config
    # file keeps sub-agents or hooks on (codex/sandbox.py, USER_SWITCHES), read afresh for
    # every turn, and the gate refuses a turn without the words the user did not waive.
    Setting("subagents", "Codex's sub-agents. Off unless the user's config file says "
            "`codex_subagents: true`", "flag", _boolean, lambda chosen: False, "bool",
            "codex", option=False, in_file=False, required=False,
            codex=CodexArg("--disable", "--disable", features=("multi_agent",
                                                               "multi_agent_v2"))),
    Setting("memories", "Codex's memories. Always off", "flag", _off, lambda chosen: False,
            "bool", "codex", option=False, in_file=False, required=False,
            codex=CodexArg("--disable", "--disable", features=("memories",))),
    Setting("hooks", "Codex's hooks. Off unless the user's config file says "
            "`codex_hooks: true`", "flag", _boolean, lambda chosen: False, "bool", "codex",
            option=False, in_file=False, required=False,
            codex=CodexArg("--disable", "--disable", features=("hooks",))),
    # With hooks on, the project's own (.codex/hooks.json, [hooks] in .codex/config.toml)
    # still never run: the project's folders are untrusted for the turn, so codex loads none
    # of its `.codex/` layer, whatever the user's Codex config trusts (codex/sandbox.py).
    Setting("untrusted", "Folders whose .codex/ layer Codex does not load in the turn (the "
            "project's, when the user keeps hooks on)", "paths", _untrusted,
            lambda chosen: None, "list?", "codex", option=False, in_file=False,
            required=False, codex=CodexArg("-c", "--config", key="projects",
                                           spell=untrusted_table)),
)


def switches() -> tuple[Setting, ...]:
    """The rows that switch a feature of codex off (CodexArg.features)."""
    return tuple(s for s in TURN_SETTINGS if s.codex is not None and s.codex.features)


def setting(name: str) -> Setting:
    (found,) = (s for s in TURN_SETTINGS if s.name == name)
    return found


class TurnSettings(Mapping[str, Any]):
    """The settings of one turn, by name, one for each row of TURN_SETTINGS: what codex's
    command line (codex.exec_argv) and the turn's record are made from."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = {s.name: values[s.name] for s in TURN_SETTINGS}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> TurnSettings:
        """A turn's settings as its record keeps them; one an older turn lacks is its
        default."""
        found: dict[str, Any] = {}
        for row in TURN_SETTINGS:
            found[row.name] = record[row.name] if row.name in record else row.default(found)
        return cls(found)

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def record(self) -> dict[str, Any]:
        """As the turn's record keeps them."""
        return dict(self._values)


def top_level() -> dict[str, Callable[[Any], Any]]:
    """sparring.yaml's top-level keys, each with its check: how codex turns run (the
    settings table's, as it is now), and a new session's token budget (budget.py)."""
    return {**{s.name: s.check for s in TURN_SETTINGS if s.in_file},
            "budget_tokens": _positive_int}
# Per-workflow sections (`think-about: {max_rounds: 4}`): how the debate runs.
WORKFLOW_SETTINGS: dict[str, Callable[[Any], Any]] = {
    "max_rounds": limits.rounds,
    "report_path": _report_path,
    "budget_tokens": _positive_int,
    "challenge": _boolean,  # think-about, dual-model: a cheap consensus is challenged first
}
# Each section's defaults are its workflow's own: the registry merges them
# (workflows/registry.py, `settings`), and names the sections there are (`load_settings`).


def load(root: Path, sections: Collection[str] | None = None) -> dict[str, Any]:
    """The validated contents of `<root>/sparring.yaml` ({} when absent). `sections` names
    the workflows' sections; without it a mapping under any other key is taken for one."""
    path = root / CONFIG_FILE
    if not os.path.lexists(path):
        return {}
    # Committed with the repository: read through paths.py (a link to a secret, a FIFO
    # or a huge file is refused and named, never read), and only as UTF-8.
    text = paths.read_text(path, root, CONFIG_FILE, hint=f"fix or remove {CONFIG_FILE}: it "
                           "must be a plain UTF-8 text file in the project")
    try:
        data = yamltext.load(text)
    except (ValueError, RecursionError) as exc:
        raise _invalid(path, f"is not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _invalid(path, "must be a mapping of setting: value")
    return {key: _validate(path, key, value, sections) for key, value in data.items()}


def _validate(path: Path, key: Any, value: Any, sections: Collection[str] | None) -> Any:
    keys = top_level()
    known = [*keys, *(sections or ("a workflow's section",))]
    is_section = key in sections if sections is not None else (
        isinstance(value, dict) and key not in keys)
    if is_section:
        if not isinstance(value, dict):
            raise _invalid(path, f"section {key!r} must be a mapping")
        return {k: _check(path, WORKFLOW_SETTINGS, f"{key}.{k}", k, v, list(WORKFLOW_SETTINGS))
                for k, v in value.items()}
    return _check(path, keys, str(key), key, value, known)


def _check(path: Path, table: dict[str, Callable[[Any], Any]], label: str, key: Any,
           value: Any, known: list[str]) -> Any:
    check = table.get(str(key))
    if check is None:
        raise _invalid(path, f"has an unknown setting {label!r}; known: {', '.join(known)}")
    try:
        return check(value)
    except ValueError as exc:
        raise _invalid(path, f"setting {label!r}: {exc}") from exc


def _invalid(path: Path, why: str) -> SparringError:
    return SparringError("config_invalid", f"{path} {why}", f"fix or remove {path.name}")


def resolve_turn(given: Mapping[str, Any], file_settings: Mapping[str, Any]) -> TurnSettings:
    """Each setting: as given (the command line, its variable, or a later round's carried
    value; None when not given), else sparring.yaml's, else its default. A value given is
    checked as the file's are (a bad one: usage_error, naming its option)."""
    chosen: dict[str, Any] = {}
    for row in TURN_SETTINGS:
        value = given.get(row.name)
        if value is not None:
            try:
                value = row.check(value)
            except ValueError as exc:
                raise SparringError("usage_error", f"{row.flag}: {exc}",
                                    f"give {row.flag} a value it takes (`sparring start "
                                    "--help`)") from exc
        elif row.name in file_settings:
            value = file_settings[row.name]
        else:
            value = row.default(chosen)
        chosen[row.name] = value
    return TurnSettings(chosen)
