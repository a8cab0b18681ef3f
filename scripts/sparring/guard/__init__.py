"""The file-modification guard: did a Codex turn change the user's files?

`take` records the tree before a turn, `compare` lists what differs after it, `revert` puts
back what can be put back, and never destroys anything. How it works (what counts as a
change, what git vouches for, copies, areas, revert, submodules and git's own folder):
docs/guard.md. One module per part: files, copies, gitlist, model, records, baseline,
snapshot and check (compare), undo (revert); git.py runs every git command it needs.

Each name below loads its module when first used: `sparring guard check` never loads the
snapshot or the revert at all.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparring.guard.baseline import FORMAT, KIND, Baseline
    from sparring.guard.check import compare
    from sparring.guard.copies import COPY_LIMITS, MIB
    from sparring.guard.model import (
        AREA_ORIGINS,
        CHANGES_KIND,
        Area,
        Change,
        Entry,
        RevertResult,
        load_changes,
        save_changes,
    )
    from sparring.guard.records import (
        AreaRecord,
        BaselineRecord,
        ChangeRecord,
        TurnGuard,
        Violation,
    )
    from sparring.guard.snapshot import (
        RACY_MARGIN_NS,
        finish_early_snapshot,
        start_early_snapshot,
        take,
    )
    from sparring.guard.undo import revert

_HOMES = {
    "baseline": ("FORMAT", "KIND", "Baseline"),
    "check": ("compare",),
    "copies": ("COPY_LIMITS", "MIB"),
    "model": ("AREA_ORIGINS", "CHANGES_KIND", "Area", "Change", "Entry", "RevertResult",
              "load_changes", "save_changes"),
    "records": ("AreaRecord", "BaselineRecord", "ChangeRecord", "TurnGuard", "Violation"),
    "snapshot": ("RACY_MARGIN_NS", "finish_early_snapshot", "start_early_snapshot", "take"),
    "undo": ("revert",),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "AREA_ORIGINS",
    "CHANGES_KIND",
    "COPY_LIMITS",
    "FORMAT",
    "KIND",
    "MIB",
    "RACY_MARGIN_NS",
    "Area",
    "AreaRecord",
    "Baseline",
    "BaselineRecord",
    "Change",
    "ChangeRecord",
    "Entry",
    "RevertResult",
    "TurnGuard",
    "Violation",
    "compare",
    "finish_early_snapshot",
    "load_changes",
    "revert",
    "save_changes",
    "start_early_snapshot",
    "take",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    full = f"{__name__}.{module}"
    __import__(full)  # the import statement's way: `python -X importtime` shows it
    value = getattr(sys.modules[full], name)
    globals()[name] = value  # found once
    return value
