"""The background runner: one small process per turn that owns codex.

`start`/`resume` launch it and return; it launches codex, enforces the
wall-clock timeout and the stall limit even when nobody polls, and records
how the turn ended. It is Codex's parent, so it alone sees the real exit
code. If it is killed, `poll` still tells the truth from what is on disk.
"""

from __future__ import annotations

import signal
import sys
import time
import traceback
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from sparring import process, states, templates
from sparring.codex import network
from sparring.config import OFFLINE_AFTER, TurnSettings
from sparring.records import TurnRecord
from sparring.store.session import Session, find_turn
from sparring.turn import budget
from sparring.turn import guard as turnguard
from sparring.turn import record as turns

if TYPE_CHECKING:
    from subprocess import Popen

POLL_INTERVAL = 0.1
_terminated = False


def launch(session: Session, n: int) -> process.Identity:
    """Start the runner for turn `n` in its own session; output goes to the turn's log."""
    package_parent = str(Path(__file__).resolve().parents[2])
    bootstrap = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from sparring.turn.runner import main; sys.exit(main(sys.argv[2:]))"
    )
    log = session.turn_file(n, turns.RUNNER_LOG)
    child = process.spawn_background(
        [sys.executable, "-c", bootstrap, package_parent, str(session.dir), str(n)],
        cwd=session.dir, stdin=None, stdout=log, stderr=log,
    )
    return process.identity_of(child.pid)


def main(argv: list[str]) -> int:
    session, n = Session(Path(argv[0])), int(argv[1])
    signal.signal(signal.SIGTERM, _on_term)
    process.become_subreaper()  # what detaches from codex is adopted here, and ended
    try:
        run_turn(session, n)
    except Exception:
        traceback.print_exc()
        return 1
    return 0


def _on_term(signum: int, frame: FrameType | None) -> None:
    global _terminated
    _terminated = True


def run_turn(session: Session, n: int) -> None:
    next_turn: int | None = n
    while next_turn is not None:
        next_turn = _run_one(session, next_turn)


def _run_one(session: Session, n: int) -> int | None:
    """Run turn `n` to its end; returns the re-ask turn it queued, if any."""
    baseline = turnguard.snapshot(session, n)
    proc = _spawn_codex(session, n)
    if proc is None:
        return None
    turn = find_turn(session.load(), n)
    identity = process.Identity.from_dict(turn["codex"])
    end_reason = _watch(session, turn, proc, identity)
    if end_reason is None:
        process.sweep_group(proc.pid)  # what codex left behind in its group
    # Then whatever left the group too (setsid, double fork): nothing of the turn outlives it,
    # and nothing writes to the tree after the guard's check below.
    process.end_descendants(keep=proc.pid)
    exit_code = proc.wait()
    queued: list[int] = []
    turns.record_end(session, n, exit_code=exit_code, end_reason=end_reason,
                     guard=turnguard.check(session, n, baseline),
                     follow_up=lambda data, ended: _queue_reask(session, data, ended, queued))
    return queued[0] if queued else None


def _queue_reask(session: Session, data: dict[str, Any], ended: TurnRecord,
                 queued: list[int]) -> None:
    """An answer that breaks its schema gets one re-ask on the same thread."""
    error = ended.get("error") or {}
    if error.get("code") != "invalid_answer" or ended["purpose"] == "reask":
        return
    if (ended.get("guard") or {}).get("violation"):
        # Files changed: the loop stops for the user; it does not ask again.
        error["hint"] = "files changed during the turn (see guard): no re-ask; the user decides"
        return
    spent = budget.reached(data)
    if spent is not None:  # no further turn starts, a re-ask neither: the round has failed
        data[budget.STOP_KEY] = spent
        error["hint"] = (f"the token budget is spent ({spent['used']:,} of {spent['budget']:,} "
                         "tokens): no re-ask; report what you have")
        return
    problems = "\n".join(f"- {p}" for p in error.get("problems", []))
    settings = TurnSettings(**ended["settings"])
    turn = turns.new_turn(
        session, data, round_no=ended["round"], purpose="reask", settings=settings,
        prompt=templates.render("reask", {"PROBLEMS": problems}).encode(),
        argv=turns.codex_argv(ended["argv"][0], data, settings, thread_id=data["thread_id"],
                              schema=ended["schema"]),
        thread_id=data["thread_id"],
        schema=ended["schema"], go_on=ended.get("go_on"))
    turn["runner"] = ended["runner"]  # this same runner carries on with it
    queued.append(turn["n"])


def _spawn_codex(session: Session, n: int) -> Popen[bytes] | None:
    # Checked and recorded under the lock, so a concurrent `stop` either sees
    # codex's identity and kills it, or leaves the flag that stops us here.
    with session.update() as data:
        turn = find_turn(data, n)
        if turn["status"] != states.STARTING:
            return None
        if turn["stop_requested"]:
            states.move(turn, states.STOPPED, ended_at=time.time(), end_reason="stopped",
                        error=turns.stopped_error())
            return None
        try:
            proc = process.spawn_background(
                turn["argv"], cwd=Path(data["cwd"]),
                stdin=session.turn_file(n, turns.PROMPT),
                stdout=session.turn_file(n, turns.EVENTS),
                stderr=session.turn_file(n, turns.STDERR),
                die_with_parent=True,  # codex never runs on without a runner enforcing limits
            )
        except OSError as exc:
            states.move(turn, states.FAILED, ended_at=time.time(),
                        error=turns.spawn_error(turn["argv"][0], exc))
            return None
        states.move(turn, states.RUNNING, started_at=time.time(),
                    codex=process.identity_of(proc.pid).to_dict())
        return proc


def _watch(session: Session, turn: TurnRecord, proc: Popen[bytes],
           identity: process.Identity | None) -> str | None:
    """Wait for codex to exit; end it when a limit passes or we are told to stop."""
    offline = network.OfflineWatch(session.turn_file(turn["n"], turns.EVENTS),
                                   turn["settings"].get("offline_after", OFFLINE_AFTER))
    while not process.has_exited(proc):
        now = time.time()
        reason = "stopped" if _terminated else (
            turns.deadline_passed(session, turn, now) or ("offline" if offline.passed(now)
                                                          else None))
        if reason:
            process.stop_tree(identity)
            return reason
        time.sleep(POLL_INTERVAL)
    return None

