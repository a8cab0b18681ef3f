"""One verb run and printed, without click: what the CLI and the entry share.

The CLI (cli/options.py `run_verb`) and the entry (cli/entry.py, which answers the
calls a debate makes every round without loading click) both print a verb through `run`,
and find `--cwd`'s project folder through `project_dir`: the envelope, the hints' SESSION,
the inbox files a verb took, and the folder a verb works in are the same whichever way
answered, because there is one implementation of each.
"""

from __future__ import annotations

import os
import sys

from sparring import paths
from sparring.errors import SparringError
from sparring.output import EXIT_FAILED, EXIT_OK, emit, failure, success
from sparring.store import sessions
from sparring.store.locate import project_root

TYPE_CHECKING = False  # typing costs every round's call 4 ms of a 10-20 ms Python start
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from types import ModuleType
    from typing import Any

    from sparring import paths


def run(verb: str, call: Callable[[], dict[str, Any]],
        named: Callable[[], str | None]) -> int:
    """Run one verb and print its JSON; SparringError becomes the error object. `named`
    gives the SESSION the command line named, if the verb takes one (hints fill it in).

    Inbox files the verb read move into its session's inputs/ once it succeeded, and stay
    where they are when it failed (inputs.py)."""
    try:
        payload = call()
    except SparringError as exc:
        _forget_taken()
        emit(failure(verb, exc), named())
        return EXIT_FAILED
    except BaseException:
        _forget_taken()
        raise
    inputs = _inputs()
    if inputs is not None:
        inputs.archive_taken(_session_dir(payload))
    # The session the verb acted on fills its hints' SESSION: the id it printed first.
    emit(success(verb, payload), text(payload.get("session")) or named())
    return EXIT_OK


def internal_error(exc: Exception) -> int:
    """A bug: still one JSON object, with what to report (the exception being handled)."""
    import traceback  # here only: importing it costs every verb 8 ms of start-up

    emit(failure("sparring", SparringError(
        "internal_error", f"{type(exc).__name__}: {exc}",
        "this is a sparring bug; please report it with the traceback",
        traceback=traceback.format_exc())))
    return EXIT_FAILED


def _inputs() -> ModuleType | None:
    """store/inputs.py, if the verb loaded it to read an inbox file: one that did not (poll,
    wait and status, every round) took none, and does not load it to say so."""
    return sys.modules.get("sparring.store.inputs")


def _forget_taken() -> None:
    inputs = _inputs()
    if inputs is not None:
        inputs.forget_taken()


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


def project_dir(cwd: Path) -> Path:
    """--cwd: a folder inside the project the command runs in, reached without a link (a
    session made for a folder elsewhere would let Codex work, and sparring write, there)."""
    return project_place(cwd).path


def project_place(cwd: str | Path) -> paths.Place:
    """project_dir's Place (its `text`: the folder as str, for the calls of every round)."""
    return paths.folder(cwd, project_root(os.getcwd()), "--cwd")
