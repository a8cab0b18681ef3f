"""`sparring doctor`: a verdict, and a hint for every problem."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any


def checks(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in out["checks"]}


def test_ready_with_a_codex_that_accepts_every_flag(sparring: Any, repo: Path,
                                                    fake_codex: Any) -> None:
    result = sparring("doctor")
    assert result.exit_code == 0
    assert result.out["ready"] is True, result.out
    found = checks(result.out)
    assert "0.169.0" in found["codex_version"]["detail"]
    assert found["codex_flags"]["ok"] and found["project"]["ok"]


def test_missing_codex_is_not_ready_with_the_install_hint(sparring: Any, repo: Path,
                                                          monkeypatch: Any) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    out = sparring("doctor").out
    assert out["ready"] is False
    assert "npm install -g @openai/codex" in out["hints"][0]


def test_a_codex_lacking_a_flag_we_pass_is_named(sparring: Any, repo: Path,
                                                 tmp_path: Path, monkeypatch: Any) -> None:
    old = tmp_path / "old-codex"
    old.write_text("#!/bin/sh\n"
                   'if [ "$1" = "--version" ]; then echo "codex-cli 0.40.0"; exit 0; fi\n'
                   "echo '  --json  Print events'\necho '  -c, --config <key=value>'\n"
                   "echo '  -s, --sandbox <MODE>'\n")
    old.chmod(old.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SPARRING_CODEX", str(old))
    out = sparring("doctor").out
    flags = checks(out)["codex_flags"]
    assert out["ready"] is False and not flags["ok"]
    assert "--output-schema" in flags["detail"] and "--skip-git-repo-check" in flags["detail"]
    assert "upgrade codex" in flags["hint"]


def test_invalid_config_is_reported(sparring: Any, repo: Path, fake_codex: Any) -> None:
    (repo / "sparring.yaml").write_text("efort: high\n")
    out = sparring("doctor").out
    assert out["ready"] is False
    assert "unknown setting 'efort'" in checks(out)["config"]["detail"]
