"""`sparring start` and `sparring resume`: launch a turn in the background (launch.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sparring.store import sessions
from sparring.turn import launch, runner


def start(ref: str, cwd: Path, options: dict[str, Any], prompt_file: Path | None,
          template: str | None, var_pairs: tuple[str, ...], var_file_pairs: tuple[str, ...],
          vars_file: Path | None, schema: str | None) -> dict[str, Any]:
    with runner.prepared(lambda: sessions.resolve(ref, cwd)) as ready:  # while it is made
        prompt = _prompt(prompt_file, template, var_pairs, var_file_pairs, vars_file)
        return launch.start(ref, cwd, options, prompt, schema, ready=ready)


def resume(ref: str, cwd: Path, options: dict[str, Any], prompt_file: Path | None,
           template: str | None, var_pairs: tuple[str, ...], var_file_pairs: tuple[str, ...],
           vars_file: Path | None, schema: str | None, recover: bool,
           accept_changes: bool) -> dict[str, Any]:
    """The next round, or with `recover` (and no prompt given) the interrupted one again."""
    given = prompt_file or template or var_pairs or var_file_pairs or vars_file
    with runner.prepared(lambda: sessions.resolve(ref, cwd)) as ready:  # while it is made
        prompt = None if recover and not given else _prompt(
            prompt_file, template, var_pairs, var_file_pairs, vars_file)
        return launch.resume(ref, cwd, options, prompt, recover, schema, accept_changes,
                             ready=ready)


def _prompt(prompt_file: Path | None, template: str | None, var_pairs: tuple[str, ...],
            var_file_pairs: tuple[str, ...], vars_file: Path | None
            ) -> launch.Prompt | Callable[[], launch.Prompt]:
    """The prompt read now from a file or stdin (refused, if it must be, before anything
    else); a template's rendering, the call that makes it: launch makes it while codex
    starts (jinja2 and YAML take tens of milliseconds to load)."""
    def rendered() -> launch.Prompt:
        return launch.prompt_from(prompt_file, template, var_pairs, var_file_pairs, vars_file)

    return rendered if template is not None else rendered()
