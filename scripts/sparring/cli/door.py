"""The first door: `python -m sparring` and the `sparring` command.

A few verbs answer here without loading the CLI: `poll` and `wait` of an ended turn (the
commonest call of a debate; turn/quick.py reads it) and `guard check --baseline FILE`,
which spends most of its time waiting for git status (and, when the index moved, git
ls-files): it starts them before the rest of the check loads, and the check runs without
click, so less of the machine goes to Python while git works. Everything else, and anything
unusual, goes on to the full CLI (cli/main.py), which prints the same object the slow way.
"""

from __future__ import annotations

import os
import sys

_WAIT_OPTIONS = ("--timeout",)


def main() -> int:
    """`python -m sparring` and the `sparring` command: this fast path, else the CLI."""
    code = run(sys.argv[1:])
    if code is None:
        from sparring.errors import SparringError

        try:
            from sparring.cli.main import main as cli
        except SparringError as exc:  # the registry refused a workflow SPARRING_WORKFLOWS names
            from sparring.output import EXIT_FAILED, emit, failure

            emit(failure("sparring", exc))
            return EXIT_FAILED
        code = cli()
    return code


def run(argv: list[str]) -> int | None:
    """Print `poll`/`wait` of an ended turn, or `guard check`, and return the exit status;
    None when the full CLI must answer (it has not printed anything then)."""
    if argv[:2] == ["guard", "check"]:
        return _guard_check(argv[2:])
    request = _request(argv)
    if request is None:
        return None
    from sparring.output import EXIT_OK, emit, success
    from sparring.turn.quick import ended_turn

    try:
        found = ended_turn(*request)
    except KeyboardInterrupt:
        return _interrupted()
    except Exception:  # quick.SlowPath, or anything unexpected: the full CLI reports it
        return None
    emit(success(request[0], found), request[1])  # as the CLI: hints name the session
    return EXIT_OK


def _guard_check(words: list[str]) -> int | None:
    """`guard check --baseline FILE`, whose time is git's: git starts before anything else
    loads, and the CLI (click and the rest) never does."""
    baseline = _baseline(words)
    if baseline is None:
        return None
    from pathlib import Path

    from sparring.guard import start_early

    start_early(Path(baseline))
    from sparring.commands.guard import check
    from sparring.errors import SparringError
    from sparring.output import EXIT_FAILED, EXIT_OK, emit, failure, success

    try:
        found = check(Path(baseline))
    except SparringError as exc:  # as the CLI's run_verb reports it
        emit(failure("guard check", exc))
        return EXIT_FAILED
    except KeyboardInterrupt:
        return _interrupted()
    except Exception:  # a bug: the full CLI reports it with its traceback
        return None
    emit(success("guard check", found))
    return EXIT_OK


def _baseline(words: list[str]) -> str | None:
    """FILE of `--baseline FILE` or `--baseline=FILE` alone; None for anything else (a
    folder, --help, a typo), which is the CLI's business."""
    if len(words) == 2 and words[0] == "--baseline":
        path = words[1]
    elif len(words) == 1 and words[0].startswith("--baseline="):
        path = words[0].partition("=")[2]
    else:
        return None
    return path if path and not os.path.isdir(path) else None


def _interrupted() -> int:
    """As the CLI reports an interrupt: nothing was written."""
    from sparring.errors import SparringError
    from sparring.output import emit, failure

    emit(failure("sparring", SparringError(
        "interrupted", "interrupted", "run the verb again; what it had written is kept")))
    return 130


def _request(argv: list[str]) -> tuple[str, str] | None:
    """(verb, session) of `poll SESSION` or `wait SESSION [--timeout S]`, else None."""
    if not argv or argv[0] not in ("poll", "wait"):
        return None
    verb, words, refs = argv[0], iter(argv[1:]), []
    for word in words:
        name, _, value = word.partition("=")
        if verb == "wait" and name in _WAIT_OPTIONS:
            if not _is_timeout(value if "=" in word else next(words, "")):
                return None
        elif word.startswith("-") or not word:
            return None  # --full, --seal, --help, a typo: the CLI's business
        else:
            refs.append(word)
    return (verb, refs[0]) if len(refs) == 1 else None


def _is_timeout(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return 0 <= value < float("inf")
