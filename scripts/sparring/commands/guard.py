"""`sparring guard snapshot|check|revert|accept`: the file-modification guard from the command
line, standalone (a baseline file) or for a session's turn.

The method lives in `sparring.guard` (and `sparring.turn.watch` for turns); these verbs only
choose the root, where the baseline and its copies go, and shape the JSON.
"""

from __future__ import annotations

import contextlib
import glob
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparring import guard, paths
from sparring.errors import Hint, SparringError
from sparring.guard.git import git_dir
from sparring.store import locate, workspace

if TYPE_CHECKING:
    from sparring.store.sessions import Session


# A baseline lists every file of the tree: far more than a text handed in, still bounded.
BASELINE_LIMIT = 1 << 30


def baseline_file(path: Path) -> Path:
    """A baseline named by --baseline: a regular file inside the project, reached without a
    link (paths.check_file), checked before anything reads it or starts git for it."""
    return paths.check_file(path, workspace.find_root(Path.cwd()), "--baseline",
                            BASELINE_LIMIT).path


def project_baseline(path: Path, root: Path) -> guard.Baseline:
    """The baseline at `path`, when it is one of this project's. The file says which tree it
    watches, where its copies are and which git folder to run git in; a baseline sparring
    did not write (handed into the inbox, committed in a clone) could name any of them
    elsewhere, and `check` would read there, `revert` move files away there, and git run
    with the configuration of a folder someone planted."""
    base = guard.Baseline.load(path)
    real = os.path.realpath(root)
    if os.path.realpath(base.root) != real:
        why = f"watches {base.root}, not this project ({real})"
    elif base.store is not None and not _within(os.path.abspath(base.store), real):
        why = f"keeps its copies in {base.store}, outside the project"
    elif not (os.path.realpath(base.gitdir) == os.path.realpath(git_dir(Path(real)))
              or _within(os.path.abspath(base.gitdir), os.path.join(real, ".git"))):
        why = f"runs git in {base.gitdir}, which is not this project's git folder"
    else:
        return base
    raise SparringError(
        "state_corrupt", f"the guard baseline {path} {why}",
        "the file was left untouched; take a new one with `sparring guard snapshot`",
        path=str(path))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def snapshot(cwd: Path, out: Path) -> dict[str, Any]:
    """Record the tree at `cwd`'s root into `out`; copies of dirty tracked files go beside it.

    The baseline and its store are excluded from the snapshot, so writing
    them inside the project is not reported as a change. Both must be inside the project,
    reached without a link, and somewhere sparring writes (paths.check_output). One in
    `.sparring/` (the inbox) is one of sparring's records, its copy kept out of Codex's
    reach: only such a baseline has revert touch git's folder or a protected file.
    """
    root = workspace.find_root(cwd)
    project = workspace.find_root(Path.cwd())
    out = paths.check_output(out, project, "--out").path
    store = out.with_name(out.name + ".store")
    paths.folder(store, project, "--out's copies", create=True)
    exclude = [rel for rel in (_relative(out, root), _relative(store, root)) if rel]
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        baseline = guard.take(root, exclude, store, previous=_earlier(out))
        baseline.save(out, witness=True)  # in .sparring/: trusted by revert (Baseline.load)
    except OSError as exc:
        raise SparringError(
            "not_writable", f"cannot write the baseline {out}: {exc.strerror or exc}",
            "pass an --out path in a directory you can write to", path=str(out),
        ) from exc
    return {"baseline": str(out), "store": str(store), "root": str(root), "mode": baseline.mode,
            "watched": len(baseline.entries), "tracked": len(baseline.index)}


def _earlier(out: Path) -> guard.Baseline | None:
    """A baseline already at --out: its hashes spare reading files that did not move."""
    if not out.is_file():
        return None
    try:
        return guard.Baseline.load(out)
    except SparringError:
        return None


def check(baseline: Path) -> dict[str, Any]:
    base = project_baseline(baseline_file(baseline), workspace.find_root(Path.cwd()))
    changes = guard.compare(base)
    return {"clean": not changes, "changed": [c.to_dict() for c in changes],
            "root": str(base.root), "mode": base.mode}


def revert(baseline: Path) -> dict[str, Any]:
    return guard.revert(project_baseline(baseline_file(baseline),
                                         workspace.find_root(Path.cwd()))).to_dict()


def revert_turn(ref: str, cwd: Path, n: int | None) -> dict[str, Any]:
    """Undo exactly what the guard recorded for one turn (default: the latest that changed
    files), never a file the runner wrote; the turn records what was undone. A turn whose
    check did not run to its end recorded nothing: what changed since its snapshot is undone
    (the user's own edits since included, as its violation's hint says)."""
    # here, not at the top: `guard check` (each turn's end) must not load a turn's machinery
    # (bench/guard_bench.py: within 2x of git status)
    from sparring.store import sessions
    from sparring.store.sessions import find_turn
    from sparring.turn import lifecycle

    session = sessions.resolve(ref, cwd)
    data, _ = lifecycle.require_idle(session, session.load())
    turn = _turn_with_changes(session, data, n)
    base = project_baseline(Path(session.turn_path(turn["n"], locate.BASELINE_FILE)),
                            Path(data["root"]))
    changes = _recorded(session, turn) if turn["guard"].get("checked") else None
    result = guard.revert(base, changes, protected=_runner_wrote(base.root, data))
    with session.update() as locked:
        record = find_turn(locked, turn["n"])["guard"]
        record["reverted"] = [*record.get("reverted", []), {
            "at": time.time(), "reverted": [r["path"] for r in result.reverted],
            "not_reverted": [r["path"] for r in result.not_reverted], "trash": result.trash}]
    shown = result.to_dict()
    return {"session": session.id, "turn": turn["n"], "round": turn["round"], **shown,
            "next": Hint(f"`sparring guard accept {session.id}` once the user has decided: "
                         "it prints the next step")}


def accept(ref: str, cwd: Path) -> dict[str, Any]:
    """The user has seen the changed files and goes on (whether they were undone or kept):
    the one way past a violation, the same in every workflow."""
    from sparring.store import sessions  # as revert_turn's, for guard check
    from sparring.turn.launch import unaccepted_violations
    from sparring.workflows import registry

    session = sessions.resolve(ref, cwd)
    with session.update() as data:
        found = unaccepted_violations(data)
        for turn in found:
            turn["guard"]["accepted"] = True
            turn["guard"]["accepted_at"] = time.time()
    accepted = [{"turn": t["n"], "round": t["round"], "changed": t["guard"]["changed"]}
                for t in found]
    return {"session": session.id, "accepted": accepted,
            "next": Hint(registry.go_on(session, data) if accepted
                         else "nothing to accept: go on")}


def _recorded(session: Session, turn: dict[str, Any]) -> list[guard.Change]:
    """What the turn's check saw. Only a check that ran to its end wrote it: for any other
    turn, what stands there was put there by someone else (Codex, in that very turn), and
    revert_turn undoes what changed since the turn's snapshot instead."""
    recorded = Path(session.turn_path(turn["n"], locate.CHANGES_FILE))
    if not recorded.is_file():
        raise SparringError("file_not_found", f"turn {turn['n']} was checked by an older "
                            "sparring, which kept no record of what it saw",
                            "`sparring guard revert --baseline "
                            f"{session.turn_path(turn['n'], locate.BASELINE_FILE)}` undoes what "
                            "changed since that turn's snapshot", path=str(recorded))
    return guard.load_changes(recorded)


def _turn_with_changes(session: Session, data: dict[str, Any],
                       n: int | None) -> dict[str, Any]:
    turns: list[dict[str, Any]] = [  # a turn whose check failed lists none (violation)
        t for t in data["turns"]
        if (t.get("guard") or {}).get("changed") or (t.get("guard") or {}).get("violation")]
    chosen = [t for t in turns if n is None or t["n"] == n]
    if not chosen:
        what = (f"turn {n} of session {session.id} changed no file" if n is not None
                else f"no turn of session {session.id} changed a file")
        raise SparringError("invalid_transition", f"nothing to revert: {what}",
                            f"`sparring status {session.id}` lists the turns; --turn picks "
                            "one whose guard found changes")
    return chosen[-1]


def _runner_wrote(root: Path, data: dict[str, Any]) -> dict[str, str | None]:
    """Files sparring's runner wrote (Codex's round files, stand-ins, reports), each with the
    digest of what it wrote (None: not recorded, by an older sparring): a revert never
    touches one that still holds that, whatever a check recorded."""
    written: dict[str, str | None] = {}
    for turn in data["turns"]:
        if turn.get("answer_sha256") and not turn.get("answer_file_kept"):
            written[turn["answer_file"]] = turn["answer_sha256"]
    digests: dict[str, str] = data.get("report_sha256", {})
    written.update({path: digests.get(path) for path in data.get("reports", [])})
    written.update(digests)
    if data.get("debate"):
        folder = Path(data["debate"]["dir"])
        written.update({str(folder / name): digest
                        for name, digest in data["debate"].get("written", {}).items()})
    found = {}
    for path, digest in written.items():
        with contextlib.suppress(ValueError):
            found[Path(path).resolve().relative_to(root).as_posix()] = digest
    return found


def _relative(path: Path, root: Path) -> str | None:
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        return None
    return glob.escape(relative)  # exclude entries are globs: a "[" in the name is literal
