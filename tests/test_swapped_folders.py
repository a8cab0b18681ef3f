"""The runner never writes through a folder of `.sparring/` that a workspace-write Codex
swapped for a link during its turn (issue 34): `.sparring` itself, the session's folder, the
turn's. What lies outside stays as it was, the swap is named (as the turn's violation, or as
a clear error naming where it leads when the session's own record lies behind it), and
the user's moved folder is still there to be put back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from sparring.store import witness
from test_witness import forge


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("swapped", ["sparring", "session", "turn"])
def test_a_folder_codex_swapped_for_a_link_is_never_written_through(
        swapped: str, sparring: Any, session: str, fake_codex: Any, repo: Path,
        tmp_path: Path) -> None:
    outside, moved = tmp_path / "outside", tmp_path / "moved"
    state = repo / ".sparring"
    relative = {"sparring": ".sparring", "session": f".sparring/sessions/{session}",
                "turn": f".sparring/sessions/{session}/turns/1"}[swapped]
    place = repo / relative
    done = tmp_path / "swapped"
    # A copy of the folder outside (so the runner would find all it expects there), the
    # folder moved away, and a link to the copy in its place; a moment later, Codex ends.
    fake_codex.mode("shell", shell=forge(tmp_path, f"""
import shutil
wait_for({str(tmp_path / 'go')!r})  # once `start` has returned
shutil.copytree({str(place)!r}, {str(outside)!r}, symlinks=True)
os.rename({str(place)!r}, {str(moved)!r})
os.symlink({str(outside)!r}, {str(place)!r})
Path({str(done)!r}).write_text('x')
"""))
    assert sparring("start", session, input=b"q").exit_code == 0
    (tmp_path / "go").touch()
    deadline = time.monotonic() + 20
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    copied = _files(outside)
    time.sleep(0.5)  # the runner's check and record, if it were to write through the link

    waited = sparring("wait", session, "--timeout", "30")
    for argv in (("poll", session), ("status", session), ("status",)):
        sparring(*argv)

    assert _files(outside) == copied, "something was written through the link"
    assert moved.is_dir() and place.is_symlink()  # what Codex did is left for the user
    if swapped == "turn":  # the session's record is sparring's still: the turn names it
        changed = waited.out["guard"]["changed"]
        assert changed[0] == {"path": relative, "change": "modified"}, changed  # named first
        assert waited.out["guard"]["checked"] is False  # no record written through it
        assert not witness.watched(repo), "the check ended the watch over the records"
        assert waited.out["guard"]["violation"]["code"] == "guard_violation"
    else:  # the session's record lies behind the link: the session is refused, by name
        assert waited.error_code in ("path_outside_project", "path_is_link"), waited.raw
        assert waited.out["error"]["path"].startswith(str(outside)), waited.raw
    assert state.exists()


def test_another_sessions_folder_swapped_for_a_link_is_not_written_through_by_the_audit(
        sparring: Any, session: str, fake_codex: Any, repo: Path, tmp_path: Path) -> None:
    """At the turn's check the runner audits every record it witnessed, and puts back the
    ones that changed: another session's record, behind its folder swapped for a link to a
    folder of the user's, was renamed aside there and sparring's written in its place."""
    other = sparring("init", "--skill", "deep-discussion").out["session"]
    outside, moved = tmp_path / "outside", tmp_path / "moved"
    outside.mkdir()
    (outside / "session.json").write_text("the user's own file\n")
    place = repo / ".sparring" / "sessions" / other
    done = tmp_path / "swapped"
    fake_codex.mode("shell", shell=forge(tmp_path, f"""
wait_for({str(tmp_path / 'go')!r})  # once `start` has returned
os.rename({str(place)!r}, {str(moved)!r})
os.symlink({str(outside)!r}, {str(place)!r})
Path({str(done)!r}).write_text('x')
"""))
    assert sparring("start", session, input=b"q").exit_code == 0
    (tmp_path / "go").touch()
    waited = sparring("wait", session, "--timeout", "30")
    assert done.exists(), waited.raw
    assert _files(outside) == {"session.json": b"the user's own file\n"}
    changed = [c["path"] for c in waited.out["guard"]["changed"]]
    assert f".sparring/sessions/{other}/session.json" in changed, changed


SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
# How a runner opens its log (spawn.background).
OPENS = {
    "anew": "from sparring.turn import launch; launch._spawn_runner(session, 1)",
    # The keeper, as it begins a turn, makes the watchdog's log where the watchdog will
    # write it.
    "keeper": "from sparring import process; from sparring.turn import keeper, watchdog; "
              "keeper.Keeper(session, process.identity_of(os.getpid()), 'm', "
              "session.turn_path(1, watchdog.LOG))",
}
LOGS = {"anew": "runner.log", "keeper": "watchdog.log"}


@pytest.mark.parametrize("planted", ["link", "fifo", "hardlink"])
@pytest.mark.parametrize("way", sorted(OPENS))
def test_a_runners_log_is_never_opened_through_a_swapped_folder_nor_on_a_fifo(
        way: str, planted: str, session: str, repo: Path, tmp_path: Path) -> None:
    """Another session's Codex, running meanwhile, may swap this session's new turn folder
    for a link between `start` making it and the runner opening its log there, or plant a
    FIFO, or a hard link to a file outside, where the log goes. The runner's log and the
    watchdog's were opened with O_NOFOLLOW on their name alone: they were written through
    the link, outside the project, and a FIFO made the open wait for a reader for good. Now
    none of it happens: the open fails at once, and nothing outside is touched."""
    import os
    import subprocess
    import sys

    folder = repo / ".sparring" / "sessions" / session / "turns" / "1"
    outside = tmp_path / "outside"
    outside.mkdir()
    kept = outside / "kept"
    if planted == "link":
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.symlink_to(outside)
    elif planted == "fifo":
        folder.mkdir(parents=True)
        os.mkfifo(folder / LOGS[way])
    else:
        folder.mkdir(parents=True)
        kept.write_bytes(b"the user's own\n")
        os.link(kept, folder / LOGS[way])
    code = (f"import os, sys; sys.path.insert(0, {str(SCRIPTS)!r}); "
            "from sparring.store.sessions import Session; "
            f"session = Session({str(folder.parent.parent)!r}); " + OPENS[way])
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                          timeout=30, cwd=repo)
    assert done.returncode != 0, done.stdout
    said = {("anew", "link"): "is a link or no folder", ("keeper", "link"): "FolderSwapped"}
    assert said.get((way, planted), "OSError") in done.stderr, done.stderr
    assert _files(outside) == ({"kept": b"the user's own\n"} if planted == "hardlink" else {})


def test_a_record_behind_a_swapped_folder_is_never_taken_for_sparrings(
        sparring: Any, session: str, fake_codex: Any, repo: Path, scratch: Path,
        tmp_path: Path) -> None:
    """Between turns, sparring takes its records as they stand for the user's own edits
    (adopted). It read them through a folder swapped for a link too: a Codex that swapped the
    inbox for a folder of its own, holding the user's baseline with a hook added, had that
    forgery adopted once the user accepted the turn; its next turn put a real folder back
    with the forgery in it, now sparring's to trust, and a revert from the user's baseline
    wrote the hook. A record behind a swapped folder is now never adopted: the next turn's
    check puts the user's baseline back, and a revert from it writes no hook."""
    import hashlib
    import json

    hook = b"#!/bin/sh\ntouch PWNED\n"
    base = scratch / "base.json"
    assert sparring("guard", "snapshot", "--out", str(base)).exit_code == 0  # the user's own
    own = base.read_bytes()
    outside, moved = tmp_path / "outside", tmp_path / "moved"
    digest = hashlib.sha256(hook).hexdigest()
    swap = forge(tmp_path, f"""
import shutil
inbox, outside, moved = Path({str(scratch)!r}), Path({str(outside)!r}), Path({str(moved)!r})
shutil.copytree(inbox, outside, symlinks=True)
data = json.loads((outside / 'base.json').read_text())
data['area_entries']['.git/hooks/pre-commit'] = ['gitdir', [0o100755, 20, 1, 1, 1],
                                                 {digest!r}, None, 1, None]
(outside / 'base.json').write_text(json.dumps(data))
(outside / 'base.json.store' / {digest!r}).write_bytes({hook!r})
os.rename(inbox, moved)
os.symlink(outside, inbox)
""")
    back = forge(tmp_path, f"""
import shutil
os.unlink({str(scratch)!r})
shutil.copytree({str(outside)!r}, {str(scratch)!r}, symlinks=True)
""")
    fake_codex.script([{"reply": "one", "mode": "shell", "shell": swap},
                       {"reply": "two", "mode": "shell", "shell": back}])
    assert sparring("start", session, input=b"q").exit_code == 0
    first = sparring("wait", session).out
    assert ".sparring/inbox" in json.dumps(first["guard"]), first["guard"]
    assert sparring("guard", "accept", session).exit_code == 0
    assert sparring("resume", session, input=b"q").exit_code == 0
    second = sparring("wait", session).out
    assert ".sparring/inbox/base.json" in {c["path"] for c in second["guard"].get("changed", [])}, (
        second["guard"])
    assert base.read_bytes() == own
    reverted = sparring("guard", "revert", "--baseline", str(base)).out
    assert ".git/hooks/pre-commit" not in json.dumps(reverted), reverted
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
