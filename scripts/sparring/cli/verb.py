"""One verb run and printed: the JSON envelope (or a person's text), the hints' SESSION,
and the inbox files the verb took, archived once it succeeded (store/inputs.py)."""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from typing import Any

import click

from sparring.errors import SparringError
from sparring.output import EXIT_FAILED, EXIT_OK, Text, emit, failure, success
from sparring.store import inputs, sessions


def run(verb: str, call: Callable[[], dict[str, Any] | Text], named: Any) -> int:
    """Run one verb and print its JSON (or its Text, as it is); SparringError becomes the
    error object. `named`: the SESSION the command line named, if the verb takes one (hints
    fill it in).

    Inbox files the verb read move into its session's inputs/ once it succeeded, and stay
    where they are when it failed (inputs.py)."""
    try:
        payload = call()
    except SparringError as exc:
        inputs.forget_taken()
        emit(failure(verb, exc), text(named))
        return EXIT_FAILED
    except BaseException:
        inputs.forget_taken()
        raise
    status = getattr(payload, "exit_status", EXIT_OK)  # doctor, not ready: EXIT_FAILED
    if isinstance(payload, Text):
        click.echo(payload, nl=False)
        return status
    if inputs.took_any():
        inputs.archive_taken(_session_dir(payload))
    # The session the verb acted on fills its hints' SESSION: the id it printed first.
    emit(success(verb, payload), text(payload.get("session")) or text(named))
    return status


def internal_error(exc: Exception) -> int:
    """A bug: still one JSON object, with what to report (the exception being handled)."""
    emit(failure("sparring", SparringError(
        "internal_error", f"{type(exc).__name__}: {exc}",
        "this is a sparring bug; please report it with the traceback",
        traceback=traceback.format_exc())))
    return EXIT_FAILED


def text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _session_dir(payload: dict[str, Any]) -> str | None:
    """The folder of the session a verb's output names, if any."""
    if payload.get("session_dir"):
        return str(payload["session_dir"])
    if not payload.get("session"):
        return None

    try:
        return sessions.resolve(str(payload["session"]), os.getcwd()).path
    except SparringError:
        return None

