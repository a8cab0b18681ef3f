"""The CLI as the skills' launcher runs it, without an interpreter's start per call.

The launcher runs each verb in a new `python -I`: isolated and single-threaded, so the verbs
that start a turn fork its runner (process/standby.py) instead of starting one anew, and
the runner may start codex early (turn/runner.py's diagram). The suite runs the CLI in its
own process, which is neither (pytest's worker has threads): there every turn's runner
started anew, 120 ms of CPU each, a fifth of the suite's, on a path only macOS takes.

`Launcher` is one such isolated, single-threaded python per pytest worker, the CLI imported:
each call runs in a child forked from it, in the caller's environment, folder and standard
input, as a new launcher process would, and prints to a buffer sent back. The child is a
fresh process each time: nothing one call changes in its memory reaches the next.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from typing import Any

_HEADER = struct.Struct("!I")

# The server: read a request, fork, run the CLI in the child, send back what it printed.
_SERVER = r"""
import contextlib, io, json, os, struct, sys, traceback
from sparring.cli.main import main
import importlib, pkgutil, sparring, psutil
for module in pkgutil.walk_packages(sparring.__path__, "sparring."):  # loaded once, for all
    if not module.name.endswith("__main__"):
        importlib.import_module(module.name)

HEADER = struct.Struct("!I")
requests, replies = os.fdopen(0, "rb", buffering=0), 1


def read(stream, size):
    data = b""
    while len(data) < size:
        part = stream.read(size - len(data))
        if not part:
            return None
        data += part
    return data


def send(fd, payload):
    data = json.dumps(payload).encode()
    data = HEADER.pack(len(data)) + data
    while data:
        data = data[os.write(fd, data):]


class Stdin(io.TextIOWrapper):
    def isatty(self):
        return False


def child(request, reply):
    null = os.open(os.devnull, os.O_RDWR)  # nothing it starts reaches this server's pipes
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.stdin = Stdin(io.BytesIO(request["input"].encode("latin-1")))
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(request["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        code, err = 99, io.StringIO(traceback.format_exc())
    send(reply, {"code": code, "out": out.getvalue(), "err": err.getvalue()})


while True:
    header = read(requests, HEADER.size)
    if header is None:
        break
    request = json.loads(read(requests, HEADER.unpack(header)[0]))
    down, up = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(down)
        status = 1
        try:
            child(request, up)
            status = 0
        finally:
            os._exit(status)
    os.close(up)
    with os.fdopen(down, "rb", buffering=0) as answers:
        header = read(answers, HEADER.size)
        answer = read(answers, HEADER.unpack(header)[0]) if header else None
    os.waitpid(pid, 0)
    if answer is None:
        answer = json.dumps({"code": 99, "out": "", "err": "the forked call died"}).encode()
    os.write(replies, HEADER.pack(len(answer)) + answer)
"""


class Launcher:
    """One isolated, single-threaded python that runs CLI calls in children it forks."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None

    def run(self, argv: list[str], stdin: bytes) -> tuple[int, str, str]:
        """(exit status, what the call printed, what it wrote to stderr)."""
        proc = self._server()
        assert proc.stdin is not None and proc.stdout is not None
        request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(),
                              "input": stdin.decode("latin-1")}).encode()
        proc.stdin.write(_HEADER.pack(len(request)) + request)
        proc.stdin.flush()
        header = proc.stdout.read(_HEADER.size)
        if len(header) < _HEADER.size:
            self.proc = None
            raise RuntimeError("the launcher process died")
        answer: dict[str, Any] = json.loads(proc.stdout.read(_HEADER.unpack(header)[0]))
        return int(answer["code"]), str(answer["out"]), str(answer["err"])

    def _server(self) -> subprocess.Popen[bytes]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, "-I", "-c", _SERVER],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         start_new_session=True, cwd="/")
        return self.proc

    def close(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
            self.proc = None
