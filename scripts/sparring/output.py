"""The JSON envelope every verb prints: one object, versioned, stable keys."""

from __future__ import annotations

import json
import sys
from typing import Any

from sparring.errors import SparringError

# Bump only for a breaking change of the contract; tests/test_contract.py pins it.
SCHEMA_VERSION = 1


def success(verb: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "ok": True, "verb": verb, **payload}


def failure(verb: str, error: SparringError) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "ok": False, "verb": verb, "error": error.to_dict()}


def emit(obj: dict[str, Any]) -> None:
    text = json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
    # A file name that is not UTF-8 arrives as lone surrogates: print it escaped
    # rather than fail after the verb has done its work.
    data = text.encode("utf-8", errors="backslashreplace")
    if hasattr(sys.stdout, "buffer"):
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:  # an in-memory stream (tests)
        sys.stdout.write(data.decode("utf-8"))
        sys.stdout.flush()
