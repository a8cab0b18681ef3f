"""Is Codex only reconnecting? Then the network (or the provider) is out of reach.

Codex never gives up on a refused connection or a missing network: it prints
`Reconnecting... waiting for network (...)` with growing pauses (5, 10, 20 s, …) for as
long as it runs, and each notice is an event, so the stall limit never fires. The runner
watches the events file as it grows: when everything Codex printed for `offline_after`
seconds is a reconnect notice, the turn ends as `network_unreachable`. Rate-limit retries
(`Reconnecting... 2/5 (… 429 …)`) do not count: Codex ends those by itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_RECONNECT = "Reconnecting..."
_RATE_LIMIT = re.compile(r"\b429\b|rate.?limit|quota|too many requests", re.I)


def reconnect_notice(raw: bytes) -> str | None:
    """The notice's text when this JSONL line is a reconnect notice, else None."""
    try:
        event = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(event, dict) or event.get("type") != "error":
        return None
    message = str(event.get("message", ""))
    if not message.startswith(_RECONNECT) or _RATE_LIMIT.search(message):
        return None
    return message


class OfflineWatch:
    """Reads the events file as it grows; knows since when Codex has only reconnected."""

    def __init__(self, events: Path, limit: float) -> None:
        self.events, self.limit = events, limit
        self.since: float | None = None
        self._offset = 0
        self._partial = b""

    def passed(self, now: float) -> bool:
        """True once Codex has printed nothing but reconnect notices for `limit` seconds."""
        self._read(now)
        return self.since is not None and now - self.since > self.limit

    def _read(self, now: float) -> None:
        try:
            if self.events.stat().st_size <= self._offset:
                return
            with self.events.open("rb") as f:
                f.seek(self._offset)
                chunk = f.read()
        except FileNotFoundError:
            return
        self._offset += len(chunk)
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        for line in lines:
            if line.strip():
                reconnecting = reconnect_notice(line) is not None
                self.since = (self.since or now) if reconnecting else None
