"""SHA-256 as hex, from Python's own implementation when it has one.

`hashlib` loads OpenSSL, some 2.5 ms, and the calls a debate makes every round name a
runner's record and check a round file by their digests. Python's builtin module (`_sha2`
from 3.12, `_sha256` before) computes the same digest without it; a Python built without
either falls back to hashlib.
"""

from __future__ import annotations

try:
    from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment,unused-ignore]


def sha256_hex(data: bytes) -> str:
    return str(sha256(data).hexdigest())
