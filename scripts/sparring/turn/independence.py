"""Independence, checked: did anything Codex did in round one show it Claude's analysis?

By mechanism, Codex's round one cannot read Claude's analysis: the runner takes no seal
while a round-one turn can still run (turn/barrier.py), and the skills have Claude write its
analysis only once round one has ended, so it lies nowhere while Codex works. What no
mechanism of sparring's covers is checked here, once, when the analysis is sealed: a copy
elsewhere that Codex found (the user's draft in the temp folder, another tool's notes), and
sparring's own records read by a Codex that went looking. The runner reads every item Codex
produced in round one (the commands it ran and their output, its tool calls and searches),
from its events, which lie out of the project, and looks for:

- **text of Claude's analysis**: a run of `WORDS` words of the analysis (compared as
  lower-case words, a character of Chinese, Japanese or Korean counting as one: spacing,
  case, punctuation and markup do not hide a copy) in a command or its output that is in
  none of Codex's round-one prompts (it was asked that) and in none of the project's own
  text (Claude quotes the code Codex reads: that is no leak). The project's own text is
  what it held before round one: its files not changed since round one began (a file
  written after, the analysis's own included, excuses nothing), links into the project
  followed; and, where it is a git repository, its recent commit messages and the
  committed version of each file a command named;
- **a read of sparring's records**: a command naming a place below `.sparring/` other than
  this session's own folder (which holds nothing Codex was not sent) and not as something
  to leave out (`-g '!.sparring'`, `-not -path`, `--exclude`), or sparring's state folder,
  where it keeps copies of its records out of the project; or output showing the content
  of a file there as a search does (`path:text`).

Either voids independence for the session (workflows/audit.py): no point is `independent`,
and the report names the command. The result is recorded in the session's engine record
(`independence`) when the seal is taken: later turns may change the project, and the
check must not learn from them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sparring.codex import rollout
from sparring.errors import SparringError
from sparring.guard.git import Git
from sparring.jsontext import loads_kept, text_of
from sparring.paths import read_own
from sparring.store import locate, shapes
from sparring.store.locate import PROMPT_FILE, STATE_DIR
from sparring.store.sessions import Session
from sparring.turn.view import seen

WORDS = 8  # the shortest run of words taken for a copy of the analysis
# A word; a character of the scripts written without spaces (CJK) is one word of its own.
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|\w+")
# What the runner reads of the project to tell the code Claude quotes from a copy: files of
# at most this size, this many files and bytes in all (what it could not read is said).
_FILE_LIMIT = 16 * 1024 * 1024
_FILES_AT_MOST = 50_000
_BYTES_AT_MOST = 512 * 1024 * 1024
_SKIP_DIRS = frozenset({".git", STATE_DIR})
_COMMITS = 500  # the commit messages read, newest first
_COMMITTED_FILES = 50  # the committed files read, of those the commands named
_SHOWN = 300  # characters of a command, as the report names it
_AGENTS_AT_MOST = 64  # the sub-agents' rollouts read, of a round one
# A path below `.sparring/` as a command or an output spells it.
_RECORD_PATH = re.compile(r"[^\s'\"`;|&<>()=]*\.sparring(?:/[^\s'\"`;|&<>():]*)?")
# What names a place only to leave it out: a glob's `!`, find's `-not -path`/`-prune`, grep's
# and rsync's `--exclude`, rg's `--glob !`.
_LEAVING_OUT = re.compile(r"(?:!|-not\s+-(?:i?path|name)\s+|--exclude(?:-dir)?[=\s]\s*|"
                          r"-path\s+)['\"]?\S*$")
_TOP_LEVEL = frozenset({"", "/", "/sessions", "/sessions/"})  # folders, holding no text
_PATHLIKE = re.compile(r"[\w./-]+")  # how a command or its output spells a file


def verdict(check: dict[str, Any] | None) -> dict[str, Any]:
    """What a check on record means: `checked` (it found nothing: `why` says how it was
    checked), `void` (Codex saw Claude's analysis or sparring's records: `seen` names each
    command, `why` the first), or `not_measured` (no check on record, or it could not read
    what Codex did)."""
    if check is None:
        return {"state": "not_measured", "seen": [], "why": (
            "the runner's check of Codex's round one is not on record (sealed by an earlier "
            "sparring, which did not check)")}
    if check.get("unchecked"):
        return {"state": "not_measured", "why": check["unchecked"], "seen": []}
    seen = list(check.get("seen") or [])
    if seen:
        first = seen[0]
        what = ("text of Claude's analysis" if first["saw"] == "analysis"
                else "sparring's own records")
        more = f" (and {len(seen) - 1} more)" if len(seen) > 1 else ""
        did = first["command"]  # a command's label is its code span; another item's, named
        did = f"command {did}" if did.startswith("`") else did
        return {"state": "void", "seen": seen, "why": (
            f"in round one Codex's {did} showed it {what}{more}")}
    return {"state": "checked", "seen": [], "why": _how(check)}


def _how(check: dict[str, Any]) -> str:
    n, items = check.get("commands", 0), check.get("items", 0)
    return (f"Claude sealed its analysis after Codex's round one had ended, and the runner "
            f"read what Codex did in round one ({n} command{'s' if n != 1 else ''} and "
            f"{items} output{'s' if items != 1 else ''}, {check.get('bytes', 0):,} bytes): "
            f"none held a run of {check.get('words', WORDS)} words of Claude's analysis that "
            "neither its prompt nor the project's files hold, and none read sparring's "
            "records")


class Piece:
    """One thing Codex did in round one (`label`), and the text it wrote doing it (a
    command) or saw (`output`)."""
    def __init__(self, turn: int, label: str, text: str, output: bool) -> None:
        self.turn, self.label, self.text, self.output = turn, label, text, output


def check(session: Session, data: dict[str, Any], analysis: str) -> dict[str, Any]:
    """What Codex's round one showed it of Claude's analysis and of sparring's records, as the
    engine record keeps it: `seen` (empty when nothing), what was read, and anything the
    runner could not read (`unchecked`: then independence is not measured)."""
    turns = [t for t in data["turns"] if t["round"] == 1]
    pieces, missing, unread = _pieces(session, turns, data.get("thread_id"))
    found: dict[str, Any] = {
        "checked_at": time.time(), "turns": [t["n"] for t in turns], "words": WORDS,
        "commands": sum(1 for p in pieces if not p.output),
        "items": sum(1 for p in pieces if p.output),
        "bytes": sum(len(p.text.encode("utf-8", "replace")) for p in pieces),
        "seen": [], "unchecked": None, "project_files_read": 0}
    if missing:
        found["unchecked"] = ("Codex's events of round one are missing or unreadable (turn "
                              f"{', '.join(map(str, missing))}): what it did cannot be checked")
        return found
    if unread:
        found["unchecked"] = ("a sub-agent Codex ran in round one left no rollout the runner "
                              f"could read (thread {', '.join(unread)}): what it did cannot "
                              "be checked")
        return found
    if len(words(analysis)) < WORDS:
        found["unchecked"] = (f"the analysis has fewer than {WORDS} words, too few to tell a "
                              "copy of it from chance")
        return found
    found["seen"] += _records_seen(session, data, pieces)
    runs = _runs(analysis) - _prompt_runs(session, turns)
    seen, read = _copies(pieces, runs, data, turns, analysis)
    found["seen"] += seen
    found["project_files_read"] = read
    return found


def _pieces(session: Session, turns: list[dict[str, Any]], thread: Any
            ) -> tuple[list[Piece], list[int], list[str]]:
    """What Codex did in round one's turns (on `thread`); the turns whose events could not
    be read, and the sub-agents whose rollouts could not."""
    pieces: list[Piece] = []
    missing: list[int] = []
    unread: list[str] = []
    for turn in turns:
        view = seen(session, turn["n"])
        if not view.readable:  # gone, or not a plain file of bounded size
            missing.append(turn["n"])
            continue
        agents: list[str] = []
        for item in view.items:
            pieces += _of_item(turn["n"], item)
            agents += _spawned(item)
        found, lost = _of_agents(turn["n"], agents)
        pieces += found
        unread += lost
    if turns and not missing:
        pieces += _of_scripts(turns[-1]["n"], thread)
    return pieces, missing, unread


CODE_MODE = "exec"  # code mode's tool: a script whose own output the events never show


def _of_scripts(n: int, thread: Any) -> list[Piece]:
    """What code mode's scripts wrote and printed in round one, from the thread's rollout:
    the events show the commands a script ran, never what the script itself printed (it may
    print what it computed from them). A thread whose rollout cannot be read adds nothing:
    its events were read all the same."""
    readable = isinstance(thread, str) and shapes.is_thread_id(thread)
    calls = rollout.tool_calls(thread) if readable else None
    return [Piece(n, f"code mode script {_label(call.what)}", text, saw)
            for call in calls or [] if call.kind == CODE_MODE
            for text, saw in ((call.wrote, False), (call.saw, True)) if text]


def _of_item(n: int, item: dict[str, Any]) -> list[Piece]:
    """What Codex wrote doing an item (a command, a tool call's arguments, a search, a
    sub-agent's task) and what it saw (the command's output, the tool's result, what a
    sub-agent answered), as text: every string of it (jsontext.text_of), never JSON's
    escapes, which would split a line's words. Codex's reasoning and warnings are its
    own words, not something it saw; an item kind codex adds later is what it saw."""
    kind = item.get("type")
    if kind in ("reasoning", "error", "agent_message"):
        return []
    wrote, saw, label = _parts(kind, item)
    found = [Piece(n, label, wrote, False)] if wrote else []
    return found + ([Piece(n, label, saw, True)] if saw else [])


def _parts(kind: Any, item: dict[str, Any]) -> tuple[str, str, str]:
    """(what Codex wrote, what it saw, the item as a report names it)."""
    if kind == "command_execution":
        command = str(item.get("command") or "")
        return command, str(item.get("aggregated_output") or ""), _label(command)
    if kind == "mcp_tool_call":
        name = f"{item.get('server')}.{item.get('tool')}"
        arguments = item.get("arguments")
        said = json.dumps(arguments, ensure_ascii=False) if arguments is not None else ""
        wrote = f"{name} {text_of(arguments)}"
        saw = "\n".join(part for part in (_unwrapped(text_of(item.get("result"))),
                                           text_of(item.get("error"))) if part)
        return wrote, saw, f"MCP tool call {_label(f'{name} {said}'.strip())}"
    if kind == "web_search":
        wrote = "\n".join(part for part in (str(item.get("query") or ""),
                                             text_of(item.get("action"))) if part)
        return wrote, "", f"web search {_label(item.get('query') or wrote)}"
    if kind == "collab_tool_call":
        wrote = str(item.get("prompt") or "")
        called = f"{item.get('tool')} {wrote}".strip()
        return wrote, text_of(item.get("agents_states")), f"sub-agent call {_label(called)}"
    rest = text_of({k: v for k, v in item.items() if k not in ("id", "type")})
    if kind in ("file_change", "todo_list", "plan"):  # what Codex wrote
        return rest, "", f"{kind} {_label(rest)}"
    what = item.get("query") or item.get("tool") or ""
    return "", rest, f"{kind or 'an item'} {_label(what) if what else ''}".strip()


def _unwrapped(text: str) -> str:
    """`text`, and where a line of it is JSON (an MCP resource comes back as a JSON text
    holding the file's), that JSON's own strings: their escapes would split its words."""
    found = [text]
    for line in text.splitlines():
        if line.lstrip()[:1] in ("{", "[") and "\\" in line:
            with contextlib.suppress(ValueError):
                found.append(text_of(loads_kept(line)))
    return "\n".join(found)


def _spawned(item: dict[str, Any]) -> list[str]:
    """The sub-agents' threads a `collab_tool_call` names (spawned, messaged, waited for)."""
    if item.get("type") != "collab_tool_call":
        return []
    threads = item.get("receiver_thread_ids")  # what looks like a thread id, nothing else
    return [t for t in threads if isinstance(t, str) and shapes.is_thread_id(t)] \
        if isinstance(threads, list) else []


def _of_agents(n: int, threads: list[str]) -> tuple[list[Piece], list[str]]:
    """What each sub-agent Codex ran in round one did, read from its own rollout (a
    sub-agent's commands never reach the primary thread's events), and the sub-agents it
    spawned in turn; the threads whose rollout could not be read (or, past the most it
    reads, was not)."""
    pieces: list[Piece] = []
    queue, done, lost = list(dict.fromkeys(threads)), set[str](), []
    while queue and len(done) < _AGENTS_AT_MOST:
        thread = queue.pop(0)
        if thread in done:
            continue
        done.add(thread)
        calls = rollout.tool_calls(thread)
        if calls is None:
            lost.append(thread)
            continue
        for call in calls:
            label = f"sub-agent {thread[:8]}'s {call.kind} {_label(call.what)}"
            pieces += [Piece(n, label, text, seen) for text, seen in
                       ((call.wrote, False), (call.saw, True)) if text]
            queue += [t for t in call.agents if shapes.is_thread_id(t)]
    return pieces, lost + [t for t in dict.fromkeys(queue) if t not in done]


def _label(command: Any) -> str:
    """The command as a report names it: a code span, which a backtick in it cannot end."""
    text = " ".join(str(command or "").split())
    text = text if len(text) <= _SHOWN else text[:_SHOWN - 1] + "…"
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


# -- text of the analysis -------------------------------------------------------------------


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _runs(text: str) -> set[tuple[str, ...]]:
    """Every run of WORDS words of `text`."""
    found = words(text)
    return {tuple(found[i:i + WORDS]) for i in range(len(found) - WORDS + 1)}


def _hits(text: str, wanted: set[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """The runs of `wanted` that `text` holds."""
    if not wanted:
        return set()
    found = words(text)
    return {run for i in range(len(found) - WORDS + 1)
            if (run := tuple(found[i:i + WORDS])) in wanted}


def _prompt_runs(session: Session, turns: list[dict[str, Any]]) -> set[tuple[str, ...]]:
    """The runs of what Codex was asked in round one: it read that in its prompt."""
    found: set[tuple[str, ...]] = set()
    for turn in turns:
        raw = read_own(session.turn_path(turn["n"], PROMPT_FILE), _FILE_LIMIT) or b""
        found |= _runs(raw.decode("utf-8", "replace"))
    return found


def _copies(pieces: list[Piece], wanted: set[tuple[str, ...]], data: dict[str, Any],
            turns: list[dict[str, Any]], analysis: str) -> tuple[list[dict[str, Any]], int]:
    """The pieces holding a run of the analysis that the project's own files do not hold."""
    hits = {id(p): _hits(p.text, wanted) for p in pieces}
    suspect = set().union(*hits.values()) if hits else set()
    if not suspect:
        return [], 0
    changed = {str(c.get("path")) for t in turns for c in (t.get("guard") or {}).get(
        "changed", []) if isinstance(c, dict)}
    hints = [text for p in pieces if hits[id(p)] for text in (p.label, p.text)] + [analysis]
    since = min(float(t["created_at"]) for t in turns)
    quoted, read, short = _in_project(data["root"], suspect, changed, hints, since)
    if suspect - quoted:
        quoted |= _in_git(data["root"], suspect - quoted, hints)
    seen = []
    for piece in pieces:
        leaked = hits[id(piece)] - quoted
        if leaked:
            what = "output" if piece.output else "command"
            seen.append({"turn": piece.turn, "command": piece.label, "saw": "analysis",
                         "detail": f"its {what} holds Claude's analysis: "
                                   f"\"{' '.join(sorted(leaked)[0])}\""
                                   + (f" ({short})" if short else "")})
    return seen, read


def _in_project(root: str, runs: set[tuple[str, ...]], changed: set[str],
                hints: list[str], since: float) -> tuple[set[tuple[str, ...]], int, str]:
    """Which of `runs` the project's own files hold (those as they were before round one
    began at `since`, and that its turns did not change), how many files were read, and
    what was not read (when the limits stopped it)."""
    left, found, read, size = set(runs), set[tuple[str, ...]](), 0, 0
    for path in _files(root, changed, hints, since):
        if not left:
            break
        if read >= _FILES_AT_MOST or size >= _BYTES_AT_MOST:
            return found, read, (f"the runner read {read:,} of the project's files, "
                                 "the most it reads, and did not find it there")
        raw = read_own(path, _FILE_LIMIT)
        if raw is None or b"\0" in raw[:8192]:
            continue
        read, size = read + 1, size + len(raw)
        held = _hits(raw.decode("utf-8", "replace"), left)
        found |= held
        left -= held
    return found, read, ""


def _files(root: str, changed: set[str], hints: list[str], since: float) -> Iterator[str]:
    """The project's files as they were before round one (none changed since `since`, nor
    by a turn), none below `.git/` or `.sparring/`: first those a hint names (the file a
    command printed is most often the one the analysis quotes), then the rest."""
    every = list(_walk(root, changed, since))
    spelled = _spelled(hints)
    named = [p for p in every if os.path.relpath(p, root).replace(os.sep, "/") in spelled]
    yield from named
    chosen = set(named)
    yield from (p for p in every if p not in chosen)


def _spelled(hints: list[str]) -> set[str]:
    """The paths the hints name, as a command or its output spells them (`./x`, and git's
    `a/x` and `b/x` for x)."""
    found = {word.removeprefix("./") for hint in hints for word in _PATHLIKE.findall(hint)}
    return found | {word[2:] for word in found if word.startswith(("a/", "b/"))}


def _walk(root: str, changed: set[str], since: float) -> Iterator[str]:
    """The project's files; a link is followed where it leads into the project (once: a
    folder reached twice is not read again)."""
    real_root, seen = os.path.realpath(root), set()
    for here, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(here)
        if (real != real_root and not real.startswith(real_root + os.sep)) or real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            path = os.path.join(here, name)
            if os.path.relpath(path, root).replace(os.sep, "/") in changed:
                continue
            if _before(path, real_root, since):
                yield path


def _before(path: str, root: str, since: float) -> bool:
    """Whether the file at `path` lies in the project (through any link) and has not changed
    since `since` (its inode's change time, which no write can set back)."""
    real = os.path.realpath(path)
    try:
        return real.startswith(root + os.sep) and os.stat(real).st_ctime < since
    except OSError:
        return False


def _in_git(root: str, runs: set[tuple[str, ...]], hints: list[str]
            ) -> set[tuple[str, ...]]:
    """Which of `runs` the repository's history holds where a command most often shows it:
    its recent commit messages (`git log`) and the committed version of each file the
    hints name (what `git diff` shows removed). git runs as the guard runs it (guard/git.py),
    with nothing the tree configured switched on; an empty set where there is no git."""


    try:
        git = Git(Path(root))
        texts = [git.run("log", "-n", str(_COMMITS), "--format=%B")]
        tracked = set(os.fsdecode(git.run("ls-files", "-z")).split("\0"))
        for path in sorted(_spelled(hints) & tracked)[:_COMMITTED_FILES]:
            with contextlib.suppress(SparringError):
                texts.append(git.run("cat-file", "blob", f"HEAD:{path}"))
    except (SparringError, OSError):
        return set()
    return {run for text in texts for run in _hits(text.decode("utf-8", "replace"), runs)}


# -- sparring's records ---------------------------------------------------------------------


def _records_seen(session: Session, data: dict[str, Any],
                  pieces: Iterable[Piece]) -> list[dict[str, Any]]:
    own = f"/sessions/{session.id}"
    state = _state_spellings()
    seen = []
    for piece in pieces:
        places = [m.group(0) for m in _RECORD_PATH.finditer(piece.text)
                  if (_content_shown(piece.text, m.end()) if piece.output
                      else not _LEAVING_OUT.search(piece.text[:m.end()]))
                  and not _own(m.group(0), own)]
        places += [s for s in state if (_shown_by_name(piece.text, s) if piece.output
                                        else s in piece.text)]
        if places:
            seen.append({"turn": piece.turn, "command": piece.label, "saw": "records",
                         "detail": f"its {'output shows' if piece.output else 'command names'}"
                                   f" sparring's records: {places[0]}"})
    return seen


def _content_shown(text: str, end: int) -> bool:
    """Whether the path ending at `end` of an output is a search's `path:text`, not a
    listing's heading (`path:` at the end of its line)."""
    return text[end:end + 1] == ":" and text[end + 1:end + 2] not in ("", "\n", "\r")


def _own(place: str, own: str) -> bool:
    """A folder of `.sparring/` (no text in it) or this session's own folder."""
    rest = place[place.index(".sparring") + len(".sparring"):]
    return rest in _TOP_LEVEL or rest == own or rest.startswith(own + "/")


def _state_spellings() -> list[str]:
    """How a command may name sparring's state folder: its real path, as the environment
    gives it, and as it is under the home folder (`~/…`, `$HOME/…`)."""
    place = locate.state_home()
    found = {place, os.path.realpath(place)}
    home = os.path.expanduser("~")
    for spelled in list(found):
        if spelled.startswith(home + os.sep):
            rest = spelled[len(home):]
            found |= {f"~{rest}", f"$HOME{rest}", "${HOME}" + rest}
    return sorted(found, key=len, reverse=True)


def _shown_by_name(text: str, place: str) -> bool:
    """Whether output shows a file in `place` as a search shows what it found
    (`path:text`)."""
    return re.search(re.escape(place) + r"[^\s:]*:[^\n\r]", text) is not None
