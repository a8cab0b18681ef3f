"""`python -m sparring`, the `sparring` command and the skills' launcher: the CLI.

On native Windows the command line is never loaded (its modules need POSIX: fcntl, pwd):
`main` prints one JSON line that names WSL instead of a traceback.
"""

import sys
from collections.abc import Sequence

from sparring import host
from sparring.errors import SparringError
from sparring.output import emit, failure


def refuse(argv: Sequence[str] | None = None) -> int:
    """Native Windows: one JSON error, naming WSL."""
    args = list(sys.argv[1:] if argv is None else argv)
    verb = args[0] if args and not args[0].startswith("-") else "sparring"
    emit(failure(verb, SparringError("platform_unsupported", host.NATIVE_WINDOWS,
                                     host.WSL_HINT)))
    return 1


if host.native_windows():
    main = refuse
else:
    from sparring.cli.main import main


if __name__ == "__main__":
    sys.exit(main())
