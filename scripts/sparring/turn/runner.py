"""The background runner: one small process per turn that owns codex.

`start`/`resume` write the turn, launch its runner (a new isolated interpreter: `python -I
-c`, this module's main) and return; it takes the guard's snapshot, launches codex,
enforces the wall-clock timeout and the stall limit even when nobody polls, ends every
process of the turn when the turn ends (turn/keeper.py), and records how the turn ended.
It is Codex's parent, so it alone sees the real exit code. If it is killed, its watchdog
ends the turn's processes and `poll` still tells the truth from what is on disk.
"""

from __future__ import annotations

import os
import signal
import time
import traceback
from pathlib import Path
from types import FrameType
from typing import Any

from sparring import claude, process, states, templates
from sparring.codex import network, sandbox
from sparring.config import OFFLINE_AFTER, TurnSettings
from sparring.errors import SparringError
from sparring.process import spawn
from sparring.records import TurnRecord
from sparring.store import runs
from sparring.store.sessions import Session, find_turn
from sparring.turn import budget, turns, watch, watchdog
from sparring.turn.keeper import Keeper

POLL_INTERVAL = 0.1
# The runner records the turn's processes it sees every this many polls (half a second).
_RECORD_EVERY = 5


def main(argv: list[str]) -> int:
    """Run turn argv[1] of the session in folder argv[0] (and the re-asks it queues)."""
    session, n = Session(Path(argv[0])), int(argv[1])
    stop = Stop()
    signal.signal(signal.SIGTERM, stop.ask)
    process.adopt_orphans()  # what detaches from codex is adopted here (Linux), and ended
    me = process.identity_of(os.getpid())
    run = _claim(session, n, me)
    if run is None:
        print(f"the runner's record is not about turn {n}: a newer turn took over")
        return 1
    keeper = Keeper(session, me, run.mark, session.turn_path(n, watchdog.LOG))
    try:
        run_turn(session, n, keeper, stop)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        keeper.close()
    return 0


def _claim(session: Session, n: int, me: process.Identity) -> runs.Run | None:
    with runs.change(session.path) as run:
        if run.get("turn") != n:
            return None
        run["runner"] = me.to_dict()
    return runs.read(session.path)


class Stop:
    """Whether SIGTERM asked this runner to stop (`stop` and a runner's own end send it):
    set by the signal handler, read where codex starts and while it runs."""
    def __init__(self) -> None:
        self.asked = False

    def ask(self, signum: int, frame: FrameType | None) -> None:
        self.asked = True


def run_turn(session: Session, n: int, keeper: Keeper, stop: Stop) -> None:
    next_turn: int | None = _run_one(session, n, keeper, stop)
    while next_turn is not None:
        next_turn = _run_one(session, next_turn, keeper, stop)


def _run_one(session: Session, n: int, keeper: Keeper, stop: Stop) -> int | None:
    """Run turn `n` to its end; returns the re-ask turn it queued, if any."""
    watched = watch.snapshot(session, n)
    keeper.check_watchdog()  # from now on, if we are killed, the watchdog ends the turn
    proc = _start_codex(session, n, keeper, stop)
    if proc is None:
        watch.release(watched)
        return None
    turn = find_turn(session.load(), n)
    end_reason = _watch(session, turn, proc, keeper, stop)
    # Codex, and whatever it started (detached, respawning or not): nothing of the turn
    # outlives it, and nothing writes to the tree after the guard's check below.
    keeper.end(proc)
    exit_code = proc.wait()
    if not _still_listed(session, turn):
        watch.release(watched)
        return None
    queued: list[int] = []
    turns.record_end(session, n, exit_code=exit_code, end_reason=end_reason,
                     guard=watch.check(session, n, watched),
                     follow_up=lambda data, ended: _follow(session, data, ended, queued,
                                                           keeper))
    return queued[0] if queued else None


def _still_listed(session: Session, turn: TurnRecord) -> bool:
    """Whether session.json still shows this runner's turn running: if not, something else
    changed it, and the end is not written into it (lifecycle reports state_corrupt)."""
    now = next((t for t in session.load()["turns"]
                if t["n"] == turn["n"] and t["created_at"] == turn["created_at"]), None)
    if now is None or states.is_terminal(now["status"]):
        print(f"session.json no longer shows turn {turn['n']} running: its end is not recorded")
        return False
    return True


def _follow(session: Session, data: dict[str, Any], ended: TurnRecord,
            queued: list[int], keeper: Keeper) -> None:
    """Under the session lock, with the end: queue a re-ask if the answer needs one, and
    say in the runner's record what it runs next (or that it is done)."""
    _queue_reask(session, data, ended, queued)
    _queue_reconsider(session, data, ended, queued)
    if queued:
        follow = find_turn(data, queued[0])
        keeper.note(turn=follow["n"], turn_created_at=follow["created_at"], codex=None)
    else:
        keeper.ended(ended)


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
    settings = TurnSettings.from_record(ended["settings"])
    thread = ended.get("thread_id") or data["thread_id"]  # a challenge's own thread too
    turn = turns.new_turn(
        session, data, round_no=ended["round"], purpose="reask", settings=settings,
        prompt=templates.render("reask", {"PROBLEMS": problems}).encode(),
        argv=turns.codex_argv(ended["argv"][0], data, settings, thread_id=thread,
                              schema=ended["schema"]),
        thread_id=thread,
        schema=ended["schema"])
    turn["runner"] = ended["runner"]  # this same runner carries on with it
    turn["sandbox"] = ended.get("sandbox")  # the same round, the same sandbox (and why)
    queued.append(turn["n"])


def _queue_reconsider(session: Session, data: dict[str, Any], ended: TurnRecord,
                      queued: list[int]) -> None:
    """An answer that concedes points without new evidence that holds (turns.py noted them)
    is sent back once, on the same thread, asking what changed Codex's mind: its new answer
    replaces the round's; the first stays on record."""
    flagged = ended.get("reconsider")
    if not flagged or queued or (ended.get("guard") or {}).get("violation"):
        return
    if budget.reached(data) is not None:
        return  # the answer stands, flagged; no further turn starts
    settings = TurnSettings.from_record(ended["settings"])
    thread = ended.get("thread_id") or data["thread_id"]
    turn = turns.new_turn(
        session, data, round_no=ended["round"], purpose="reconsider", settings=settings,
        prompt=templates.render("reconsider", {"POINTS": flagged}).encode(),
        argv=turns.codex_argv(ended["argv"][0], data, settings, thread_id=thread,
                              schema=ended["schema"]),
        thread_id=thread, schema=ended["schema"])
    turn["runner"] = ended["runner"]
    turn["sandbox"] = ended.get("sandbox")
    queued.append(turn["n"])


def _start_codex(session: Session, n: int, keeper: Keeper, stop: Stop
                 ) -> process.Child | None:
    # Checked and recorded under the lock, so a concurrent `stop` either sees
    # codex's identity and kills it, or leaves the flag that stops us here.
    with session.update() as data:
        turn = next((t for t in data["turns"] if t["n"] == n), None)
        if turn is None or turn["status"] != states.STARTING:
            return None
        if turn["stop_requested"] or stop.asked:
            states.move(turn, states.STOPPED, ended_at=time.time(), end_reason="stopped",
                        error=turns.stopped_error())
            keeper.ended(turn)
            return None
        # The user's word is read again here, where codex starts, for every kind of turn.
        refused = sandbox.gate(turn["argv"], Path(data["root"]), Path(data["cwd"]))
        if refused is None:
            refused, prompt = _prompt(session, turn, data["root"])
        if refused is not None:
            states.move(turn, states.FAILED, ended_at=time.time(), error=refused)
            keeper.ended(turn)
            return None
        try:
            proc = _new_codex(session, turn, Path(data["cwd"]), keeper.mark, prompt)
        except OSError as exc:
            states.move(turn, states.FAILED, ended_at=time.time(),
                        error=turns.spawn_error(turn["argv"][0], exc))
            keeper.ended(turn)
            return None
        codex = process.identity_of(proc.pid)
        states.move(turn, states.RUNNING, started_at=time.time(), codex=codex.to_dict())
        keeper.note(codex=codex.to_dict())
        return proc


def _prompt(session: Session, turn: TurnRecord, root: str
            ) -> tuple[dict[str, Any] | None, bytes]:
    """(None, the prompt codex is to read), as turns.prompt_of reads it; (the error, b"")
    when it is not a plain file there, or not the prompt the turn was made with."""
    try:
        return None, turns.prompt_of(session, turn, root, "the turn's prompt")
    except SparringError as exc:
        return dict(exc.to_dict()), b""


def _new_codex(session: Session, turn: TurnRecord, cwd: Path, mark: str, prompt: bytes
               ) -> process.Child:
    """Codex, reading the prompt as it was checked (_prompt): the file in the project is not
    opened again, so nothing put in its place meanwhile reaches codex; in the user's
    environment but for what names the other side: its model, Claude Code's own variables
    (claude.py: the runner's record, never Codex's to read)."""
    env = claude.codex_environment(os.environ)
    return spawn.background(
        turn["argv"], cwd=cwd, stdin=prompt,
        stdout=Path(session.output(turn["n"], turns.EVENTS)),
        stderr=Path(session.output(turn["n"], turns.STDERR)),
        env=process.tree.marked(env, mark),
        die_with_parent=True,  # codex never runs on without a runner enforcing limits
    )


def _watch(session: Session, turn: TurnRecord, proc: process.Child, keeper: Keeper,
           stop: Stop) -> str | None:
    """Wait for codex to exit; return why we must end it when a limit passes or we are
    told to stop. Meanwhile note the turn's processes, and keep the watchdog alive."""
    offline = network.OfflineWatch(Path(session.output(turn["n"], turns.EVENTS)),
                                   turn["settings"].get("offline_after", OFFLINE_AFTER))
    polls = 0
    while not process.has_exited(proc):
        now = time.time()
        reason = "stopped" if stop.asked else (
            turns.deadline_passed(session, turn, now) or ("offline" if offline.passed(now)
                                                          else None))
        if reason:
            return reason
        polls += 1  # the first record half a second in: codex's own start comes first
        if polls % _RECORD_EVERY == 0:
            keeper.record(proc)
            keeper.check_watchdog()
        time.sleep(POLL_INTERVAL)
    return None
