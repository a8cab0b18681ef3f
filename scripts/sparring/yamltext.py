"""YAML as sparring reads it (sparring.yaml, the user's config file, a mapping handed in),
with yaml.safe_load, and as it writes it (a report's front matter), with yaml.safe_dump."""

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


def dump(data: Any) -> str:
    """`data` as block YAML (keys in the order given, text kept unfolded, Unicode kept):
    PyYAML quotes whatever text would read back as something else (a colon, a leading `-`
    or `#`, quotes, a newline, `yes`, a number), so what any YAML parser reads back is
    `data` itself."""
    # Here, where a report is written: the same 34 ms import, kept off every round's call
    # that writes none (bench/status_bench.py).
    import yaml

    return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True,
                              default_flow_style=False, width=2**31 - 1))
