"""digest.py: the digests sparring records (a runner's record's name, a round file Codex
read) stay the ones hashlib computes, whichever implementation computes them."""

from __future__ import annotations

import hashlib
import importlib
import sys

import pytest

from sparring import digest
from sparring.digest import sha256_hex


@pytest.mark.parametrize("data", [b"", b"abc", "round-1-codex.md \u00e9".encode(),
                                  bytes(range(256)) * 300])
def test_the_same_digest_as_hashlib(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_a_python_without_its_own_sha256_falls_back_to_hashlib(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("_sha2", "_sha256"):
        monkeypatch.setitem(sys.modules, name, None)  # `import` of it raises ImportError
    try:
        fallback = importlib.reload(digest)
        assert fallback.sha256 is hashlib.sha256
        assert fallback.sha256_hex(b"abc") == hashlib.sha256(b"abc").hexdigest()
    finally:
        monkeypatch.undo()
        importlib.reload(digest)
    assert digest.sha256 is not hashlib.sha256  # this Python's own, without OpenSSL
