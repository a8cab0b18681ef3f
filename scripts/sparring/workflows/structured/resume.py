"""Where a think-about or dual-model session picks up (`sparring status`): the step the
runner's record says comes next, for a conversation that lost track of it (a new one, or
one whose context was reset). Computed from the record, never from what Claude remembers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring import states
from sparring.errors import Hint
from sparring.quoting import path_word
from sparring.records import TurnRecord
from sparring.store import workspace
from sparring.store.sessions import Session, latest_turn
from sparring.turn import budget, launch

# The first round's template and the inbox file its variables go in, per workflow.
_FIRST = {"think-about": ("think-about/round1", "round1.yaml"),
          "dual-model": ("dual-model/dispatch", "dispatch.yaml")}


def next_step(session: Session, data: dict[str, Any], cwd: Path) -> Hint:
    sid, inbox = session.id, workspace.session_inbox(data)
    turn = latest_turn(data)
    if turn is None:
        template, name = _FIRST[data["skill"]]
        return Hint(f"Codex has not started: write the question to {inbox}/{name}, then "
                    f"`sparring start {sid} --template {template} --vars-file "
                    f"{path_word(f'{inbox}/{name}')}`")
    if launch.unaccepted_violations(data):
        return Hint(f"files changed during Codex's turn: show the user `sparring poll {sid}`'s "
                    f"guard.changed; once they have decided, `sparring guard accept {sid}`")
    engine = data["engine"]
    analysis, verdict = f"{inbox}/analysis.md", f"{inbox}/verdict.json"
    unsealed = engine["barrier"] and not engine["seal"]
    if not states.is_terminal(turn["status"]):
        if unsealed:  # the analysis is written once round one has ended, then sealed
            return Hint(f"Codex is answering round 1: `sparring wait {sid}` until it has "
                        f"ended (its answer stays hidden); then write your own analysis to "
                        f"{analysis} and `sparring wait {sid} --seal {path_word(analysis)}`")
        return Hint(f"Codex is answering round {turn['round']}: `sparring wait {sid}`")
    if data.get("reports"):
        return Hint(f"the report is written (`sparring status {sid}` names it): `sparring "
                    f"finalize {sid}`, then `sparring stop {sid}`")
    if turn["status"] != states.COMPLETED:
        return _failed(sid, turn, inbox)
    if unsealed:
        return Hint(f"Codex answered round 1; your own analysis is not sealed yet: write it to "
                    f"{analysis}, then `sparring wait {sid} --seal {path_word(analysis)}`")
    decided = engine["decisions"].get(str(turn["round"]))
    if decided is None:
        return Hint(f"Codex answered round {turn['round']} and you have not judged it: "
                    f"`sparring wait {sid}` shows its answer again; write your verdict to "
                    f"{verdict}, then `sparring verdict {sid} --file {path_word(verdict)}`")
    # The decision as the ledger names them (the record may hold any text: never printed)
    decision = decided["decision"] if decided["decision"] in _DECISIONS else "judged"
    return _after(sid, session, data, decision, turn["round"], inbox)


_DECISIONS = ("continue", "consensus", "stalemate")  # ledger.py's Decision


def _after(sid: str, session: Session, data: dict[str, Any], decision: str, round_no: int,
           inbox: str) -> Hint:
    synthesis = f"{inbox}/synthesis.json"
    report = (f"write your synthesis to {synthesis}, then `sparring report {sid} --synthesis "
              f"{path_word(synthesis)}`")
    vars_file = Path(session.path, f"round-{round_no + 1}-vars.json")
    if (decision == "continue" and data["skill"] == "think-about" and vars_file.is_file()
            and budget.reached(data) is None):
        return Hint(f"round {round_no} is judged (continue) and Codex's next round has not "
                    f"started: `sparring resume {sid} --template think-about/round2+ "
                    f"--vars-file {path_word(vars_file)}`")
    return Hint(f"round {round_no} is judged ({decision}): {report}")


def _failed(sid: str, turn: TurnRecord, inbox: str) -> Hint:
    status = states.reported(turn["status"])
    if turn.get("recoverable") and turn["purpose"] != "recovery":
        return Hint(f"Codex's round {turn['round']} ended {status}: `sparring resume {sid} "
                    "--recover` once")
    synthesis = f"{inbox}/synthesis.json"
    return Hint(f"Codex's round {turn['round']} ended {status}: report what you have; write "
                f"your synthesis to {synthesis}, then `sparring report {sid} --synthesis "
                f"{path_word(synthesis)}`")
