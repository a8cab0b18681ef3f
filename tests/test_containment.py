"""A debate turn runs Codex with nothing that escapes the record: sub-agents, memories and
hooks off (`--disable …` on codex's command line) in every kind of turn, through the CLI
against the fake codex. Only the user's own config file keeps sub-agents or hooks on;
sparring.yaml, an option and a config file the project reaches cannot, and the last gate
refuses a command line that leaves on what the user did not keep on. The real codex:
tests/integration/test_containment_real_codex.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from sparring import config
from sparring.codex import sandbox
from support.debates import Debate, answer, cpt, pt, quoted, reading

FEATURES = ("multi_agent", "multi_agent_v2", "memories", "hooks")
ALLOWED = sandbox.Allowance("read-only", "default", None)


def disabled(argv: Sequence[str]) -> set[str]:
    """The features codex's command line turns off."""
    return {argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "--disable"}


def user_config(text: str) -> Path:
    """The user's own config file, theirs alone (0600), under the test's HOME."""
    path = Path.home() / ".config" / "sparring" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
    return path


def turns_of(repo: Path, sid: str) -> list[dict[str, Any]]:
    data = json.loads((repo / ".sparring" / "sessions" / sid / "session.json").read_text())
    turns: list[dict[str, Any]] = data["turns"]
    return turns


def test_every_kind_of_turn_runs_codex_with_sub_agents_memories_and_hooks_off(
        sparring: Any, fake_codex: Any, scratch: Path, repo: Path) -> None:
    """Round one, its re-ask, a later round, a reconsider, a challenge and a recovery."""
    (repo / "store.py").write_text(STORE)
    sids = [_reconsidered(Debate(sparring, fake_codex, scratch)),
            _challenged(Debate(sparring, fake_codex, scratch)), _recovered(sparring, fake_codex)]

    purposes = {t["purpose"] for sid in sids for t in turns_of(repo, sid)}
    assert {"round", "reask", "reconsider", "challenge", "recovery"} <= purposes, purposes
    for call in fake_codex.turn_calls():
        assert disabled(call["argv"]) == set(FEATURES), call["argv"]
    for sid in sids:
        for turn in turns_of(repo, sid):
            ran = {k: turn["settings"][k] for k in ("subagents", "memories", "hooks")}
            assert ran == {"subagents": False, "memories": False, "hooks": False}, turn


STORE = "import redis\n\nTTL = 30\nttl = refresh(ttl)  # every read writes\nREPLICAS = 3\n"
_GOON = {"convergence": {"state": "continue", "reason": "open"}}


def _reconsidered(debate: Debate) -> str:
    """A re-asked round one, a later round, and a concession sent back (reconsider)."""
    debate.fake.script([
        {"reply": "not the JSON asked for"},
        {"reply": answer([cpt("X-1", "agree", "Redis for sessions")])},
        {"reply": answer([cpt("X-1", "agree"),
                          cpt("C-1", "disagree", "SQLite is enough", evidence=[])])},
        {"reply": answer([cpt("X-1", "agree"), cpt("C-1", "agree", evidence=[])])},
        {**reading("store.py"), "reply": answer([cpt("X-1", "agree"), cpt(
            "C-1", "agree", evidence=[quoted("store.py:5", "REPLICAS = 3")])])}],
        restart=True)
    debate.start()
    debate.seal("# Mine\n- C-1: SQLite is enough.\n")
    debate.wait()
    debate.next_round(debate.verdict({"points": [
        pt("X-1", "disagree", cls="genuine_disagreement", note="SQLite is enough"),
        pt("C-1", "agree", cls="claude_only")], **_GOON}).out)
    third = debate.next_round(debate.verdict({"points": [
        pt("X-1", "disagree", cls="genuine_disagreement"),
        pt("C-1", "agree", cls="claude_only", evidence=[quoted("store.py:4",
                                                               "ttl = refresh(ttl)")])],
        **_GOON}).out)
    assert third["purpose"] == "reconsider", third
    return debate.sid


def _challenged(debate: Debate) -> str:
    """A cheap consensus tested on a fresh thread (challenge)."""
    withdrawn = debate.withdrawn_claim(restart=True)
    assert withdrawn.out["kind"] == "challenge", withdrawn.raw
    assert debate.wait()["purpose"] == "challenge"
    return debate.sid


def _recovered(sparring: Any, fake_codex: Any) -> str:
    """A failed round picked up again (recovery)."""
    fake_codex.mode("crash")
    sid = str(sparring("init", "--skill", "deep-discussion").out["session"])
    sparring("start", sid, input=b"q")
    assert sparring("wait", sid).out["status"] == "failed"
    fake_codex.mode("ok")
    assert sparring("resume", sid, "--recover").exit_code == 0
    sparring("wait", sid)
    return sid


def test_the_users_config_file_keeps_sub_agents_or_hooks_on_read_afresh_each_turn(
        sparring: Any, fake_codex: Any, session: str, repo: Path) -> None:
    path = user_config("codex_subagents: true\ncodex_hooks: true\n")
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    sparring("wait", session)
    path.write_text("codex_hooks: true\n")  # sub-agents off again from the next turn
    sparring("resume", session, input=b"two")
    sparring("wait", session)

    first, second = (c["argv"] for c in fake_codex.turn_calls_once(2))
    assert disabled(first) == {"memories"}
    assert disabled(second) == {"multi_agent", "multi_agent_v2", "memories"}
    for argv in (first, second):  # the project's own hooks never: its .codex/ untrusted
        table = argv[argv.index("-c", argv.index("-c") + 1) + 1]
        assert table == "projects=" + config.untrusted_table([str(repo)])
    one, two = turns_of(repo, session)
    assert (one["settings"]["subagents"], one["settings"]["hooks"]) == (True, True)
    assert (two["settings"]["subagents"], two["settings"]["hooks"]) == (False, True)
    assert one["settings"]["memories"] is False is two["settings"]["memories"]


@pytest.mark.parametrize("line", ["codex_hooks: true", "codex_subagents: true",
                                  "hooks: true", "subagents: true", "memories: true"])
def test_a_committed_sparring_yaml_cannot_keep_them_on(
        sparring: Any, fake_codex: Any, session: str, repo: Path, line: str) -> None:
    (repo / "sparring.yaml").write_text(line + "\n")
    fake_codex.mode("ok")

    refused = sparring("start", session, input=b"q")

    assert refused.exit_code == 1 and refused.out["error"]["code"] == "config_invalid"
    assert "unknown setting" in refused.out["error"]["message"] and refused.out["error"]["hint"]
    assert fake_codex.turn_calls() == []


@pytest.mark.parametrize("flag", ["--hooks", "--subagents", "--memories"])
def test_no_option_keeps_them_on(sparring: Any, fake_codex: Any, session: str,
                                 flag: str) -> None:
    refused = sparring("start", session, flag, input=b"q")
    assert refused.exit_code != 0 and refused.out["error"]["code"] == "usage_error"
    assert fake_codex.turn_calls() == []


def test_a_config_file_the_project_reaches_keeps_nothing_on(
        sparring: Any, fake_codex: Any, session: str, repo: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    inside = repo / "cfg" / "sparring" / "config.yaml"
    inside.parent.mkdir(parents=True)
    inside.write_text("codex_subagents: true\ncodex_hooks: true\n")
    inside.chmod(0o600)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(repo / "cfg"))
    fake_codex.mode("ok")

    sparring("start", session, input=b"q")
    sparring("wait", session)

    assert disabled(fake_codex.turn_calls_once(1)[0]["argv"]) == set(FEATURES)


@pytest.mark.parametrize("text", ["codex_hooks: 1\n", "codex_subagents: maybe\n",
                                  "codex_memories: true\n"])
def test_a_bad_value_in_the_users_config_file_is_config_invalid(
        sparring: Any, fake_codex: Any, session: str, text: str) -> None:
    path = user_config(text)

    refused = sparring("start", session, input=b"q")

    assert refused.exit_code == 1, refused.raw
    error = refused.out["error"]
    assert error["code"] == "config_invalid" and str(path) in error["message"]
    assert error["hint"]
    assert fake_codex.turn_calls() == []


def test_the_gate_refuses_a_command_line_that_leaves_on_what_the_user_did_not_keep_on(
        tmp_path: Path) -> None:
    argv = ["codex", "exec", "--json", "--skip-git-repo-check",
            *[w for f in FEATURES for w in ("--disable", f)], "-s", "read-only",
            "-C", str(tmp_path), "-"]
    assert sandbox.refusal(argv, ALLOWED) is None

    def without(feature: str) -> list[str]:
        at = argv.index(feature)
        return argv[:at - 1] + argv[at + 1:]

    for feature in FEATURES:
        assert sandbox.refusal(without(feature), ALLOWED) is not None, feature
    keeping = ALLOWED._replace(keeps=("subagents", "hooks"))
    assert sandbox.refusal(without("multi_agent"), keeping) is None
    assert sandbox.refusal(without("hooks"), keeping) is not None, "the project's own"
    untrusting = ["-c", "projects=" + config.untrusted_table([str(tmp_path)])]
    assert sandbox.refusal([*argv[:2], *untrusting, *without("hooks")[2:]], keeping) is None
    for forged in (f'projects={{"{tmp_path}"={{trust_level="trusted"}}}}', "projects={}",
                   f'projects={{"{tmp_path}"={{trust_level="untrusted"}},x=1}}'):
        assert sandbox.refusal([*argv[:2], "-c", forged, *without("hooks")[2:]],
                               keeping) is not None, forged
    assert sandbox.refusal(without("memories"), keeping) is not None, "never kept on"
    forged = [*argv[:2], "--disable", "sandbox", *argv[2:]]
    assert sandbox.refusal(forged, ALLOWED) is not None, "a feature no row names"


def test_doctor_shows_what_is_on(sparring: Any, repo: Path) -> None:
    def containment() -> dict[str, Any]:
        out = sparring("doctor", "--json").out
        found: dict[str, Any] = {c["name"]: c for c in out["checks"]}["containment"]
        return found

    off = containment()
    assert off["level"] == "ok"
    assert off["detail"] == ("debate turns run Codex with subagents off, memories off, "
                             "hooks off")
    path = user_config("codex_hooks: true\n")
    on = containment()
    assert on["detail"] == (f"debate turns run Codex with subagents off, memories off, "
                            f"hooks on (your {path}); the project's own hooks never (its "
                            ".codex/ is not loaded)")
    user_config("codex_hooks: sometimes\n")
    bad = containment()
    assert bad["level"] == "problem" and str(path) in bad["detail"] and bad["hint"]
