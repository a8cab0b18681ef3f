"""State on disk: sessions and their typed records, the workspace, what a verb reads."""
