"""The guard around one Codex turn: what the runner snapshots and checks, and what it tells
Claude when files changed.

Before codex runs, the runner snapshots the project (the guard package), reusing the previous turn's
hashes for files that did not move and keeping copies in one store per project
(`.sparring/guard-store/`, content-addressed). It keeps that baseline in memory for the
check: the copy on disk is for `guard revert`, and Codex could write it meanwhile.

sparring's own records are guarded too. A turn must not write into `.sparring/`: what it
adds or changes there is watched like the tree. The records sparring itself writes during a
turn (session.json: `seal`, `stop` and `wait` write it while Codex works; the seal; the
turn's own guard files) cannot be watched that way, nor by a digest kept beside them, which
Codex could rewrite with them. Each is witnessed instead (store/witness.py): its copy is
kept out of Codex's reach, and while the turn is watched a record that differs from its
copy is put back from it by whoever reads it first; the check lists every record put back
since the turn began as a change, so the turn is a violation. After codex ends (and
everything it left running is gone), the check's findings are saved with the stat data
they saw (`guard-changes.json`), so `sparring guard revert --session` can undo exactly
those.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
import traceback
from pathlib import Path
from typing import Any, NamedTuple

from sparring import process
from sparring.errors import SparringError, violation_hint
from sparring.guard import copies
from sparring.guard.baseline import Baseline
from sparring.guard.check import compare
from sparring.guard.model import Area, Change, save_changes
from sparring.guard.records import TurnGuard, Violation
from sparring.guard.snapshot import take
from sparring.store import sessions, witness, workspace
from sparring.store.locate import BASELINE_FILE, CHANGES_FILE, EVENTS_FILE, STDERR_FILE
from sparring.store.sessions import SEALED_FILE, Session
from sparring.store.workspace import STATE_DIR

STORE = "guard-store"
# What sparring itself writes in a session's folder while Codex works: its records (checked
# against their witness instead), locks, the runner's log, the inbox files `seal` takes,
# and a record someone else wrote, set aside (`*.foreign-*`: listed by the witness). What
# the turn's codex prints is written outside the project (store/locate.outputs_folder).
_RUNTIME = ("session.json", "session.json.*", ".session.json.*", "*.lock", "inputs",
            SEALED_FILE, "*.foreign-*")
_TURN_RUNTIME = ("runner.log", "guard-*")


class Watch(NamedTuple):
    """What the runner keeps across a turn: the watch over sparring's records (its name, and
    when it began) and the baseline it took of the tree (checked from memory, never read
    back from disk; None when the snapshot failed)."""

    root: Path
    name: str
    since: float
    path: Path
    baseline: Baseline | None


def store_dir(root: Path) -> Path:
    return workspace.state_dir(root, create=True) / STORE


def snapshot(session: Session, n: int) -> Watch | None:
    """Begin watching sparring's records, then snapshot the tree, before codex runs. A guard
    that cannot run must not block the turn (the turn's guard then says it was not
    checked)."""
    data = session.load()
    root = Path(data["root"])
    name = f"{session.id}.{n}"
    try:
        since = _watch_records(root, name)
    except Exception:  # reported as an unchecked guard, with the reason in the log
        traceback.print_exc()
        return None
    path = Path(session.turn_path(n, BASELINE_FILE))
    try:
        store = store_dir(root)
        with witness.locked(root, STORE):  # prune_store never takes a copy this one uses
            base = take(root, exclude=_claude_writes(root, data), store=store,
                              previous=_previous(session, data, n),
                              areas=own_state(root, session, n))
            base.save(path, witness=True)
    except Exception:
        traceback.print_exc()
        return Watch(root, name, since, path, None)
    return Watch(root, name, since, path, base)


def _watch_records(root: Path, name: str) -> float:
    """From now until the check, a change to sparring's records is this turn's violation.
    What changed since the last turn ended is the user's own (adopted), unless another turn
    of the project is being watched, or was until its runner died unchecked (then it may be
    that turn's Codex: put back)."""
    with witness.locked(root):
        watches = witness.watches(root)
        if watches:
            witness.audit(root)  # a stale watch is dropped only once its records were checked
        else:
            witness.adopt(root)
        for other, owner in watches.items():
            if not process.is_alive(process.Identity.from_dict(_owner(owner))):
                witness.unwatch(root, other)
        witness.watch(root, name, json.dumps(process.identity_of(os.getpid()).to_dict()))
        return time.time()


def release(watch: Watch | None) -> None:
    """End a watch no check will end: codex never started (a stop came first), or its turn's
    end will not be recorded. Its records are audited all the same (_end)."""
    if watch is None:
        return
    try:
        _end(watch)
    except Exception:  # the watch stands: the next snapshot audits again
        traceback.print_exc()


def _end(watch: Watch) -> dict[str, str]:
    """End the watch once every record was checked and put back (or held): if that fails,
    the watch stands, so the next snapshot audits again rather than adopting what this turn
    left as the user's edits. What changed since the watch began: path below `.sparring/`
    -> kind."""
    with witness.locked(watch.root):
        audited = witness.audit(watch.root)
        found = witness.changed_since(watch.root, watch.since)
        for relative, kind in audited:  # named even where the log could not be written
            found.setdefault(relative, kind)
        witness.unwatch(watch.root, watch.name)
    return found


def _owner(text: str) -> dict[str, float] | None:
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _claude_writes(root: Path, data: dict[str, Any]) -> list[str]:
    """Where Claude may write while Codex works: the session's inbox. Under the root's own
    `.sparring/` the tree listing never looks anyway; an inbox in a subfolder (Claude Code
    started there) is left out explicitly."""
    if not data.get("inbox"):
        return []
    own = Path(data["inbox"]).parent  # <dir>/.sparring, self-ignoring like the root's
    try:
        relative = own.relative_to(root).as_posix()
    except ValueError:
        return []  # outside the tree the guard watches
    return [relative] if relative != STATE_DIR else []


def own_state(root: Path, session: Session, n: int) -> dict[str, Area]:
    """sparring's records a turn must not touch: `.sparring/` itself (not the inbox, the
    store, the trash or other sessions, which others write meanwhile) and this session's
    folder but for what sparring writes there during the turn."""
    try:
        mine = Path(session.path).relative_to(root).as_posix()
    except ValueError:
        return {}
    top = Area("state", tuple(f"{STATE_DIR}/{name}" for name in (
        "inbox", STORE, "guard-trash", "sessions")))
    turn = f"{mine}/turns/{n}"
    # A session made before its turns' output left the project writes it there still.
    printed = (EVENTS_FILE, STDERR_FILE) if session.outputs.startswith(session.path) else ()
    session_area = Area("state", tuple(
        [f"{mine}/{name}" for name in _RUNTIME]
        + [f"{turn}/{name}" for name in (*_TURN_RUNTIME, *printed)]))
    return {STATE_DIR: top, mine: session_area}


def _previous(session: Session, data: dict[str, Any], n: int) -> Baseline | None:
    """The latest earlier baseline of this session, whose hashes a snapshot may reuse."""
    for turn in reversed(data["turns"]):
        path = Path(session.turn_path(turn["n"], BASELINE_FILE))
        if turn["n"] < n and path.is_file():
            try:
                found = Baseline.load(path)
                found.entries  # noqa: B018 - its bulk may have been pruned: read it here
            except SparringError:
                return None
            return found
    return None


def prune_store(root: Path) -> tuple[int, int] | None:
    """Remove from the project's guard store every copy no revert can still want: (files,
    bytes) removed, or None when nothing was pruned (no store, another sparring busy with
    it, a session or baseline that cannot be read: then everything stays).

    A revert wants the copies of the turns whose changes the user has not yet accepted, and
    of the latest turn of every session that has not ended (finalize after its last turn):
    so the store holds the copies of at most the latest snapshot and one undecided turn, not
    one more version of a file per turn. Every baseline keeps its own bulk (small), so an
    older turn's revert still reads it, and says which copies are gone."""
    store = workspace.state_dir(root) / STORE
    if not store.is_dir():
        return None
    try:
        with witness.locked(root, STORE, wait=False):
            keep: set[str] = set()
            for item in sessions.all_sessions(root):
                keep |= _needed(item)
            return copies.prune(store, keep)
    except (BlockingIOError, SparringError):
        return None


def _needed(session: Session) -> set[str]:
    """What the session's baselines keep in the store that a revert may still want."""
    data = session.load()
    turns = data["turns"]
    wanted = {t["n"] for t in turns if (t.get("guard") or {}).get("changed")
              and not t["guard"].get("accepted")}
    if turns and (data.get("finalized_at") or 0) < turns[-1]["created_at"]:
        wanted.add(turns[-1]["n"])  # the session goes on: its latest turn may be undone
    found: set[str] = set()
    for turn in turns:
        path = Path(session.turn_path(turn["n"], BASELINE_FILE))
        if path.is_file():
            base = Baseline.load(path)
            found |= base.stored() if turn["n"] in wanted else base.bulk()
    return found


def check(session: Session, n: int, watch: Watch | None) -> TurnGuard:
    """The turn's `guard` record: what changed, saved with what the check saw. It ends the
    watch over sparring's records once they were all audited (_end)."""
    unchecked: TurnGuard = {"checked": False, "clean": None, "changed": [],
                                  "violation": None}
    if watch is None:
        return unchecked
    swapped = _swapped(watch.root, session, n)
    try:
        own = _own_records(session, watch)
        tree = compare(watch.baseline) if watch.baseline is not None else None
        changes = _merged(swapped, tree or [], own)
        if tree is not None and not swapped:  # nothing is written through a swapped folder
            save_changes(Path(session.turn_path(n, CHANGES_FILE)), changes)
    except Exception as exc:  # what the turn changed is unknown: the user decides (fails closed)
        traceback.print_exc()
        return {**unchecked, "violation": _unknown(session, n, exc)}
    found = [c.to_dict() for c in changes]
    said = violation(session, found,
                     held=[f"{STATE_DIR}/{relative}" for relative in witness.held(watch.root)])
    if tree is None or swapped:  # the tree's changes are not on record; what changed is
        return {**unchecked, "changed": found, "violation": said}
    return {"checked": True, "clean": not found, "changed": found, "baseline": str(watch.path),
            "violation": said}


def _merged(*lists: list[Change]) -> list[Change]:
    """One change per path (the tree's watch and the witness may both see a record), sorted."""
    found: dict[str, Change] = {}
    for change in (c for changes in lists for c in changes):
        found.setdefault(change.path, change)
    return [found[path] for path in sorted(found)]


def _own_records(session: Session, watch: Watch) -> list[Change]:
    """sparring's records (of every session of the project) that someone else wrote while
    the turn was watched: each was put back from its witness, by this check or by whichever
    verb read it first. And a seal no `seal` wrote (or, for a session sealed before
    witnesses, one whose digest is not the recorded one). Ends the watch (_end)."""
    data = session.load()  # session.json as sparring wrote it, put back if need be
    found = _end(watch)
    seal = (data.get("engine") or {}).get("seal")
    sealed = Path(session.path, SEALED_FILE)
    relative = f"sessions/{session.id}/{SEALED_FILE}"
    if seal is None and sealed.exists():
        found.setdefault(relative, "added")
    elif seal is not None and _digest(sealed) != seal.get("sha256"):
        found.setdefault(relative, "modified")
    return [Change(f"{STATE_DIR}/{path}", kind, "state", None)
            for path, kind in sorted(found.items())]


def _swapped(root: Path, session: Session, n: int) -> list[Change]:
    """The folders the runner writes this turn's records in, from `.sparring/` down to the
    turn's: each one swapped during the turn (for a link, or anything but a folder) is a
    change of the turn, and the runner writes nothing through it."""
    try:
        turn = Path(session.turn_dir(n)).relative_to(root).parts
    except ValueError:
        return []
    found = []
    for depth in range(1, len(turn) + 1):
        relative = "/".join(turn[:depth])
        try:
            kind = None if stat.S_ISDIR(os.lstat(root / relative).st_mode) else "modified"
        except OSError:
            kind = "deleted"
        if kind is not None:
            found.append(Change(relative, kind, "state", None))
            break  # what lies below it is no longer sparring's
    return found


def _digest(path: Path) -> str | None:
    data = witness.read(path)
    return None if data is None else hashlib.sha256(data).hexdigest()


def _unknown(session: Session, n: int, exc: Exception) -> Violation:
    """The violation of a turn whose check failed: Codex may have made it fail. It lists no
    changed file; its hint names the turn's baseline (errors.guard_hint)."""
    return {"code": "guard_violation",
            # The error's name alone: its words may hold a path Codex chose.
            "message": f"the guard could not check codex's turn ({type(exc).__name__}): what "
                       "it changed is unknown",
            "hint": violation_hint(session.id,
                                   unchecked=session.turn_path(n, BASELINE_FILE))}


def violation(session: Session, changes: list[dict[str, str]],
              held: list[str] | None = None) -> Violation | None:
    """The violation of a turn that changed files. `held`: records of sparring's that could
    not be put back (named, so the user knows what keeps every turn a violation)."""
    if not changes:
        return None
    listed = ", ".join(f"{c['path']} ({c['change']})" for c in changes[:10])
    more = f" and {len(changes) - 10} more" if len(changes) > 10 else ""
    stuck = sorted({c["path"] for c in changes} & set(held or ()))
    left = (f"; not put back, so every turn names them until their folder is put right (made "
            f"writable again, or a link there moved away): {', '.join(stuck[:10])}"
            if stuck else "")
    return {"code": "guard_violation",
            "message": f"files changed during codex's turn: {listed}{more}{left}",
            "hint": violation_hint(session.id)}  # the record's; printed rebuilt (guard_said)
