"""Limits a user can set: finite, and within a range a person could mean.

A limit that is NaN lets every comparison with it come out false, so a turn with
`--timeout nan` runs forever and `wait --timeout nan` never returns; infinity
does the same on purpose. Every place that reads a limit (command-line options,
their SPARRING_* variables, sparring.yaml) checks it here, so none of them can
slip through.
"""

from __future__ import annotations

import math

# A turn, a stall or a wait longer than a day is a typo, not a plan.
MAX_SECONDS = 86_400.0
# What `wait` waits at most when not told: under the two minutes a Bash tool call gets.
WAIT_TIMEOUT_S = 100.0
# Seconds codex must survive to count as started (SPARRING_STARTSECS).
MAX_START_WINDOW = 30.0
# More rounds than this is not a debate any more.
MAX_ROUNDS = 100


def seconds(value: object, *, allow_zero: bool = False, most: float = MAX_SECONDS) -> float:
    """`value` as a finite number of seconds in (0, most], or [0, most] with `allow_zero`.

    Raises ValueError with a message that completes "… must be" / "… is".
    """
    number = _number(value)
    low_ok = number >= 0 if allow_zero else number > 0
    if not (math.isfinite(number) and low_ok and number <= most):
        low = "0" if allow_zero else "more than 0"
        raise ValueError(f"{_shown(value)} is not a number of seconds from {low} to {most:g}")
    return number


def rounds(value: object) -> int:
    """A round cap: a whole number from 1 to MAX_ROUNDS."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ROUNDS:
        raise ValueError(f"{_shown(value)} is not a whole number of rounds from 1 to "
                         f"{MAX_ROUNDS}")
    return value


def _number(value: object) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{_shown(value)} is not a number of seconds")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise ValueError(f"{_shown(value)} is not a number of seconds")


def _shown(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else repr(value.strip())
    return text if len(text) <= 40 else text[:37] + "..."
