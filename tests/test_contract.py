"""The JSON output is a contract: pinned version, envelope keys and error codes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest

from sparring.cli.main import cli
from sparring.errors import CODES
from sparring.output import SCHEMA_VERSION
from sparring.states import REPORTED
from sparring.turn.contract import POLL_KEYS, PURPOSES
from support.debates import FRAME, answer, cpt, pt

RUNNER_DOC = Path(__file__).resolve().parents[1] / "docs" / "runner.md"

# Renaming or removing one of these breaks every SKILL.md that branches on it. Each one is
# provoked through the CLI, and its JSON error checked, in test_error_codes.py.
PINNED_CODES = {
    "usage_error", "config_invalid", "codex_not_found", "codex_usage_error",
    "codex_start_failed", "codex_crashed", "codex_protocol_error", "turn_failed",
    "rate_limited", "context_window_exceeded", "codex_too_old", "turn_timeout", "turn_stalled",
    "network_unreachable", "turn_stopped",
    "runner_died", "thread_not_found", "session_not_found", "session_busy",
    "invalid_transition", "no_thread", "recovery_exhausted", "state_corrupt",
    "state_version_unsupported", "prompt_empty", "prompt_too_large", "file_not_found",
    "not_writable", "git_failed", "template_not_found", "template_missing_var",
    "invalid_answer", "verdict_invalid", "synthesis_invalid", "input_empty", "seal_required",
    "seal_too_early", "already_sealed", "already_judged", "not_revealed", "guard_violation",
    "budget_exhausted",
    "runtime_missing", "runtime_in_project", "runtime_build_failed", "path_too_long",
    "debate_exists", "round_missing",
    "invalid_arguments", "report_exists",
    "interrupted", "internal_error",
}


def test_schema_version_is_pinned() -> None:
    assert SCHEMA_VERSION == 1


def test_error_codes_are_only_ever_added() -> None:
    assert set(CODES) >= PINNED_CODES


def test_every_error_code_is_documented() -> None:
    text = RUNNER_DOC.read_text()
    missing = [code for code in CODES if f"`{code}`" not in text]
    assert not missing, f"docs/runner.md lacks error codes: {missing}"


# Keys `poll`/`wait` add around the turn's own object (contract.POLL_KEYS says when).
_AROUND = {"wait_timed_out", "sealed", "independence", "debate", "discussion"}


def test_the_documented_poll_keys_are_the_printed_ones(sparring: Any, session: str,
                                                       fake_codex: Any) -> None:
    documented = [key for key, _, _ in POLL_KEYS]
    assert len(documented) == len(set(documented))
    fake_codex.mode("slow", delay="4")
    sparring("start", session, input=b"q")
    running = [sparring("poll", session).out, sparring("poll", session, "--full").out,
               sparring("wait", session, "--timeout", "0").out]
    fake_codex.release()
    done = [sparring("wait", session).out, sparring("wait", session, "--full").out]
    fake_codex.mode("rate_limited")
    sparring("resume", session, input=b"again")
    failed = [sparring("wait", session).out, sparring("wait", session, "--full").out]

    printed = running + done + failed
    envelope = {"schema_version", "ok", "verb"}
    full_keys = set(running[1]) - envelope
    assert full_keys == set(documented) - _AROUND, "contract.POLL_KEYS differs from view.py"
    for out in printed:
        assert set(out) - envelope <= set(documented), set(out) - envelope - set(documented)
    assert "wait_timed_out" not in done[0] and "last_event_s" in running[0]
    assert running[2]["wait_timed_out"] is True
    assert "error" in failed[0] and "recoverable" in failed[0]


def test_success_and_error_envelopes(sparring: Any, repo: Path) -> None:
    ok = sparring("init", "--skill", "think-about").out
    assert {"schema_version", "ok", "verb"} <= set(ok) and ok["ok"] is True
    bad = sparring("poll", "nope").out
    assert set(bad) == {"schema_version", "ok", "verb", "error"}
    assert bad["ok"] is False and bad["verb"] == "poll"
    assert {"code", "message", "hint"} <= set(bad["error"])
    assert all(isinstance(bad["error"][k], str) and bad["error"][k] for k in
               ("code", "message", "hint"))


def test_usage_errors_are_json_too(sparring: Any, repo: Path) -> None:
    for args in (["start"], ["wait", "x", "--timeout", "soon"], ["frobnicate"],
                 ["start", "x", "--effort", "maximum"]):
        result = sparring(*args)
        assert result.exit_code == 2, args
        assert result.out["error"]["code"] == "usage_error"
        assert "--help" in result.out["error"]["hint"]


def test_help_is_plain_text_and_complete(sparring: Any) -> None:
    for verb in ("init", "start", "poll", "wait", "resume", "stop", "finalize", "status",
                 "doctor"):
        result = sparring(verb, "--help")
        assert result.exit_code == 0 and result.out == {}
        assert f"Usage: sparring {verb}" in result.raw
    assert "running|completed|failed|timeout|stalled|stopped" in sparring("poll", "--help").raw


def test_the_documented_purposes_and_statuses_are_the_printed_ones(
        sparring: Any, repo: Path, fake_codex: Any, scratch: Path) -> None:
    """docs/runner.md lists contract.PURPOSES and states.REPORTED (generated): every turn a
    workflow starts prints one of them, and each of them is printed by some turn."""
    purposes, statuses = set(), set()

    def seen(out: dict[str, Any]) -> dict[str, Any]:
        purposes.add(out["purpose"])
        statuses.add(out["status"])
        return out

    # round, failed, then its recovery; a running turn, stopped
    free = sparring("init", "--skill", "deep-discussion").out["session"]
    fake_codex.script([{"mode": "rate_limited"}, "recovered", {"mode": "hang"}])
    sparring("start", free, input=b"q")
    assert seen(sparring("wait", free, "--timeout", "30").out)["status"] == "failed"
    sparring("resume", free, "--recover")
    assert seen(sparring("wait", free, "--timeout", "30").out)["status"] == "completed"
    sparring("resume", free, input=b"a round that hangs")
    seen(sparring("poll", free).out)
    seen(sparring("stop", free).out)
    # think-about: an answer that breaks its schema is asked again once (reask)
    debate = sparring("init", "--skill", "think-about").out["session"]
    fake_codex.script(["not the JSON asked for", {"reply": {"position": "still no points"}}])
    sparring("start", debate, "--template", "think-about/round1", "--var", "QUESTION=q")
    seen(sparring("wait", debate, "--timeout", "30").out)  # the re-ask, withheld
    (scratch / "analysis.md").write_text("# mine\n")
    seen(sparring("wait", debate, "--timeout", "30", "--seal", str(scratch / "analysis.md")).out)
    # think-about: a round-one agreement nobody disputed is challenged first (challenge), and
    # a concession made without new evidence is sent back once (reconsider)
    tested = sparring("init", "--skill", "think-about").out["session"]
    fake_codex.script([
        {"reply": answer([cpt("X-1", "agree")], "agree", proposed="X-1 holds.")},
        {"reply": answer([cpt("X-2", "agree", "an objection")])},
        {"reply": answer([cpt("X-2", "withdraw", note="it does not hold")])},
        {"reply": answer([cpt("X-2", "withdraw", note="it does not hold, still")])}],
        restart=True)
    sparring("start", tested, "--template", "think-about/round1", "--var", "QUESTION=q")
    sparring("wait", tested, "--timeout", "30")
    (scratch / "analysis.md").write_text("# mine\n")  # the inbox's file was taken at its seal
    seen(sparring("wait", tested, "--timeout", "30", "--seal", str(scratch / "analysis.md")).out)
    verdicts = [{"points": [pt("X-1", "agree", cls="genuine_agreement")],
                 "convergence": {"state": "agree", "reason": "r"}, "approve_summary": "S-1"},
                {"points": [pt("X-2", "disagree", cls="genuine_disagreement")],
                 "convergence": {"state": "continue", "reason": "r"}}]
    for n, verdict in enumerate(verdicts):
        (scratch / f"verdict-{n}.json").write_text(json.dumps(verdict))
        sparring("verdict", tested, "--file", str(scratch / f"verdict-{n}.json"))
        seen(sparring("wait", tested, "--timeout", "30").out)
    # deep-discussion: the synthesis turn
    fake_codex.script(["One.", "The synthesis."])
    talk = sparring("discuss", "new", "--args", "").out["session"]
    sparring("discuss", "frame", talk, input=FRAME)
    sparring("wait", talk, "--timeout", "30")
    assert sparring("discuss", "synthesis", talk).exit_code == 0
    seen(sparring("wait", talk, "--timeout", "30").out)

    assert purposes == set(PURPOSES)
    assert statuses <= set(REPORTED) and {"running", "completed", "failed", "stopped"} <= statuses
    documented = dict((key, meaning) for key, _, meaning in POLL_KEYS)
    assert all(f"`{p}`" in documented["purpose"] for p in PURPOSES)
    assert all(f"`{s}`" in documented["status"] for s in REPORTED)


# -- `--help` of every verb, walked from the click command tree ---------------------------------

def command_tree() -> list[tuple[list[str], click.Command, list[click.Command]]]:
    """(path, command, its ancestors nearest first) for every group and command of the CLI."""
    found = []

    def walk(command: click.Command, path: list[str], ancestors: list[click.Command]) -> None:
        found.append((path, command, ancestors))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, [*path, name], [command, *ancestors])

    walk(cli, [], [])
    return found


def described(help_text: str) -> str:
    """A help page without its usage line and its options: what the verb says it does."""
    return help_text.split("\n", 2)[-1].split("\nOptions:")[0]


TREE = command_tree()


def test_the_tree_has_every_verb_the_docs_name() -> None:
    names = {" ".join(path) for path, _, _ in TREE}
    assert {"init", "start", "wait", "debate new", "discuss round", "guard check",
            "guard accept", "render"} <= names
    assert len([c for _, c, _ in TREE if not isinstance(c, click.Group)]) >= 25


@pytest.mark.parametrize("path, command, ancestors", TREE,
                         ids=[" ".join(path) or "sparring" for path, _, _ in TREE])
def test_help_of_every_verb_names_and_explains_everything_it_takes(
        sparring: Any, path: list[str], command: click.Command,
        ancestors: list[click.Command]) -> None:
    result = sparring(*path, "--help")
    assert result.exit_code == 0 and result.out == {}, result.raw[:300]
    assert result.raw.startswith(f"Usage: {' '.join(['sparring', *path])} ")
    assert command.help and described(result.raw).strip(), "the verb says what it does"
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help and param.help.strip(), f"{param.opts} has no help text"
            for flag in [*param.opts, *param.secondary_opts]:
                assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", result.raw), flag
        else:
            # An argument is explained by the verb, or by the group above it when every verb
            # shares it (SESSION, in `sparring --help`).
            name = (param.metavar or param.name or "").strip("[].").upper()
            pages = [described(result.raw)] + [
                described(sparring(*path[:len(path) - i], "--help").raw)
                for i in range(1, len(ancestors) + 1)]
            assert any(re.search(rf"\b{name}\b", page) for page in pages), \
                f"`sparring {' '.join(path)} --help` does not explain {name}"
