"""The file-modification guard: did a Codex turn change the user's files?

`snapshot.take` records the tree before a turn, `check.compare` lists what differs after
it, `undo.revert` puts back what can be put back, and never destroys anything. How it works
(what counts as a change, what git vouches for, copies, areas, revert, submodules and git's
own folder): docs/guard.md. One module per part, each imported where it is used: files,
copies, gitlist, model, records, baseline, snapshot and check, undo; git.py runs every git
command the guard needs.
"""
