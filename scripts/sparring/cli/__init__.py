"""The command line: the first door (`python -m sparring`), click's wiring of the verbs, the
background runner's entry. Nothing below imports it."""
