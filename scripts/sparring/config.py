"""Settings: command line (or its environment variable) > sparring.yaml > defaults.

`sparring.yaml` sits at the project root. Unknown keys are an error rather
than silently ignored, because a misspelt `stall_afer: 60` would otherwise
leave a user waiting ten minutes for a stall they thought they had bounded.
The sandbox is the exception to "the command line wins": what the user allows is the
ceiling, and a flag or this file may only ask for less (codex/sandbox.py).
"""

from __future__ import annotations

import os
import string
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, NamedTuple

from sparring import limits, paths
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


# Top-level key -> validator: how codex turns run.
SETTINGS: dict[str, Callable[[Any], Any]] = {
    "effort": _choice(EFFORTS),
    "model": model_name,
    "sandbox": _choice(SANDBOXES),  # a request: it may narrow what the user allows (sandbox.py)
    "timeout": _seconds,
    "stall_after": _seconds,
    "offline_after": _seconds,
    "budget_tokens": _positive_int,  # a new session's token budget (budget.py)
}
# Per-workflow sections (`think-about: {max_rounds: 4}`): how the debate runs.
WORKFLOW_SETTINGS: dict[str, Callable[[Any], Any]] = {
    "max_rounds": limits.rounds,
    "report_path": _report_path,
    "budget_tokens": _positive_int,
}
# Each section's defaults are its workflow's own: the registry merges them
# (workflows/registry.py, `settings`), and names the sections there are (`load_settings`).


class TurnSettings(NamedTuple):
    effort: str
    model: str | None
    sandbox: str
    timeout: float
    stall_after: float
    offline_after: float = OFFLINE_AFTER  # turns recorded before this setting had none


def load(root: Path, sections: Collection[str] | None = None) -> dict[str, Any]:
    """The validated contents of `<root>/sparring.yaml` ({} when absent). `sections` names
    the workflows' sections; without it a mapping under any other key is taken for one."""
    path = root / CONFIG_FILE
    if not os.path.lexists(path):
        return {}
    import yaml  # lazy: only verbs that start turns read the config

    # Committed with the repository: read through paths.py (a link to a secret, a FIFO
    # or a huge file is refused and named, never read), and only as UTF-8.
    text = paths.read_text(path, root, CONFIG_FILE, hint=f"fix or remove {CONFIG_FILE}: it "
                           "must be a plain UTF-8 text file in the project")
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as exc:
        raise _invalid(path, f"is not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _invalid(path, "must be a mapping of setting: value")
    return {key: _validate(path, key, value, sections) for key, value in data.items()}


def _validate(path: Path, key: Any, value: Any, sections: Collection[str] | None) -> Any:
    known = [*SETTINGS, *(sections or ("a workflow's section",))]
    is_section = key in sections if sections is not None else (
        isinstance(value, dict) and key not in SETTINGS)
    if is_section:
        if not isinstance(value, dict):
            raise _invalid(path, f"section {key!r} must be a mapping")
        return {k: _check(path, WORKFLOW_SETTINGS, f"{key}.{k}", k, v, list(WORKFLOW_SETTINGS))
                for k, v in value.items()}
    return _check(path, SETTINGS, str(key), key, value, known)


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


def resolve_turn(cli: dict[str, Any], file_settings: dict[str, Any]) -> TurnSettings:
    """Merge command-line values (None when not given) over the file and the defaults."""
    def pick(key: str, default: Any) -> Any:
        value = cli.get(key)
        return value if value is not None else file_settings.get(key, default)

    effort = pick("effort", "high")
    if cli.get("model") is not None:
        try:
            model_name(cli["model"])
        except ValueError as exc:
            raise SparringError("usage_error", f"--model: {exc}", "give a model name codex "
                                "knows, e.g. --model gpt-5.5") from exc
    return TurnSettings(
        effort=effort,
        model=pick("model", None),
        sandbox=pick("sandbox", "read-only"),
        timeout=float(pick("timeout", TIMEOUT_BY_EFFORT[effort])),
        stall_after=float(pick("stall_after", STALL_BY_EFFORT[effort])),
        offline_after=float(pick("offline_after", OFFLINE_AFTER)),
    )

