"""Fixtures for integration tests that run the real Codex CLI / Claude Code.

Each test gets fresh mocks on loopback and fresh CODEX_HOME / HOME directories
under `tmp_path`; the binaries are looked up once per session and the test is
skipped (failed when CI=true) if one is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.binaries import (
    CLAUDE_OLD_VERSION,
    find_claude,
    find_codex,
    require_binary,
)
from support.messages_mock import MessagesMock
from support.responses_mock import ResponsesMock


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return require_binary("codex", find_codex())


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return require_binary("claude", find_claude())


@pytest.fixture(scope="session")
def claude_bin_197() -> Path:
    """Claude Code 2.1.197 (the last release for Node < 22); optional even in CI."""
    name = f"claude {CLAUDE_OLD_VERSION}"
    return require_binary(name, find_claude(CLAUDE_OLD_VERSION), required_in_ci=False)


@pytest.fixture(params=["current", CLAUDE_OLD_VERSION])
def claude_each(request: pytest.FixtureRequest) -> Path:
    """Each Claude Code version in turn: the current pin, then 2.1.197 when installed."""
    fixture = "claude_bin" if request.param == "current" else "claude_bin_197"
    path: Path = request.getfixturevalue(fixture)
    return path


@pytest.fixture
def responses_mock() -> Iterator[ResponsesMock]:
    with ResponsesMock() as mock:
        yield mock
    assert not mock.errors, f"responses mock behaviours raised: {mock.errors!r}"


@pytest.fixture
def messages_mock() -> Iterator[MessagesMock]:
    with MessagesMock() as mock:
        yield mock
    assert not mock.errors, f"messages mock behaviours raised: {mock.errors!r}"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty working directory (not a git repository) for the child process."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def codex_home(tmp_path: Path, responses_mock: ResponsesMock) -> Path:
    """A fresh CODEX_HOME whose config.toml points at `responses_mock`."""
    return responses_mock.codex_home(tmp_path / "codex-home")


@pytest.fixture
def codex_env(tmp_path: Path, responses_mock: ResponsesMock, codex_home: Path) -> dict[str, str]:
    return responses_mock.codex_env(codex_home, home=tmp_path / "codex-user-home")


@pytest.fixture
def real_codex(codex_bin: Path, codex_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real codex for sparring's turns, pointed at `responses_mock` (a module may
    override it, as test_processes_real_codex.py does for its sandbox)."""
    monkeypatch.setenv("SPARRING_CODEX", str(codex_bin))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("MOCK_OPENAI_KEY", "dummy")
    return codex_bin


@pytest.fixture
def claude_env(tmp_path: Path, messages_mock: MessagesMock) -> dict[str, str]:
    """The offline Claude Code environment with a fresh HOME, pointing at `messages_mock`."""
    return messages_mock.claude_env(tmp_path / "claude-home")
