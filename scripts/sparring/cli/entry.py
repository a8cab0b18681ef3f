"""The entry: `python -m sparring` and the `sparring` command.

The calls a debate makes (`poll`, `wait`, `status`, `start`, `resume`, `guard check`, and
every workflow's own verb: cli/declared.py) are parsed here against the declarations click's
commands are made from, and run by the very function click's callback runs, without loading
click (about 40 ms, where the interpreter itself starts in 10 to 20). What the declarations
do not parse plainly (another verb, --help, a typo, a value that is not one) goes to the
CLI (cli/main.py), which answers it, its errors included; nothing has been done then.

One failure policy: once a verb runs here, it is never run again by the CLI. A SparringError
is its JSON error, as the CLI prints it; anything else is a bug, printed as internal_error.
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    """`python -m sparring` and the `sparring` command: this entry, else the CLI."""
    code = run(sys.argv[1:])
    if code is None:
        from sparring.cli.main import main as cli

        code = cli()
    return code


def run(argv: list[str]) -> int | None:
    """Run `argv` as a declared verb and return its exit status; None, having done and
    printed nothing, when the CLI must answer."""
    from sparring.cli import declared
    from sparring.output import is_text

    if not all(is_text(arg) for arg in argv):
        return None  # the CLI refuses it (not_utf8)
    found = declared.find(argv)
    if found is None:
        return None
    verb, words = found
    values = declared.parse(verb, words)
    if values is None:
        return None
    from sparring.cli.verb import internal_error
    from sparring.cli.verb import run as run_verb

    cwd = os.getcwd()
    try:
        return run_verb(verb.name, lambda: verb.run(values, cwd),
                        lambda: values.get("session"))
    except KeyboardInterrupt:
        return interrupted()
    except Exception as exc:  # a bug: reported, never run a second time by the CLI
        return internal_error(exc)


def interrupted() -> int:
    """As the CLI reports an interrupt: nothing was written."""
    from sparring.errors import SparringError
    from sparring.output import emit, failure

    emit(failure("sparring", SparringError(
        "interrupted", "interrupted", "run the verb again; what it had written is kept")))
    return 130
