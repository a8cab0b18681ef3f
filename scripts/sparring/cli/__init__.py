"""The command line: the entry (`python -m sparring`), click's wiring of the verbs, the
background runner's entry. Nothing below imports it."""
