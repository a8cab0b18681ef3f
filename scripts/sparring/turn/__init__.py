"""One Codex turn: launched, run by a background runner, watched, ended, shown."""
