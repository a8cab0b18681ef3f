"""A word of a command sparring prints, quoted for a POSIX shell: one helper for them all.

Every command sparring prints for someone to run holds its paths through `shell_word`: the
runner's JSON (`next.command`, a hint's `sparring …`), an error's fix, doctor's hints,
install.py's next step and its uninstall's `rm -rf` lines. The launcher (scripts/launcher.sh)
prints its one hint before any Python runs; its `word` function spells a word the same way,
and tests/test_printed_commands.py holds the two together. Native Windows is refused
(host.py), so the shells are POSIX ones (sh, bash, zsh).
"""

from __future__ import annotations

import os
import shlex

# The characters shlex.quote leaves unquoted.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")
# What a shell still reads inside double quotes (and `!`, which bash may expand there), or
# what cannot be in one word.
_SPECIAL_IN_DOUBLE_QUOTES = frozenset('$`"\\!\n')


def shell_word(text: str) -> str:
    """`text` as one word of a command line: as it is when nothing in it needs quoting,
    else in double quotes when that is enough (a path with a space, or a '), else
    shlex.quote.

    Claude Code's permission rules match a command as written, and of the quoted spellings
    of a path with a space only the double-quoted one can match a rule (`Bash("…" *)`, as
    the skills and install.py write them): in single quotes or with backslashes, every
    call would stop to ask the user."""
    if _SAFE.issuperset(text) and text:
        return text  # what shlex.quote would return
    if not _SPECIAL_IN_DOUBLE_QUOTES.intersection(text):
        return f'"{text}"'
    return shlex.quote(text)


def here(path: str) -> str:
    """A file sparring made, as a command it prints names it: relative to the folder the
    command runs in (this process's, which Claude's next call shares) when it lies below it,
    else whole. The output stays short, and holds no absolute path the next step does not
    need."""
    top = os.getcwd().rstrip(os.sep) + os.sep
    return path[len(top):] if path.startswith(top) and len(path) > len(top) else path


def path_word(path: str | os.PathLike[str]) -> str:
    """A file or folder sparring made, as one word of a command it prints (here, then
    shell_word)."""
    return shell_word(here(os.fspath(path)))
