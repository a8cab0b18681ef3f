"""`python -m sparring` and the `sparring` command.

poll and wait of an ended turn, and guard check, answer without loading the CLI
(cli/entry.py); the rest goes on to it. Native Windows is refused first, in one JSON line.
"""

import sys

from sparring import host


def main() -> int:
    if host.native_windows():
        from sparring.errors import SparringError
        from sparring.output import emit, failure

        verb = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else (
            "sparring")
        emit(failure(verb, SparringError("platform_unsupported", host.NATIVE_WINDOWS,
                                         host.WSL_HINT)))
        return 1
    from sparring.cli.entry import main as entry

    return entry()


if __name__ == "__main__":
    sys.exit(main())
