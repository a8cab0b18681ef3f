"""`sparring start` and `sparring resume`: launch a turn in the background (launch.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.turn import launch


def start(here: str, session: str, options: dict[str, Any], prompt_file: str | None,
          template: str | None, var_pairs: tuple[str, ...], var_file_pairs: tuple[str, ...],
          vars_file: str | None, schema: str | None, no_challenge: bool) -> dict[str, Any]:
    prompt = launch.prompt_from(_path(prompt_file), template, var_pairs, var_file_pairs,
                                _path(vars_file))
    return launch.start(session, Path(here), options, prompt, schema,
                        challenge_off="start --no-challenge" if no_challenge else None)


def resume(here: str, session: str, options: dict[str, Any], prompt_file: str | None,
           template: str | None, var_pairs: tuple[str, ...], var_file_pairs: tuple[str, ...],
           vars_file: str | None, schema: str | None, recover: bool,
           accept_changes: bool) -> dict[str, Any]:
    """The next round, or with `recover` (and no prompt given) the interrupted one again."""
    given = prompt_file or template or var_pairs or var_file_pairs or vars_file
    prompt = None if recover and not given else launch.prompt_from(
        _path(prompt_file), template, var_pairs, var_file_pairs, _path(vars_file))
    return launch.resume(session, Path(here), options, prompt, recover, schema,
                         accept_changes)


def _path(given: str | None) -> Path | None:
    return None if given is None else Path(given)
