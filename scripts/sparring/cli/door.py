"""`poll` and `wait` of an ended turn and `guard check`, quickly: printed without the CLI.

Claude runs `wait` after every Codex round, and most often the turn has ended by then: all
there is to print is what session.json and the turn's events say. `python -m sparring`
tries `run` first. It answers only that common case, with the standard library and without
click, and hands everything else to the full CLI: a turn still running (or whose runner
died), an arch-debate or deep-discussion whose status comes with the answer, the first
reveal of a sealed answer (it is recorded), an option it does not know, anything unusual on
disk. The full CLI then prints the same object the slow way: tests/test_cli/door.py holds the
two to the same bytes, and so does conftest.py for every poll, wait and guard check of the
suite. `brief` is the one definition of the brief poll object both use.

`guard check --baseline FILE` spends most of its time waiting for git status (and, when the
index moved, git ls-files): it starts them before the rest of the check loads, and the
check runs without click, so less of the machine goes to Python while git works.
"""

from __future__ import annotations

import os
import sys
import time

from sparring.fastjson import loads
from sparring.store.shapes import session_problem
from sparring.turn.budget import figures

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BRIEF_ACTIVITIES = 5
# The session file this reader understands (session.FORMAT); any other goes the slow way.
_FORMAT = 1
_ENDED = frozenset({"completed", "failed", "timeout", "stalled", "stopped"})
_WAIT_OPTIONS = ("--timeout",)


class _SlowPath(Exception):
    """This one is for the full CLI."""


def main() -> int:
    """`python -m sparring` and the `sparring` command: this fast path, else the CLI."""
    code = run(sys.argv[1:])
    if code is None:
        from sparring.cli.main import main as cli

        code = cli()
    return code


def run(argv: list[str]) -> int | None:
    """Print `poll`/`wait` of an ended turn, or `guard check`, and return the exit status;
    None when the full CLI must answer (it has not printed anything then)."""
    if argv[:2] == ["guard", "check"]:
        return _guard_check(argv[2:])
    request = _request(argv)
    if request is None:
        return None
    from sparring.output import EXIT_OK, emit, success

    try:
        found = _ended_turn(*request)
    except KeyboardInterrupt:
        return _interrupted()
    except Exception:  # _SlowPath, or anything unexpected: the full CLI reports it properly
        return None
    emit(success(request[0], found), request[1])  # as the CLI: hints name the session
    return EXIT_OK


def _guard_check(words: list[str]) -> int | None:
    """`guard check --baseline FILE`, whose time is git's: git starts before anything else
    loads, and the CLI (click and the rest) never does."""
    baseline = _baseline(words)
    if baseline is None:
        return None
    from pathlib import Path

    from sparring.guard import start_early

    start_early(Path(baseline))
    from sparring.commands.guard import check
    from sparring.errors import SparringError
    from sparring.output import EXIT_FAILED, EXIT_OK, emit, failure, success

    try:
        found = check(Path(baseline))
    except SparringError as exc:  # as the CLI's run_verb reports it
        emit(failure("guard check", exc))
        return EXIT_FAILED
    except KeyboardInterrupt:
        return _interrupted()
    except Exception:  # a bug: the full CLI reports it with its traceback
        return None
    emit(success("guard check", found))
    return EXIT_OK


def _baseline(words: list[str]) -> str | None:
    """FILE of `--baseline FILE` or `--baseline=FILE` alone; None for anything else (a
    folder, --help, a typo), which is the CLI's business."""
    if len(words) == 2 and words[0] == "--baseline":
        path = words[1]
    elif len(words) == 1 and words[0].startswith("--baseline="):
        path = words[0].partition("=")[2]
    else:
        return None
    return path if path and not os.path.isdir(path) else None


def _interrupted() -> int:
    """As the CLI reports an interrupt: nothing was written."""
    from sparring.errors import SparringError
    from sparring.output import emit, failure

    emit(failure("sparring", SparringError(
        "interrupted", "interrupted", "run the verb again; what it had written is kept")))
    return 130


def _request(argv: list[str]) -> tuple[str, str] | None:
    """(verb, session) of `poll SESSION` or `wait SESSION [--timeout S]`, else None."""
    if not argv or argv[0] not in ("poll", "wait"):
        return None
    verb, words, refs = argv[0], iter(argv[1:]), []
    for word in words:
        name, _, value = word.partition("=")
        if verb == "wait" and name in _WAIT_OPTIONS:
            if not _is_timeout(value if "=" in word else next(words, "")):
                return None
        elif word.startswith("-") or not word:
            return None  # --full, --seal, --help, a typo: the CLI's business
        else:
            refs.append(word)
    return (verb, refs[0]) if len(refs) == 1 else None


def _is_timeout(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return 0 <= value < float("inf")


def _ended_turn(verb: str, ref: str) -> dict[str, Any]:
    """The brief poll object of the session's latest turn, which has ended."""
    directory = _session_dir(ref, os.getcwd())
    with open(os.path.join(directory, "session.json"), encoding="utf-8") as f:
        data = loads(f.read(), allow_nan=False)
    if not isinstance(data, dict) or data.get("format") != _FORMAT or not data.get("turns"):
        raise _SlowPath("not a session file this reader knows, or no turn yet")
    if session_problem(data):
        raise _SlowPath("not as sparring wrote it: the full CLI reports state_corrupt")
    turn = data["turns"][-1]
    if turn["status"] not in _ENDED:
        raise _SlowPath("the turn runs (or its runner died): the full CLI watches it")
    if _run_recorded(directory):
        raise _SlowPath("a runner's record is there: the full CLI checks session.json agrees")
    if turn["purpose"] != "synthesis" and (data.get("debate") or data.get("discussion")):
        raise _SlowPath("the workflow's status comes with the answer: the full CLI adds it")
    final = _final_message(os.path.join(directory, "turns", str(turn["n"]), "events.jsonl"))
    engine = data["engine"]
    withheld = None
    if engine["barrier"] and not engine["seal"]:
        withheld = ("Codex's answer stays hidden until you seal your own analysis: write it "
                    f"to a file, then `sparring seal {data['id']} --file FILE`")
    review = None
    if withheld is None and turn["status"] == "completed":
        if engine["barrier"] and not engine["revealed_at"]:
            raise _SlowPath("the first reveal is recorded in the session")
        review = {"text": final, "data": _structured(final)}
    started = turn.get("started_at") or turn["created_at"]
    shown = brief({
        "session": os.path.basename(directory), "status": turn["status"],
        "round": turn["round"], "turn": turn["n"], "purpose": turn["purpose"],
        "elapsed_s": round((turn.get("ended_at") or time.time()) - started, 2),
        "review": review, "review_withheld": withheld,
        "error": turn.get("error"), "recoverable": bool(turn.get("recoverable")),
        "guard": turn.get("guard"), "malformed_lines": 0,
        "usage": {"round": turn.get("usage"), "total": _total(data["turns"]),
                  "budget": figures(data)},
    })
    if verb == "wait":
        shown["wait_timed_out"] = False
    return shown


def _run_recorded(directory: str) -> bool:
    """Whether a runner's record (store/runs.py) is kept for the session: records exist
    only while a runner runs, so mostly there is none at all, and no hash to compute."""
    base = os.environ.get("XDG_STATE_HOME", "")
    home = base if os.path.isabs(base) else os.path.join(os.path.expanduser("~"), ".local",
                                                          "state")
    folder = os.path.join(home, "sparring", "runs")
    try:
        with os.scandir(folder) as entries:
            if not any(e.name.endswith(".json") for e in entries):
                return False
    except OSError:
        return False
    return os.path.exists(_run_record(folder, directory))


def _run_record(folder: str, directory: str) -> str:
    """store/runs.py's path_for, without loading it."""
    import hashlib

    key = hashlib.sha256(directory.encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(folder, f"{key[:32]}.json")


def _session_dir(ref: str, cwd: str) -> str:
    """The folder session.resolve finds."""
    if ref.startswith("~"):
        raise _SlowPath("a path to expand")
    if os.sep in ref or os.path.isdir(ref):
        candidate = ref if os.path.isabs(ref) else os.path.join(cwd, ref)
    else:
        candidate = os.path.join(_root(cwd), ".sparring", "sessions", ref)
    if not os.path.isfile(os.path.join(candidate, "session.json")):
        raise _SlowPath("no such session: the full CLI says so")
    return os.path.realpath(candidate)


def _root(cwd: str) -> str:
    """workspace.find_root, with os.path."""
    start = candidate = os.path.realpath(cwd)
    while True:
        if os.path.exists(os.path.join(candidate, ".git")) or os.path.isdir(
                os.path.join(candidate, ".sparring", "sessions")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent


def _final_message(path: str) -> str | None:
    """Codex's last message, from an ended turn's events (events.py, for the lines Codex
    writes: any other line is counted and reported by the full reader)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raw = b""
    final = None
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        if line[:1] != b"{" or line[1:2] == b"\x00":
            raise _SlowPath("a line that is not a plain JSON object")
        event = loads(line.decode("utf-8", "surrogatepass"))
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise _SlowPath("an event without a type")
        if event["type"] in ("item.started", "item.updated", "item.completed"):
            item = event.get("item")
            if not isinstance(item, dict):
                raise _SlowPath("an item that is not an object")
            if item.get("type") == "agent_message" and event["type"] == "item.completed":
                final = str(item.get("text", ""))
    return final


def _structured(text: str | None) -> Any:
    """turns.parse_review for an answer that is not fenced: its JSON, or None."""
    if text is None:
        return None
    body = text.strip()
    if body.startswith("```"):
        raise _SlowPath("a fenced answer: turns.parse_review unwraps it")
    try:
        return loads(body)
    except ValueError:
        return None


def _total(turns: list[dict[str, Any]]) -> dict[str, int]:
    total = {"input_tokens": 0, "output_tokens": 0}
    for turn in turns:
        for key in total:
            total[key] += (turn.get("usage") or {}).get(key, 0)
    return total


def brief(full: dict[str, Any], review: bool = True) -> dict[str, Any]:
    """The poll object as Claude needs it round after round: the status and what to act on,
    the answer, the guard's verdict, the tokens (against the budget, when there is one).
    `--full` prints the rest (also on disk: session.json and the turn's folder)."""
    found = {key: full[key] for key in ("session", "status", "round", "turn", "purpose",
                                         "elapsed_s")}
    if full["status"] == "running":
        found["last_event_s"] = full["last_event_s"]
        found["activities"] = full["activities"][-BRIEF_ACTIVITIES:]
    if review:
        found["review"] = _one_form(full["review"])
    if review and full["review_withheld"]:
        found["review_withheld"] = full["review_withheld"]
    if full["error"]:
        found.update(error=full["error"], recoverable=full["recoverable"])
    guard = full["guard"]
    if guard is not None:
        found["guard"] = {"clean": True} if guard.get("clean") else guard
    found["usage"] = {"round": tokens(full["usage"]["round"]),
                      "total": tokens(full["usage"]["total"])}
    if full["usage"]["budget"] is not None:
        found["usage"]["budget"] = full["usage"]["budget"]
    if full["malformed_lines"]:
        found["malformed_lines"] = full["malformed_lines"]
    return found


def _one_form(review: dict[str, Any] | None) -> dict[str, Any] | None:
    """Codex's answer once: parsed when it is structured (its text is that same JSON)."""
    if review is None:
        return None
    if review.get("data") is None:
        return {"text": review["text"]}
    return {"data": review["data"]}


def tokens(usage: dict[str, Any] | None) -> dict[str, int] | None:
    """Input and output tokens: what a round cost (cached and reasoning are in --full)."""
    if usage is None:
        return None
    return {"input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0)}
