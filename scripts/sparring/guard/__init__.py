"""The file-modification guard: did a Codex turn change the user's files?

`take` records the tree before a turn, `compare` lists what differs after it, `revert` puts
back what can be put back, and never destroys anything. How it works (what counts as a
change, what git vouches for, copies, areas, revert, submodules and git's own folder):
docs/guard.md. One module per part: files, copies, gitlist, model, records, baseline,
snapshot, early and check (compare), undo (revert); git.py is its one door to git.
"""

from __future__ import annotations

from sparring.guard.baseline import FORMAT, KIND, Baseline
from sparring.guard.check import compare
from sparring.guard.copies import COPY_LIMITS, MIB
from sparring.guard.early import start_early
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
from sparring.guard.records import AreaRecord, BaselineRecord, ChangeRecord, TurnGuard, Violation
from sparring.guard.snapshot import RACY_MARGIN_NS, take
from sparring.guard.undo import revert

__all__ = [
    "AREA_ORIGINS", "CHANGES_KIND", "COPY_LIMITS", "FORMAT", "KIND", "MIB", "RACY_MARGIN_NS",
    "Area", "AreaRecord", "Baseline", "BaselineRecord", "Change", "ChangeRecord", "Entry",
    "RevertResult", "TurnGuard", "Violation", "compare", "load_changes", "revert",
    "save_changes", "start_early", "take",
]
