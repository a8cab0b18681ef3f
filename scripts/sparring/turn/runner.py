"""The background runner: one small process per turn that owns codex.

`start`/`resume` launch it and return; it launches codex, enforces the wall-clock timeout
and the stall limit even when nobody polls, ends every process of the turn when the turn
ends (turn/keeper.py), and records how the turn ended. It is Codex's parent, so it alone
sees the real exit code. If it is killed, its watchdog ends the turn's processes and `poll`
still tells the truth from what is on disk.

How a verb that starts a turn and its runner meet. Where forking is as safe as a new
interpreter (process/standby.py: Linux, this process isolated and single-threaded), the verb
forks the runner the moment it has found the session (`prepared` gives it a `Ready`), and
tells it, one message a line, first codex's command line (`{"kind": "codex"}`: the runner
starts codex early, turn/early.py, while the verb renders the prompt and writes the turn),
then the turn to run (`{"kind": "turn"}`); closing the pipe without a turn dismisses it.
Elsewhere, or once the forked runner is gone, `launch` starts a runner anew (`python -I -c`
main), which starts codex itself. The four ways a turn's codex starts:

    verb (start/resume)                 runner                             codex
    -------------------                 ------                             -----
    1. forked, codex early (Linux, isolated: what the skills' launcher runs)
    prepared(): fork ----------------->  waits for orders
    warm_up(): {"kind": "codex"} ----->  Early.start ------------------->  waits on its pipe
    render prompt, write turn
    launch(): {"kind": "turn"} ------->  snapshot, then feed the prompt ->  runs the turn
    2. forked, codex not early (its command line failed the sandbox gate, or could not start)
    prepared(): fork ----------------->  waits for orders
    warm_up(): {"kind": "codex"} ----->  Early.start refuses: nothing started
    launch(): {"kind": "turn"} ------->  snapshot, spawn codex --------->  runs the turn
    3. anew, no fork (macOS, a non-isolated caller): no early codex
    launch(): spawn `python -I -c main` ->  snapshot, spawn codex ------>  runs the turn
    4. the forked runner is gone before its orders (killed, crashed)
    launch(): {"kind": "turn"} fails, or the runner has exited: reaped; then as in 3
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from sparring import disk, process, states, templates
from sparring.codex import sandbox
from sparring.config import OFFLINE_AFTER, TurnSettings
from sparring.errors import SparringError
from sparring.process import spawn, standby
from sparring.records import TurnRecord
from sparring.store import runs
from sparring.store.sessions import Session, find_turn
from sparring.store.statefile import swapped
from sparring.turn import budget, lifecycle, turns, watchdog
from sparring.turn.early import Early
from sparring.turn.keeper import Keeper

if TYPE_CHECKING:
    from subprocess import Popen

POLL_INTERVAL = 0.1
# The runner records the turn's processes it sees every this many polls (half a second).
_RECORD_EVERY = 5
CODEX, TURN = "codex", "turn"  # the kinds of message a verb sends its forked runner


class Ready:
    """A turn's runner forked while a verb prepares the turn (`prepared`), waiting for its
    orders; `child` is None where nothing could be forked (the runner then starts anew), and
    `early_mark` the mark of the codex it was told to start early (runs.begin records it)."""
    def __init__(self, child: standby.Standby | None) -> None:
        self.child = child
        self.early_mark: str | None = None

    def warm_up(self, argv: list[str], data: dict[str, Any]) -> None:
        """The forked runner starts codex now, with the command line the turn will have
        (turn/early.py): it reaches its prompt while the verb renders it and writes the
        turn."""
        if self.child is None or self.early_mark is not None:
            return
        mark = runs.new_mark()
        if self.child.tell(_line(CODEX, argv=argv, cwd=data["cwd"], root=data["root"],
                                 mark=mark)):
            self.early_mark = mark

    def hand_over(self, session: Session, n: int) -> process.Identity | None:
        """The forked runner, now running turn `n` of `session`; None when there is none
        (or it is gone: way 4 of the module's diagram)."""
        child, self.child = self.child, None
        if child is None or not child.order(_line(TURN, session=session.path, turn=n)):
            return None
        if process.has_exited(child):
            # Gone before its orders, though the pipe took them: a process it was starting
            # held the pipe's other end for a moment. (Gone after this, it is a runner that
            # died.)
            child.wait()
            return None
        return process.identity_of(child.pid)

    def dismiss(self) -> None:
        """No turn for it: it sees end-of-file and ends what it started."""
        child, self.child = self.child, None
        if child is not None:
            child.dismiss()


@contextlib.contextmanager
def prepared(find: Callable[[], Session]) -> Iterator[Ready]:
    """While a verb prepares a turn of the session `find` names (as the verb finds it): the
    turn's runner forked already and waiting (process/standby.py), where that is as safe as
    a new interpreter; `launch` gives it the turn. Left unused (no turn started), it is
    dismissed with the block."""
    ready = Ready(standby.fork(lambda orders: _stand_by(find, orders)))
    try:
        yield ready
    finally:
        ready.dismiss()


def _stand_by(find: Callable[[], Session], orders: int) -> int:
    """The forked runner: it starts codex once told its command line, then loads what only
    it needs and starts git's part of the guard's snapshot; then it runs the turn the verb
    names, as a runner started anew would (main)."""
    process.adopt_orphans()
    session = None
    # A session not found: the verb finds it wrong too, and says so; no orders will come.
    with contextlib.suppress(Exception):
        session = find()
    lines = standby.Lines(orders)
    message, early = _message(lines), None
    if not message:
        return 0  # the verb failed before it knew codex's command line: nothing to end
    if message["kind"] == CODEX and session is not None:
        early = Early.start(session, message)
    try:
        return _take_orders(session, lines, message, early)
    finally:
        if early is not None and not early.settled:  # no turn took it, whatever failed
            early.discard()


def _take_orders(session: Session | None, lines: standby.Lines, message: dict[str, Any],
                 early: Early | None) -> int:
    """The forked runner's part once codex started early (or could not): git for the
    snapshot, then the turn the verb names, if it names one."""
    from sparring.turn import watch

    if session is not None:
        watch.start_early(session)
    if message["kind"] == CODEX:
        message = _message(lines)
    if message.get("kind") != TURN:  # the turn did not start
        watch.finish_early()
        return 0
    session = Session(Path(message["session"]))  # the session the verb found
    n = int(message["turn"])
    standby.write_output_to(session.turn_path(n, turns.RUNNER_LOG), under=session.root)
    os.chdir(session.path)  # where a runner started anew works
    return main([session.path, str(n)], early)


def _line(kind: str, **fields: Any) -> bytes:
    """One message to the forked runner, as _message reads it."""
    return json.dumps({"kind": kind, **fields}).encode() + b"\n"


def _message(lines: standby.Lines) -> dict[str, Any]:
    """The verb's next message ({} once it closed its end without one)."""
    line = lines.next()
    return dict(json.loads(line)) if line else {}


def launch(session: Session, n: int, ready: Ready) -> process.Identity:
    """Start the runner for turn `n`: the one `ready` holds, else one anew in its own
    session, its output in the turn's log. Its record (store/runs.py) is written first, and
    names it before this returns."""
    try:
        runs.begin(session.path, find_turn(session.load(), n), ready.early_mark)
    except runs.Busy as busy:
        raise lifecycle.disagree(session, busy.run, f"turn {busy.run.turn} is still being run "
                                 "by sparring's runner, yet the session file let another turn "
                                 "start") from None
    identity = ready.hand_over(session, n) or _spawn(session, n)
    with runs.change(session.path) as run:
        if run.get("turn") == n:
            run["runner"] = identity.to_dict()
    return identity


def _spawn(session: Session, n: int) -> process.Identity:
    """A runner started anew, in an isolated interpreter (process.program)."""
    log = session.turn_path(n, turns.RUNNER_LOG)
    try:
        child = spawn.background(
            spawn.program("sparring.turn.runner", session.path, str(n)),
            cwd=session.path, stdin=None, stdout=log, stderr=log, under=session.root,
        )
    except disk.FolderSwapped as exc:  # the turn's folder, swapped since start made it
        raise swapped(exc) from None
    return process.identity_of(child.pid)


def main(argv: list[str], early: Early | None = None) -> int:
    """Run turn argv[1] of the session in folder argv[0] (and the re-asks it queues);
    `early`: its codex, started already and waiting for its prompt."""
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
        run_turn(session, n, keeper, stop, early)
    except Exception:
        import traceback

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


def run_turn(session: Session, n: int, keeper: Keeper, stop: Stop,
             early: Early | None = None) -> None:
    next_turn: int | None = _run_one(session, n, keeper, stop, early)
    while next_turn is not None:
        next_turn = _run_one(session, next_turn, keeper, stop)


def _run_one(session: Session, n: int, keeper: Keeper, stop: Stop, early: Early | None = None
             ) -> int | None:
    """Run turn `n` to its end; returns the re-ask turn it queued, if any. `early`: its
    codex, started already, waiting for its prompt (turn/early.py)."""
    # Here, not at the top: `start` imports this module for launch() alone, and the guard is
    # the largest part of it that only the runner's own process needs.
    from sparring.turn import watch

    if early is not None:
        early = _adopted(early, session, n)
    watched = watch.snapshot(session, n)
    watch.finish_early()  # a listing started early serves this snapshot alone
    keeper.check_watchdog()  # from now on, if we are killed, the watchdog ends the turn
    proc = _spawn_codex(session, n, keeper, stop, early)
    if proc is None:
        watch.release(watched)
        return None
    turn = find_turn(session.load(), n)
    end_reason: str | None
    if early is not None and proc is early.proc and not _fed(early, turn):
        end_reason = "stalled"  # it never read its prompt: ended, never half-fed
    else:
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
    settings = TurnSettings(**ended["settings"])
    turn = turns.new_turn(
        session, data, round_no=ended["round"], purpose="reask", settings=settings,
        prompt=templates.render("reask", {"PROBLEMS": problems}).encode(),
        argv=turns.codex_argv(ended["argv"][0], data, settings, thread_id=data["thread_id"],
                              schema=ended["schema"]),
        thread_id=data["thread_id"],
        schema=ended["schema"])
    turn["runner"] = ended["runner"]  # this same runner carries on with it
    turn["sandbox"] = ended.get("sandbox")  # the same round, the same sandbox (and why)
    queued.append(turn["n"])


def _adopted(early: Early, session: Session, n: int) -> Early | None:
    """`early`, its output moved to where the turn's is (before the snapshot, which expects
    it there); None, and it ended, when it is not the turn's command line or cannot be
    moved (the turn then starts a codex anew, on output files of its own)."""
    if find_turn(session.load(), n)["argv"] != early.argv:
        early.discard()
        return None
    try:
        early.adopt(session, n)
    except OSError:
        import traceback

        traceback.print_exc()
        early.discard()
        return None
    return early


def _fed(early: Early, turn: TurnRecord) -> bool:
    """Codex started early gets its prompt now (as _start_codex read it), the guard's
    snapshot taken; False when it read none of it for as long as the turn may stall (it is
    then ended, here)."""
    proc = early.proc
    if spawn.feed(proc, early.prompt, float(turn["settings"]["stall_after"])):
        return True
    deadline = time.monotonic() + 1.0  # it may be exiting (a closed pipe): its end says why
    while time.monotonic() < deadline:
        if process.has_exited(proc):
            return True
        time.sleep(0.02)
    process.end(process.tree.Scope(groups=(proc.pid,)))
    return False


def _spawn_codex(session: Session, n: int, keeper: Keeper, stop: Stop,
                 early: Early | None = None) -> Popen[bytes] | None:
    """Codex for turn `n`: `early`, started already for it, else started now."""
    proc = _start_codex(session, n, keeper, stop, early)
    if early is not None and proc is not early.proc:
        early.discard()  # the turn did not take it (stopped, refused, not this command)
    return proc


def _start_codex(session: Session, n: int, keeper: Keeper, stop: Stop, early: Early | None
                 ) -> Popen[bytes] | None:
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
            proc = early.take(prompt) if early is not None else \
                _new_codex(session, turn, Path(data["cwd"]), keeper.mark)
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


def _new_codex(session: Session, turn: TurnRecord, cwd: Path, mark: str) -> Popen[bytes]:
    return spawn.background(
        turn["argv"], cwd=cwd,
        stdin=session.turn_path(turn["n"], turns.PROMPT),
        stdout=Path(session.output(turn["n"], turns.EVENTS)),
        stderr=Path(session.output(turn["n"], turns.STDERR)),
        env=process.tree.marked(os.environ, mark),
        die_with_parent=True,  # codex never runs on without a runner enforcing limits
    )


def _watch(session: Session, turn: TurnRecord, proc: Popen[bytes], keeper: Keeper,
           stop: Stop) -> str | None:
    """Wait for codex to exit; return why we must end it when a limit passes or we are
    told to stop. Meanwhile note the turn's processes, and keep the watchdog alive."""
    from sparring.codex import network  # codex runs by now: what watches it loads meanwhile

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
