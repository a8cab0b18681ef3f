"""The command line: the verbs declared (verbs.py), click built from the declarations
(main.py), one verb run and printed (verb.py). Nothing below imports it."""
