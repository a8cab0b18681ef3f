"""The CLI as the skills' launcher runs it, without an interpreter's start per call.

The launcher runs each verb in a new `python -I`: isolated and single-threaded, so the verbs
that start a turn fork its runner (process/standby.py) instead of starting one anew, and
the runner may start codex early (turn/runner.py's diagram). The suite runs the CLI in its
own process, which is neither (pytest's worker has threads): there every turn's runner
started anew, 120 ms of CPU each, a fifth of the suite's, on a path only macOS takes.

`Launcher` is one such isolated, single-threaded python per pytest worker: each call runs
in a child forked from it, through the launcher's own entry (sparring/__main__.py), in the
caller's environment, folder and umask, its standard input given as `sys.stdin` (descriptor
0 is /dev/null), its descriptors 1 and 2 files of its own that are sent back: so a runner it
forks logs as one forked by the launcher does. The child is a fresh process each time:
nothing one call changes in its memory reaches the next. One difference is kept on purpose:
the server loads every module of the package (and psutil) before it forks, where a launcher
process loads some only later, some in the forked runner; tests/test_standby.py and the
Claude Code runs take the launcher's own path, imports and all.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import sys
import tempfile
from typing import IO, Any

_HEADER = struct.Struct("!I")

# The server: read a request, fork, run the call in the child as the launcher's entry runs it
# (sparring/__main__.py), send back what it printed. The child's descriptors 1 and 2 are files
# of its own, so a runner it forks writes where a runner forked by the launcher writes.
_SERVER = r"""
import io, json, os, struct, sys, tempfile, traceback
import importlib, pkgutil, psutil, sparring
from sparring.__main__ import main
for module in pkgutil.walk_packages(sparring.__path__, "sparring."):  # loaded once, for all
    if not module.name.endswith("__main__"):
        importlib.import_module(module.name)

HEADER = struct.Struct("!I")
requests, replies = os.fdopen(0, "rb", buffering=0), os.dup(1)


def read(stream, size):
    data = b""
    while len(data) < size:
        part = stream.read(size - len(data))
        if not part:
            return None
        data += part
    return data


def send(fd, message):
    data = HEADER.pack(len(message)) + message
    while data:
        data = data[os.write(fd, data):]


class Stdin(io.TextIOWrapper):
    def isatty(self):
        return False


def captured(fd):
    with os.fdopen(os.dup(fd), "rb") as f:
        f.seek(0)
        return f.read().decode("utf-8", "replace")


def child(request, reply):
    null = os.open(os.devnull, os.O_RDONLY)  # nothing it starts reads this server's pipe
    os.dup2(null, 0)
    os.close(null)
    for fd in (1, 2):  # what it prints, and what a runner it forks inherits
        out = tempfile.TemporaryFile()
        os.dup2(out.fileno(), fd)
        out.close()
    os.close(replies)
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.argv = ["sparring", *request["argv"]]
    sys.stdin = Stdin(io.BytesIO(request["input"].encode("latin-1")))
    try:
        code = main()
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 99
    sys.stdout.flush()
    sys.stderr.flush()
    send(reply, json.dumps({"code": code, "out": captured(1), "err": captured(2)}).encode())


while True:
    header = read(requests, HEADER.size)
    if header is None:
        break
    request = json.loads(read(requests, HEADER.unpack(header)[0]))
    down, up = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(down)
        try:
            child(request, up)
        finally:
            os._exit(0)
    os.close(up)
    with os.fdopen(down, "rb", buffering=0) as answers:
        header = read(answers, HEADER.size)
        answer = read(answers, HEADER.unpack(header)[0]) if header else None
    os.waitpid(pid, 0)
    if answer is None:
        answer = json.dumps({"code": 99, "out": "", "err": "the forked call died"}).encode()
    send(replies, answer)
"""


class Launcher:
    """One isolated, single-threaded python that runs CLI calls in children it forks."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self._errors: IO[bytes] | None = None  # the server's own stderr

    def run(self, argv: list[str], stdin: bytes) -> tuple[int, str, str]:
        """(exit status, what the call printed, what it wrote to stderr)."""
        proc = self._server()
        assert proc.stdin is not None and proc.stdout is not None
        umask = os.umask(0)
        os.umask(umask)
        request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(),
                              "umask": umask, "input": stdin.decode("latin-1")}).encode()
        try:
            proc.stdin.write(_HEADER.pack(len(request)) + request)
            proc.stdin.flush()
            header = proc.stdout.read(_HEADER.size)
            if len(header) < _HEADER.size:
                raise RuntimeError(f"the launcher process died: {self._said()}")
            answer: dict[str, Any] = json.loads(proc.stdout.read(_HEADER.unpack(header)[0]))
        except BaseException:
            self.close()  # a reply left unread must not answer the next call
            raise
        return int(answer["code"]), str(answer["out"]), str(answer["err"])

    def _server(self) -> subprocess.Popen[bytes]:
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            self._errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
            self.proc = subprocess.Popen([sys.executable, "-I", "-c", _SERVER],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._errors, start_new_session=True, cwd="/")
        return self.proc

    def _said(self) -> str:
        if self._errors is None:
            return ""
        self._errors.seek(0)
        return self._errors.read().decode("utf-8", "replace")[-2000:]

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            assert proc.stdin is not None
            with contextlib.suppress(OSError):
                proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._errors is not None:
            self._errors.close()
            self._errors = None
