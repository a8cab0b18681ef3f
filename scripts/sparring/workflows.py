"""The four workflows sparring runs, by name: what a session's `skill` may be.

A module of its own (no imports) so that the lightest readers, poll's fast path among
them, can check a name without loading the configuration.
"""

SKILLS = ("arch-debate", "deep-discussion", "dual-model", "think-about")
