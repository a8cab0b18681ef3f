"""What a verb reads: a file, or stdin (`-` or no file), exactly as given."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

from sparring.errors import SparringError


def is_stdin(path: Path | None) -> bool:
    return path is None or str(path) == "-"


def read_input(path: Path | None, option: str, stdin: BinaryIO | None = None) -> bytes:
    """Bytes from `path`, or from stdin when it is None or `-` (never from a terminal)."""
    if not is_stdin(path):
        assert path is not None
        try:
            return path.read_bytes()
        except FileNotFoundError as exc:
            raise SparringError("file_not_found", f"{path} does not exist",
                                f"check the path given to {option}") from exc
        except OSError as exc:
            raise SparringError("file_not_found", f"cannot read {path}: {exc.strerror}",
                                f"check the path given to {option} and its permissions") from exc
    stream = stdin if stdin is not None else sys.stdin.buffer
    if stream.isatty():
        raise SparringError("input_empty", "nothing to read: stdin is a terminal",
                            f"pass {option} FILE, or pipe the content on stdin")
    return stream.read()
