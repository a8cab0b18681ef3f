"""YAML as sparring reads it: the text of a file (sparring.yaml, the user's config file, a
mapping handed in) to its data, with yaml.safe_load."""

from __future__ import annotations

from typing import Any


def load(text: str) -> Any:
    """The data of YAML `text`; ValueError saying what is wrong. A nesting too deep for the
    parser itself is RecursionError, for the caller to name."""
    # Here, where a YAML file is read: PyYAML's import would add 34 ms, 1.2x Python's own
    # start, to every call that reads none, every round's among them (bench/status_bench.py).
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from exc
