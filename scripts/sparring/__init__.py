"""sparring: Claude and Codex work through a hard technical question together."""

__version__ = "0.1.0"
