"""Loopback HTTP server plumbing shared by the API mocks (stdlib only).

`LoopbackServer` listens on 127.0.0.1 (port 0) in a daemon thread, records every
request, and hands each one to `route()` as an `Exchange`. Subclasses implement
`route()`. Stopping releases behaviours parked in `Exchange.wait_until_stopped()`
(hangs, stalls) and shuts down every open client connection, so `stop()` returns
promptly even while a client is still waiting for an answer.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

HOST = "127.0.0.1"
STOP_GRACE_S = 5.0


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the mock received it."""

    index: int  # 1-based arrival order
    method: str
    path: str  # without the query string
    query: str
    headers: Mapping[str, str]  # keys lower-cased
    body: Any  # parsed JSON, or None when absent or not JSON
    raw_body: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


Reply = str | Callable[[RecordedRequest], str]


def resolve_reply(reply: Reply, request: RecordedRequest) -> str:
    """A reply is either fixed text or computed from the request."""
    return reply(request) if callable(reply) else reply


class Exchange:
    """One request/response exchange, handed to a behaviour."""

    def __init__(
        self, handler: BaseHTTPRequestHandler, request: RecordedRequest, stopped: threading.Event
    ) -> None:
        self._handler = handler
        self._stopped = stopped
        self._chunked = False
        self.request = request

    def send_json(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        payload = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self._send_head(status, {"Content-Type": "application/json", **(headers or {})}, payload)
        self._write(payload)

    def send_empty(self, status: int) -> None:
        self._send_head(status, {}, b"")

    def start_sse(self, *, chunked: bool) -> None:
        """Send SSE headers. Unchunked bodies end when the connection closes."""
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        if chunked:
            headers["Transfer-Encoding"] = "chunked"
        self._chunked = chunked
        self._send_head(200, headers, None)

    def send_event(self, data: Mapping[str, Any]) -> None:
        """One SSE frame; the event name is the JSON `type`, repeated in the data."""
        frame = f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()
        if self._chunked:
            frame = b"%x\r\n%s\r\n" % (len(frame), frame)
        self._write(frame)

    def end_sse(self) -> None:
        if self._chunked:
            self._write(b"0\r\n\r\n")

    def wait_until_stopped(self) -> None:
        self._stopped.wait()

    def _send_head(self, status: int, headers: Mapping[str, str], body: bytes | None) -> None:
        handler = self._handler
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        if body is not None:
            handler.send_header("Content-Length", str(len(body)))
        handler.send_header("Connection", "close")
        handler.end_headers()

    def _write(self, data: bytes) -> None:
        self._handler.wfile.write(data)
        self._handler.wfile.flush()


class Behaviour(Protocol):
    """Something that answers one request."""

    def respond(self, exchange: Exchange) -> None: ...


@dataclass(frozen=True)
class Hang:
    """Accept the request, never send a status line; give up when the server stops."""

    def respond(self, exchange: Exchange) -> None:
        exchange.wait_until_stopped()


class Script:
    """Thread-safe queue of scripted behaviours with a settable default."""

    def __init__(self, default: Behaviour) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Behaviour] = deque()
        self.default = default

    def extend(self, behaviours: Iterable[Behaviour]) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    def next(self, fallback: Behaviour | None = None) -> Behaviour:
        """The next scripted behaviour; when none is left, `fallback` or the default."""
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return fallback if fallback is not None else self.default

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue)


def _read_chunked(stream: io.BufferedIOBase) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int(stream.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while stream.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        parts.append(stream.read(size))
        stream.readline()


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    length = handler.headers.get("Content-Length")
    if length is not None:
        raw = handler.rfile.read(int(length))
    elif "chunked" in handler.headers.get("Transfer-Encoding", "").lower():
        raw = _read_chunked(handler.rfile)
    else:
        raw = b""
    if handler.headers.get("Content-Encoding", "").lower() == "gzip":
        raw = gzip.decompress(raw)
    return raw


def _parse_json(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.owner._connection_opened(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._connection_closed(self.connection)

    def _dispatch(self) -> None:
        self.close_connection = True
        self.server.owner._handle(self)

    do_GET = do_POST = do_HEAD = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _dispatch

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output quiet; requests are recorded instead


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: LoopbackServer) -> None:
        self.owner = owner
        super().__init__((HOST, 0), _Handler)


ServerT = TypeVar("ServerT", bound="LoopbackServer")


class LoopbackServer:
    """Threaded loopback HTTP server that records requests; subclasses route them."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._errors: list[BaseException] = []
        self._connections: set[socket.socket] = set()
        self._stopped = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- routing (subclass hook) -------------------------------------------------
    def route(self, exchange: Exchange) -> None:
        raise NotImplementedError

    # -- lifecycle ----------------------------------------------------------------
    def start(self: ServerT) -> ServerT:
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, release parked behaviours, close open connections, wait."""
        if self._server is None:
            return
        self._stopped.set()
        self._server.shutdown()
        self._close_connections()
        self._wait_for_connections(STOP_GRACE_S)
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(STOP_GRACE_S)
        self._server = None

    def __enter__(self: ServerT) -> ServerT:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- inspection ---------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("mock server is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised by behaviours (a bug in a test script, not a client error)."""
        with self._lock:
            return list(self._errors)

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._connections)

    def requests_to(self, method: str, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == method and r.path == path]

    def wait_for_requests(
        self, count: int, timeout: float, *, method: str = "POST", path: str | None = None
    ) -> list[RecordedRequest]:
        """Block until `count` matching requests arrived; return them (maybe fewer on timeout)."""

        def matching() -> list[RecordedRequest]:
            return [
                r for r in self._requests if r.method == method and (path is None or r.path == path)
            ]

        with self._lock:
            self._lock.wait_for(lambda: len(matching()) >= count, timeout)
            return matching()

    # -- internals ----------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        exchange = Exchange(handler, self._record(handler), self._stopped)
        try:
            self.route(exchange)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (killed, timed out); nothing to answer
        except Exception as exc:
            with self._lock:
                self._errors.append(exc)
            raise

    def _record(self, handler: BaseHTTPRequestHandler) -> RecordedRequest:
        raw = _read_body(handler)
        url = urlsplit(handler.path)
        with self._lock:
            request = RecordedRequest(
                index=len(self._requests) + 1,
                method=handler.command,
                path=url.path,
                query=url.query,
                headers={k.lower(): v for k, v in handler.headers.items()},
                body=_parse_json(raw),
                raw_body=raw,
            )
            self._requests.append(request)
            self._lock.notify_all()
        return request

    def _connection_opened(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.add(conn)

    def _connection_closed(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.discard(conn)
            self._lock.notify_all()

    def _close_connections(self) -> None:
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):  # already closed by the peer
                conn.shutdown(socket.SHUT_RDWR)

    def _wait_for_connections(self, timeout: float) -> None:
        with self._lock:
            self._lock.wait_for(lambda: not self._connections, timeout)
