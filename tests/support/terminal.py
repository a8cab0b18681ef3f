"""`python -m sparring ...` with a terminal as its stdout, as a person runs it."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path


def on_a_terminal(cwd: Path, *args: str) -> tuple[int, str]:
    """The exit status and what the terminal showed (stdout and stderr, newlines as \\n)."""
    main, child = pty.openpty()
    with subprocess.Popen([sys.executable, "-m", "sparring", *args], cwd=cwd,
                          stdout=child, stderr=child, stdin=subprocess.DEVNULL) as proc:
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal closed: the child is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        status = proc.wait(timeout=60)
    os.close(main)
    return status, b"".join(chunks).decode().replace("\r\n", "\n")
