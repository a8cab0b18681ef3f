#!/usr/bin/env python3
"""A faithful fake of the OpenAI Codex CLI 0.171.0 non-interactive surface, for tests.

It mimics `codex exec [OPTIONS] [PROMPT]` and `codex exec [OPTIONS] resume [OPTIONS] [SESSION_ID]
[PROMPT]` as the real CLI behaves (verified against 0.169.0; its help and version are held to
the pinned 0.171.0 by tests/integration/test_mocks_with_real_binaries.py): clap-shaped parsing
of the options that help lists (CommandSpec reads them from it) and usage errors (exit 2),
stdin handling, the pre-thread checks (exit 1), the JSONL event stream (a turn without
`--json`, codex's transcript for a person, is refused: sparring never asks for one), rollout
files under `$CODEX_HOME/sessions`, cumulative thread usage,
`-o`/`--output-schema`, and SIGTERM (143) / SIGINT (1). No network, no model. Put
`tests/support/bin` on PATH to run it as `codex`.

Behaviour is chosen with the environment variables in ENV_DOC (`FAKE_CODEX_HELP=1` prints them).

FAKE_CODEX_SCRIPT names a JSON list; the N-th invocation that reaches a turn (counted across
processes in FAKE_CODEX_STATE_DIR) uses entry N, and the last entry repeats. An entry is a string
(the reply, mode ok) or an object with optional keys `mode`, `reply` (non-strings are sent as
`json.dumps(reply)`), `reasoning`, `delay`, `usage`, `stderr`, `command`, `write_path`,
`write_content`, `delete_path`, `exit_code`; the environment variables fill in missing keys.

With FAKE_CODEX_LOG_DIR set, every invocation writes `call-NNNN.json` (argv, cwd, pid, pgid,
tracked env, prompt, stdin size, mode, thread_id, exit_code, ...) and `call-NNNN.stdin` (the raw
stdin bytes); `read_calls` reads them back. Stdlib only; Python 3.10+.

What a turn prints and writes is the real codex's: every event and every rollout line is the
pinned recording's line of its kind (tests/fixtures/codex/<version>/<scenario>.json), this
run's values put in (Recorded). A mode only chooses which recorded lines to play, with which
text, and which fault to meet; usage is the recorded answer's unless a script entry sets
it.

The suite starts the fake a few thousand times, so its start is kept short: it writes JSON with
`to_json` and imports `json` only where it reads JSON (a script, a schema, a rollout, the
recording a turn's rollout comes from, auth.json), `tomllib` only for a `-c` value that is not
a bare word, `signal` only for a turn, and no `hashlib` (`read_calls` adds the sha256 of what a
call read). Those imports (re, enum, typing, OpenSSL) cost almost half of its start once: a
`--version` took 21 ms of CPU with them and takes 13 (tests/test_fake_codex.py checks that
they stay out).
"""

from __future__ import annotations

import os
import sys
import time

# Startup time matters (tests spawn the fake a lot): no dataclasses/typing/contextlib at runtime.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import json
    from collections.abc import Callable, Iterable
    from typing import Any, NoReturn

HERE = os.path.dirname(os.path.realpath(__file__))
DEFAULT_VERSION = "0.171.0"
DEFAULT_MODEL = "gpt-6.1-sol"
APPROVAL_POLICIES = ("untrusted", "on-failure", "on-request", "granular", "never")
USAGE_KEYS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)
HIGH_DEMAND = "We’re currently experiencing high demand, which may cause temporary errors."
RATE_LIMITED = "exceeded retry limit, last status: 429 Too Many Requests"
WAITING_FOR_NETWORK = (
    "Reconnecting... waiting for network (Connection failed: error sending request)"
)
DEFAULT_DIE_EARLY = "Error: failed to initialize: simulated startup failure"
MAX_INPUT_CHARS = 1_048_576
DEFAULT_WRITE_PATH = "fake_codex_output.txt"
DEFAULT_WRITE_CONTENT = "written by fake codex\n"

ENV_DOC = """\
FAKE_CODEX_MODE           ok|slow|commands|hang|hang_silent|crash|die_early|rate_limited|
                          server_error|offline|malformed|partial_then_hang|no_message|
                          writes_file|spawn_child|ignore_term|usage_error|detach|detach_hang|
                          shell|respawn|respawn_hang|replay (default ok)
FAKE_CODEX_REPLY          agent message text (default: "Fake Codex reply for turn N.")
FAKE_CODEX_REASONING      text of a reasoning item emitted before the answer
FAKE_CODEX_DELAY          seconds for slow (default 2) and server_error (default 0); offline:
                          the first pause between notices (default 5, then doubling)
FAKE_CODEX_RELEASE        slow: a file whose appearance ends the delay early (a test that
                          needs the turn running only until it has done something)
FAKE_CODEX_EVENT_DELAY    seconds to sleep between JSONL lines (default 0)
FAKE_CODEX_USAGE          JSON object overriding this turn's usage keys
FAKE_CODEX_STDERR         stderr text (die_early message; other modes: written at turn start)
FAKE_CODEX_EXIT_CODE      exit code override for modes that end normally
FAKE_CODEX_CRASH_EXIT     crash: exit with this code instead of SIGKILL (e.g. 101)
FAKE_CODEX_COMMAND        commands: the first command's text (default: the recorded one)
FAKE_CODEX_WRITE_PATH     writes_file: file to create/overwrite (relative to the effective cwd)
FAKE_CODEX_WRITE_CONTENT  writes_file: content (default "written by fake codex\\n")
FAKE_CODEX_DELETE_PATH    writes_file: file to delete
FAKE_CODEX_WRITE_APPEND   writes_file: 1 appends the content instead of replacing the file
FAKE_CODEX_SHELL          shell: a command run with /bin/sh -c in the effective cwd, whatever the
                          sandbox (what Codex's exec_command does where the sandbox lets it)
FAKE_CODEX_CHILD_PIDFILE  spawn_child: where to write the grandchild's pid
FAKE_CODEX_SCRIPT         JSON list of per-turn entries (string or object), see module doc
FAKE_CODEX_STATE_DIR      counter directory for the script (default $CODEX_HOME/fake-state)
FAKE_CODEX_LOG_DIR        write call-NNNN.json / call-NNNN.stdin per invocation
FAKE_CODEX_VERSION        version string (default 0.171.0)
FAKE_CODEX_KNOWN_MODELS   comma list; other -m models get the "Model metadata" warning item
FAKE_CODEX_TMP_WARNING    1: print the "could not create PATH aliases" warning like a
                          CODEX_HOME inside the temp dir does
FAKE_CODEX_SIGTERM        exit143 (default: exit status 143) | signal (die by SIGTERM)
FAKE_CODEX_MAX_INPUT_CHARS  the prompt limit in characters (default 1048576, as codex 0.169.0:
                          longer prompts end after thread.started with `Input exceeds the
                          maximum length`, exit 1, no rollout)
FAKE_CODEX_DETACH_PIDFILE detach: where the detached grandchild writes its pid
FAKE_CODEX_DETACH_CLEAN_ENV  detach: 1 runs the detached grandchild with an empty environment
FAKE_CODEX_RESPAWN_PIDFILE respawn: where the daemon that ignores SIGTERM and respawns
                          children appends its pid, then each child's
FAKE_CODEX_EFFORTS        `codex debug models --bundled`: every model accepts these efforts
                          (a comma list) instead of the recorded catalog's
FAKE_CODEX_REPLAY         replay: the scenario the real codex was recorded in
                          (tests/fixtures/codex/<version>/<scenario>.json, made by
                          support/codex_streams.py), or a fixture's path: its events,
                          stderr, exit code and rollouts, this run's thread and folders in
                          place of the recording's
"""

# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


class Exit(Exception):
    """Unwind to main() and exit with `code`."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value is None or value == "" else value


def env_float(name: str, default: float) -> float:
    raw = env(name)
    return default if raw is None else float(raw)


def err(text: str) -> None:
    """Write `text` to stderr immediately (a trailing newline is added)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def fail(text: str, code: int = 1) -> NoReturn:
    err(text)
    raise Exit(code)


def version() -> str:
    return env("FAKE_CODEX_VERSION", DEFAULT_VERSION) or DEFAULT_VERSION


def backtrace_suffix(frames: int) -> str:
    """With RUST_BACKTRACE set, anyhow appends a (symbol-less) backtrace to errors from main."""
    if os.environ.get("RUST_BACKTRACE", "0") in ("", "0"):
        return ""
    lines = "\n".join(f"{n:>4}: <unknown>" for n in range(frames))
    return f"\n\nStack backtrace:\n{lines}"


def fail_anyhow(message: str, frames: int = 10) -> NoReturn:
    fail(f"Error: {message}{backtrace_suffix(frames)}")


def os_error_text(exc: OSError) -> str:
    """Rust's io::Error Display: `<strerror> (os error N)`."""
    if exc.errno is None:
        return str(exc)
    return f"{os.strerror(exc.errno)} (os error {exc.errno})"


def sleep_forever() -> NoReturn:
    while True:
        time.sleep(3600)


def now_iso() -> str:
    ns = time.time_ns()
    secs, frac = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac // 1_000_000:03d}Z"


_ESCAPED = {code: f"\\u{code:04x}" for code in range(0x20)}
_ESCAPED.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\b"): "\\b", ord("\f"): "\\f",
                 ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


def to_json(value: Any) -> str:
    """`json.dumps(value, separators=(",", ":"), ensure_ascii=False)`, as serde_json writes
    (codex's JSONL, its rollouts), for the values the fake writes: dicts with str keys, lists,
    tuples, str, int, float, bool and None (tests/test_fake_codex.py holds it to json.dumps)."""
    if isinstance(value, str):
        return '"' + value.translate(_ESCAPED) + '"'
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{to_json(str(key))}:{to_json(item)}"
                              for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(to_json(item) for item in value) + "]"
    raise TypeError(f"fake codex: {type(value).__name__} is not written as JSON")


def _number(value: int | float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def new_thread_id() -> str:
    """A UUIDv7: 48-bit unix ms timestamp, version 7, RFC 4122 variant, random bits."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (
        (ms & ((1 << 48) - 1)) << 80
        | 0x7 << 76
        | ((rand >> 68) & 0xFFF) << 64
        | 0b10 << 62
        | rand & ((1 << 62) - 1)
    )
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def parse_uuid(text: str) -> str | None:
    """Accept the forms Rust's `Uuid::parse_str` accepts; return the hyphenated lowercase form."""
    s = text.strip()
    if s.lower().startswith("urn:uuid:"):
        s = s[9:]
    if s.startswith("{") and s.endswith("}"):
        s = s[1:-1]
    if len(s) == 36 and [len(p) for p in s.split("-")] == [8, 4, 4, 4, 12]:
        s = s.replace("-", "")
    if len(s) != 32 or any(c not in "0123456789abcdefABCDEF" for c in s):
        return None
    s = s.lower()
    return f"{s[:8]}-{s[8:12]}-{s[12:16]}-{s[16:20]}-{s[20:]}"


def jaro(a: str, b: str) -> float:
    """strsim::jaro, which clap uses for its 'a similar argument exists' tips."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    window = max(0, max(len(a), len(b)) // 2 - 1)
    a_flags = [False] * len(a)
    b_flags = [False] * len(b)
    matches = 0
    for i, ch in enumerate(a):
        for j in range(max(0, i - window), min(len(b), i + window + 1)):
            if not b_flags[j] and b[j] == ch:
                a_flags[i] = b_flags[j] = True
                matches += 1
                break
    if matches == 0:
        return 0.0
    b_matched = [ch for ch, flag in zip(b, b_flags, strict=True) if flag]
    a_matched = [ch for ch, flag in zip(a, a_flags, strict=True) if flag]
    transpositions = sum(x != y for x, y in zip(a_matched, b_matched, strict=True)) // 2
    return (matches / len(a) + matches / len(b) + (matches - transpositions) / matches) / 3


def did_you_mean(value: str, candidates: Iterable[str]) -> str | None:
    best: tuple[float, str] | None = None
    for cand in candidates:
        score = jaro(value, cand)
        if score > 0.7 and (best is None or score > best[0]):
            best = (score, cand)
    return None if best is None else best[1]


# --------------------------------------------------------------------------------------------
# Command-line spec (read from the recorded help) and a clap-shaped parser
# --------------------------------------------------------------------------------------------


class Opt:
    """One clap argument. `value` is the value name (empty for a flag)."""

    __slots__ = (
        "action",
        "aliases",
        "append",
        "choices",
        "delimiter",
        "greedy",
        "key",
        "long",
        "short",
        "value",
    )

    def __init__(
        self,
        key: str,
        long: str,
        short: str = "",
        value: str = "",
        choices: tuple[str, ...] = (),
        append: bool = False,  # Vec<_>: may repeat
        greedy: bool = False,  # num_args = 1..
        delimiter: str = "",
        aliases: tuple[str, ...] = (),
        action: str = "",  # "help" | "version"
    ) -> None:
        self.key, self.long, self.short, self.value = key, long, short, value
        self.choices, self.append, self.greedy = choices, append, greedy
        self.delimiter, self.aliases, self.action = delimiter, aliases, action

    @property
    def display(self) -> str:
        return f"--{self.long}" + (f" <{self.value}>" if self.value else "")


# What the recorded help cannot show: hidden aliases, the options clap lets repeat (a Vec),
# value delimiters, and which levels list the arguments used in their usage lines (clap
# without override_usage). The rest is read from the help, but for the values of an option
# whose help describes each one (`Possible values:`, then `- value: ...`): only the root's
# --ask-for-approval, which sparring never passes, so the fake takes any value there.
HIDDEN_ALIASES = {"dangerously-bypass-approvals-and-sandbox": ("yolo",),
                  "json": ("experimental-json",), "approve-for-me": ("not-so-yolo",)}
REPEATABLE = ("config", "enable", "disable", "image", "add-dir")
DELIMITERS = {"image": ","}
SMART_USAGE = ("codex exec resume",)
HELP_FILES = {
    "codex": "codex-help.txt",
    "codex exec": "codex-exec-help.txt",
    "codex exec resume": "codex-resume-help.txt",
}


class CommandSpec:
    """One command level as the pinned codex's help shows it (HELP_FILES, held to the real
    binary by tests/integration/test_mocks_with_real_binaries.py): its usage, subcommands
    (with their aliases), positionals and options, each option's short, long, value name,
    `...` (takes values until the next argument) and `[possible values: ...]`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.smart_usage = name in SMART_USAGE
        self.options: list[Opt] = []
        self.positionals: list[str] = []
        self.subcommands: list[str] = []
        usage: list[str] = []
        section = ""
        for line in help_text(name).splitlines():
            if line and not line[0].isspace():
                section, _, rest = line.partition(":")
                if section == "Usage":
                    usage.append(rest.strip())
            elif section == "Usage" and line.strip():
                usage.append(line.strip())
            elif section == "Commands":
                self._command(line)
            elif section == "Arguments" and line[:3] in ("  [", "  <"):
                self.positionals.append(line.strip()[1:-1])
            elif section == "Options":
                self._option(line)
        self.usage = f"\n{' ' * 7}".join(usage)

    def _command(self, line: str) -> None:
        if line[:2] == "  " and line[2:3].strip():
            self.subcommands.append(line.split()[0])
        _, found, aliases = line.partition("[aliases: ")
        if found:
            self.subcommands.extend(a.strip() for a in aliases.rstrip("]").split(","))

    def _option(self, line: str) -> None:
        text = line.strip()
        if text.startswith("-") and len(line) - len(text) <= 6:  # not a description's "- "
            short = text[1] if text[1] != "-" else ""
            long, _, value = text.partition("--")[2].partition(" ")
            greedy = value.endswith("...")
            value = value.removesuffix("...").strip("<>")
            action = long if long in ("help", "version") else ""
            self.options.append(Opt(
                key=long.replace("-", "_"), long=long, short=short, value=value,
                append=long in REPEATABLE, greedy=greedy, delimiter=DELIMITERS.get(long, ""),
                aliases=HIDDEN_ALIASES.get(long, ()), action=action))
        elif text.startswith("[possible values: "):
            self.options[-1].choices = tuple(
                text.removeprefix("[possible values: ").removesuffix("]").split(", "))

    def find_long(self, name: str) -> Opt | None:
        for opt in self.options:
            if name == opt.long or name in opt.aliases:
                return opt
        return None

    def find_short(self, ch: str) -> Opt | None:
        return next((opt for opt in self.options if opt.short == ch), None)

    def longs(self) -> list[str]:
        return [name for opt in self.options for name in (opt.long, *opt.aliases)]


_SPECS: dict[str, CommandSpec] = {}


def spec(name: str) -> CommandSpec:
    """The command level `name` ("codex", "codex exec", "codex exec resume"), read once."""
    if name not in _SPECS:
        _SPECS[name] = CommandSpec(name)
    return _SPECS[name]


class UsageError(Exception):
    """A clap error: printed on stderr, exit 2."""


class Display(Exception):
    """Help or version output: printed on stdout, exit 0."""


class Parsed:
    """What one command level parsed; `sub`/`rest` are the subcommand and its arguments."""

    def __init__(self, spec: CommandSpec) -> None:
        self.spec = spec
        self.values: dict[str, Any] = {}
        self.positionals: list[str] = []
        self.sub: str | None = None
        self.rest: list[str] = []

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


class _Pending:
    """An option waiting for its value(s); clap resolves it when the next argument starts."""

    def __init__(self, opt: Opt) -> None:
        self.opt = opt
        self.values: list[str] = []


def help_text(spec_name: str) -> str:
    with open(os.path.join(HERE, HELP_FILES[spec_name]), encoding="utf-8") as fh:
        return fh.read()


def version_text(spec_name: str) -> str:
    program = "codex-cli-exec" if spec_name == "codex exec" else "codex-cli"
    return f"{program} {version()}\n"


class Parser:
    """Left-to-right parsing with clap 4's error precedence and message shapes."""

    def __init__(self, spec: CommandSpec, args: list[str]) -> None:
        self.spec = spec
        self.args = args
        self.out = Parsed(spec)
        self.used: list[str] = []  # display forms, in order of first use
        self.pending: _Pending | None = None

    # -- public ---------------------------------------------------------------------------

    def parse(self) -> Parsed:
        trailing = False
        for index, tok in enumerate(self.args):
            if trailing:
                self._positional(tok)
            elif tok == "--":
                self._resolve_pending()
                trailing = True
            elif tok.startswith("--"):
                self._long(tok)
            elif tok.startswith("-") and tok != "-":
                self._short(tok)
            elif not self._feed_pending(tok):
                self._resolve_pending()
                if tok in self.spec.subcommands:
                    self.out.sub = tok
                    self.out.rest = self.args[index + 1 :]
                    return self.out
                self._positional(tok)
        self._resolve_pending()
        return self.out

    # -- tokens ---------------------------------------------------------------------------

    def _long(self, tok: str) -> None:
        name, eq, inline = tok[2:].partition("=")
        opt = self.spec.find_long(name)
        if opt is None:
            self._unknown(f"--{name}", suggestion=did_you_mean(name, self.spec.longs()))
        self._resolve_pending()
        if not opt.value:
            if eq:
                raise UsageError(
                    self._with_usage(
                        f"error: unexpected value '{inline}' for '--{opt.long}' found; "
                        "no more were expected",
                        smart=False,
                    )
                )
            self._flag(opt)
        elif eq:
            self._use(opt.display)
            self._store(opt, [inline])
        else:
            self.pending = _Pending(opt)

    def _short(self, tok: str) -> None:
        body = tok[1:]
        for index, ch in enumerate(body):
            opt = self.spec.find_short(ch)
            if opt is None:
                self._unknown(f"-{ch}", suggestion=None)
            if index == 0:
                self._resolve_pending()
            if not opt.value:
                self._flag(opt)
                continue
            rest = body[index + 1 :]
            if rest:
                self._use(opt.display)
                self._store(opt, [rest[1:] if rest.startswith("=") else rest])
            else:
                self.pending = _Pending(opt)
            return

    def _feed_pending(self, tok: str) -> bool:
        pending = self.pending
        if pending is None or (pending.values and not pending.opt.greedy):
            return False
        pending.values.append(tok)
        return True

    def _positional(self, tok: str) -> None:
        if len(self.out.positionals) >= len(self.spec.positionals):
            raise UsageError(self._with_usage(f"error: unexpected argument '{tok}' found", False))
        self.out.positionals.append(tok)
        self._use(f"<{self.spec.positionals[len(self.out.positionals) - 1]}>")

    # -- values ---------------------------------------------------------------------------

    def _flag(self, opt: Opt) -> None:
        if opt.action == "help":
            raise Display(help_text(self.spec.name))
        if opt.action == "version":
            raise Display(version_text(self.spec.name))
        if opt.key in self.out.values:
            raise self._duplicate(opt)
        self._use(opt.display)
        self.out.values[opt.key] = True

    def _resolve_pending(self, swallow: bool = False) -> None:
        pending, self.pending = self.pending, None
        if pending is None:
            return
        self._use(pending.opt.display)
        try:
            self._store(pending.opt, pending.values)
        except UsageError:
            if not swallow:
                raise

    def _store(self, opt: Opt, raw: list[str]) -> None:
        values = [v for item in raw for v in item.split(opt.delimiter)] if opt.delimiter else raw
        if not values or (opt.choices and values == [""]):
            raise UsageError(self._value_required(opt))
        for value in values:
            if opt.choices and value not in opt.choices:
                raise UsageError(self._invalid_value(opt, value))
        if opt.append:
            self.out.values.setdefault(opt.key, []).extend(values)
        elif opt.key in self.out.values:
            raise self._duplicate(opt)
        else:
            self.out.values[opt.key] = values[0]

    # -- errors ---------------------------------------------------------------------------

    def _use(self, display: str) -> None:
        if display not in self.used:
            self.used.append(display)

    def _usage(self, smart: bool) -> str:
        spec = self.spec
        if not (smart and spec.smart_usage and self.used):
            return spec.usage
        options = [u for u in self.used if not u.startswith("<")]
        positionals = [
            f"<{name}>" if index < len(self.out.positionals) else f"[{name}]"
            for index, name in enumerate(spec.positionals)
        ]
        return " ".join([spec.name, *options, *positionals])

    def _with_usage(self, first: str, smart: bool, tip: str = "") -> str:
        tip_block = f"\n  tip: {tip}\n" if tip else ""
        return (
            f"{first}\n{tip_block}\nUsage: {self._usage(smart)}\n\n"
            "For more information, try '--help'.\n"
        )

    def _unknown(self, arg: str, suggestion: str | None) -> NoReturn:
        self._resolve_pending(swallow=True)
        if suggestion is not None:
            suggested = self.spec.find_long(suggestion)
            if suggested is not None:
                self._use(suggested.display)
            tip = f"a similar argument exists: '--{suggestion}'"
        else:
            tip = f"to pass '{arg}' as a value, use '-- {arg}'"
        raise UsageError(self._with_usage(f"error: unexpected argument '{arg}' found", True, tip))

    def _duplicate(self, opt: Opt) -> UsageError:
        first = f"error: the argument '{opt.display}' cannot be used multiple times"
        return UsageError(self._with_usage(first, smart=False))

    @staticmethod
    def _possible(opt: Opt) -> str:
        return f"\n  [possible values: {', '.join(opt.choices)}]" if opt.choices else ""

    def _value_required(self, opt: Opt) -> str:
        return (
            f"error: a value is required for '{opt.display}' but none was supplied"
            f"{self._possible(opt)}\n\nFor more information, try '--help'.\n"
        )

    def _invalid_value(self, opt: Opt, value: str) -> str:
        similar = did_you_mean(value, opt.choices)
        tip = f"\n\n  tip: a similar value exists: '{similar}'" if similar else ""
        return (
            f"error: invalid value '{value}' for '{opt.display}'{self._possible(opt)}{tip}\n\n"
            "For more information, try '--help'.\n"
        )


def usage_error_text() -> str:
    """What `codex exec --approval-policy never hi` prints (mode usage_error)."""
    try:
        Parser(spec("codex exec"), ["--approval-policy", "never", "hi"]).parse()
    except UsageError as exc:
        return str(exc)
    raise AssertionError("--approval-policy must be rejected")  # pragma: no cover


# --------------------------------------------------------------------------------------------
# Invocation: root -> exec -> resume
# --------------------------------------------------------------------------------------------


class Invocation:
    def __init__(self, root: Parsed, exec_: Parsed, resume: Parsed | None) -> None:
        self.root, self.exec_, self.resume = root, exec_, resume

    def levels(self) -> list[Parsed]:
        return [p for p in (self.root, self.exec_, self.resume) if p is not None]

    def flag(self, key: str) -> bool:
        return any(p.get(key) for p in self.levels())

    def value(self, key: str) -> Any:
        """Innermost level wins (clap globals / inherit_exec_root_options)."""
        for level in reversed(self.levels()):
            if key in level.values:
                return level.values[key]
        return None

    def config_overrides(self) -> list[str]:
        return [item for p in self.levels() for item in p.get("config", [])]


def parse_invocation(argv: list[str]) -> Invocation:
    root = Parser(spec("codex"), argv).parse()
    if root.sub == "help":
        raise Display(help_for_path(["codex", *root.rest]))
    if root.sub is None:
        if not os.isatty(0):
            fail_anyhow("stdin is not a terminal", frames=8)
        fail("fake codex: the interactive TUI is not supported; use `codex exec`")
    if root.sub == "login":
        raise Exit(run_login(root.rest))
    if root.sub == "debug" and root.rest[:1] == ["models"]:
        raise Exit(debug_models(root.rest[1:]))
    if root.sub not in ("exec", "e"):
        fail(f"fake codex: `codex {root.sub}` is not supported by the fake", code=2)
    exec_ = Parser(spec("codex exec"), root.rest).parse()
    if exec_.sub == "help":
        raise Display(help_for_path(["codex", "exec", *exec_.rest]))
    if exec_.sub in ("fork", "review"):
        fail(f"fake codex: `codex exec {exec_.sub}` is not supported by the fake", code=2)
    resume = None
    if exec_.sub == "resume":
        resume = Parser(spec("codex exec resume"), exec_.rest).parse()
    return Invocation(root, exec_, resume)


def debug_models(args: list[str]) -> int:
    """`codex debug models --bundled`: the catalog shipped with the binary, as the pinned
    codex prints it (tests/fixtures/codex/<version>/models.json, recorded by
    support/codex_streams.py, cut to what sparring reads); FAKE_CODEX_EFFORTS (a comma list)
    gives every model those efforts instead."""
    if args != ["--bundled"]:
        fail("fake codex: only `codex debug models --bundled` is modelled (no network)", code=2)
    import json

    path = os.path.join(os.path.dirname(HERE), "fixtures", "codex", DEFAULT_VERSION,
                        "models.json")
    with open(path, encoding="utf-8") as fh:
        catalog = json.load(fh)
    efforts = env("FAKE_CODEX_EFFORTS")
    if efforts is not None:
        for model in catalog["models"]:
            model["supported_reasoning_levels"] = [
                {"effort": e.strip(), "description": e.strip()} for e in efforts.split(",")]
    sys.stdout.write(to_json(catalog) + "\n")
    return 0


def help_for_path(words: list[str]) -> str:
    """`codex help [exec [resume]]` and `codex exec help [resume]`."""
    names = [w for w in words[1:] if not w.startswith("-")]
    if names and names[0] == "e":
        names[0] = "exec"
    if names and names[0] not in spec("codex").subcommands:
        raise UsageError(
            f"error: unrecognized subcommand '{names[0]}'\n\nUsage: {spec('codex').usage}\n\n"
            "For more information, try '--help'.\n"
        )
    path = "codex"
    for name in names:
        if f"{path} {name}" not in HELP_FILES:
            break
        path = f"{path} {name}"
    if names and path == "codex" and names[0] != "help":
        fail(f"fake codex: no captured help for `codex {' '.join(names)}`", code=2)
    return help_text(path)


# --------------------------------------------------------------------------------------------
# codex login: credentials in $CODEX_HOME/auth.json; everything is said on stderr
# --------------------------------------------------------------------------------------------

CHECKED_LATER = "Authentication is checked when you send a request."


def auth_file() -> str:
    home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
    return os.path.join(home, "auth.json")


def masked(key: str) -> str:
    """How 0.169.0 shows a key: `sk-12345***bcdef`; a short one (seen: 6 chars) as `***`
    (the length where it switches is inferred)."""
    return f"{key[:8]}***{key[-5:]}" if len(key) >= 13 else "***"


def run_login(args: list[str]) -> int:
    if args[:1] == ["status"]:
        return login_status()
    if args == ["--with-api-key"]:
        return login_with_api_key()
    fail("fake codex: only `codex login status` and `codex login --with-api-key` are "
         "supported by the fake (the real `codex login` opens a browser)")


def login_status() -> int:
    """Observed: no file → `Not logged in` (1); a file that is not JSON → the serde error
    (1); an API key → `API key configured - <masked>` (0); any other JSON object →
    `Logged in using ChatGPT` (0). Environment variables such as CODEX_API_KEY and a custom
    model provider in config.toml do not count."""
    try:
        with open(auth_file(), encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        fail("Not logged in")
    import json

    try:
        auth = json.loads(text)
    except json.JSONDecodeError as exc:
        fail("Error checking login status: failed to deserialize CLI auth from file: "
             + serde_json_error(exc))
    key = auth.get("OPENAI_API_KEY") if isinstance(auth, dict) else None
    if isinstance(key, str) and key:
        err(f"API key configured - {masked(key)}\n{CHECKED_LATER}")
    else:
        err("Logged in using ChatGPT")
    return 0


def login_with_api_key() -> int:
    import json

    err("Reading API key from stdin...")
    key = sys.stdin.read().strip()
    if not key:
        fail("No API key provided via stdin.")
    path = auth_file()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"auth_mode": "apikey", "OPENAI_API_KEY": key}, indent=2))
    os.chmod(path, 0o600)
    err(f"API key saved. {CHECKED_LATER}")
    return 0


# --------------------------------------------------------------------------------------------
# Call log (FAKE_CODEX_LOG_DIR)
# --------------------------------------------------------------------------------------------


def _opened_as(fd: int) -> str | None:
    """The path descriptor `fd` was opened as, where the system says (Linux's /proc)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


class CallLog:
    """call-NNNN.json (rewritten atomically as the run progresses) and call-NNNN.stdin."""

    def __init__(self, directory: str, seq: int, data: dict[str, Any]) -> None:
        self.directory = directory
        self.seq = seq
        self.data = data
        self._writes = 0

    @classmethod
    def start(cls, argv: list[str]) -> CallLog | None:
        directory = env("FAKE_CODEX_LOG_DIR")
        if directory is None:
            return None
        os.makedirs(directory, exist_ok=True)
        tracked = ("CODEX_HOME", "SPARRING_", "FAKE_CODEX_", "CLAUDE", "ANTHROPIC_")
        data: dict[str, Any] = {
            "argv": argv,
            "cwd": os.getcwd(),
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "pgid": os.getpgid(0),
            "sid": os.getsid(0),
            "started_at": now_iso(),
            "started_unix": time.time(),
            "stdout_path": _opened_as(1),
            "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(tracked)},
            "stdin_isatty": os.isatty(0),
            "stdin_read": False,
            "stdin_bytes": 0,
            "prompt": None,
            "mode": None,
            "thread_id": None,
            "exit_code": None,
        }
        # Written whole, then linked to the first free name: a reader never finds it empty,
        # even when this process is killed at once (an early codex ended by its runner was,
        # between making the file and writing it, and a test's read of the calls failed).
        names = os.listdir(directory)
        log = cls(directory, 1 + sum(1 for n in names if n.startswith("call-")
                                     and n.endswith(".json")), data)
        tmp = os.path.join(directory, f".call-new.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(log._dump())
        while True:
            try:
                os.link(tmp, log.path("json"))
            except FileExistsError:
                log.seq += 1
                continue
            break
        os.unlink(tmp)
        return log

    def _dump(self) -> str:
        return to_json(self.data) + "\n"

    def path(self, suffix: str) -> str:
        return os.path.join(self.directory, f"call-{self.seq:04d}.{suffix}")

    def update(self, **fields: Any) -> None:
        self.data.update(fields)
        self._writes += 1
        tmp = os.path.join(self.directory, f".call-{self.seq:04d}.{os.getpid()}.{self._writes}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(self._dump())
        os.replace(tmp, self.path("json"))

    def record_stdin(self, raw: bytes | None) -> None:
        tmp = self.path(f"stdin.{os.getpid()}.tmp")  # whole or absent for a test reading it
        with open(tmp, "wb") as fh:
            fh.write(raw or b"")
        os.replace(tmp, self.path("stdin"))
        if raw is None:
            return
        self.update(
            stdin_read=True, stdin_bytes=len(raw),
            stdin_read_unix=time.time(),  # when its end came: the prompt was whole then
        )


def read_calls(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The calls logged in `directory`, in order, each with `stdin_sha256`: the sha256 of what
    it read from stdin (None until it read it all), taken here rather than in the fake."""
    import glob
    import hashlib
    import json

    calls = []
    for path in sorted(glob.glob(os.path.join(glob.escape(os.fspath(directory)), "call-*.json"))):
        with open(path, encoding="utf-8") as fh:
            call = json.load(fh)
        call["stdin_sha256"] = None
        if call.get("stdin_read"):
            with open(path[: -len("json")] + "stdin", "rb") as fh:
                call["stdin_sha256"] = hashlib.sha256(fh.read()).hexdigest()
        calls.append(call)
    return calls


# --------------------------------------------------------------------------------------------
# Signals
# --------------------------------------------------------------------------------------------

_LOG: CallLog | None = None


def _on_signal(signum: int, _frame: object) -> None:
    import signal

    name = signal.Signals(signum).name
    code = 143 if signum == signal.SIGTERM else 1
    try:
        if _LOG is not None:
            _LOG.update(exit_code=code, terminated_by=name)
    except OSError:
        pass  # the log is best effort here; exiting promptly matters more
    if signum == signal.SIGTERM and env("FAKE_CODEX_SIGTERM") == "signal":
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    os._exit(code)


def install_signal_handlers() -> None:
    """As codex: TERM exits 143, INT 1. Set once the call is a turn: `signal` loads `enum`, a
    fifth of the start of a `codex --version` or `--help` that ends at once."""
    import signal

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)


# --------------------------------------------------------------------------------------------
# Settings and pre-thread checks
# --------------------------------------------------------------------------------------------


class Settings:
    """The effective configuration of this run."""

    def __init__(self, inv: Invocation, config: dict[str, Any], cwd: str) -> None:
        bypass = inv.flag("dangerously_bypass_approvals_and_sandbox")
        model = inv.value("model") or config.get("model")
        sandbox = "danger-full-access" if bypass else inv.value("sandbox")
        effort = config.get("model_reasoning_effort")
        self.json: bool = inv.flag("json")
        self.model = str(model or DEFAULT_MODEL)
        self.model_explicit = model is not None
        self.effort = str(effort or ("low" if not model else "medium"))
        self.sandbox: str = sandbox or str(config.get("sandbox_mode") or "read-only")
        self.cwd = cwd
        self.codex_home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
        self.ephemeral = inv.flag("ephemeral")
        self.output_last_message: str | None = inv.value("output_last_message")
        self.output_schema: str | None = inv.value("output_schema")
        self.skip_git = inv.flag("skip_git_repo_check")
        self.bypass = bypass
        self.resume_id: str | None = None
        self.resume_last = self.resume_all = False
        if inv.resume is not None:
            self.resume_last = bool(inv.resume.get("last"))
            self.resume_all = bool(inv.resume.get("all"))
            positionals = inv.resume.positionals
            if positionals and not (self.resume_last and len(positionals) == 1):
                self.resume_id = positionals[0]


def parse_config_value(raw: str) -> Any:
    """The value as codex reads it: TOML, else the text itself (`high` is no TOML value)."""
    raw = raw.strip()
    if _bare_word(raw):
        return raw  # what TOML refuses, known without loading tomllib
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = None  # type: ignore[assignment]
    if tomllib is not None:
        try:
            return tomllib.loads(f"_x_ = {raw}")["_x_"]
        except tomllib.TOMLDecodeError:
            pass
    elif raw in ("true", "false"):
        return raw == "true"
    elif len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw.strip("\"'")


def _bare_word(raw: str) -> bool:
    """A letter, then letters, `_` and `-` only, and not a TOML boolean or float (`inf`,
    `nan`): not a TOML value."""
    letters = raw.replace("_", "").replace("-", "")
    return (raw.isascii() and raw[:1].isalpha() and letters.isalpha()
            and raw not in ("true", "false", "inf", "nan"))


def parse_config_overrides(items: list[str]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq:
            fail(f"Error parsing -c overrides: Invalid override (missing '='): {item}")
        if not key.strip():
            fail(f"Error parsing -c overrides: Empty key in override: {item}")
        config[key.strip()] = parse_config_value(raw)
    return config


def validate_config(config: dict[str, Any]) -> None:
    policy = config.get("approval_policy")
    if policy is not None and policy not in APPROVAL_POLICIES:
        expected = ", ".join(f"`{p}`" for p in APPROVAL_POLICIES)
        fail(
            f"Error loading config.toml: unknown variant `{policy}`, expected one of {expected}\n"
            "in `approval_policy`\n"
        )


def effective_cwd(cd: str | None) -> str:
    if cd is None:
        return os.getcwd()
    try:
        os.stat(cd)
    except OSError as exc:
        fail_anyhow(os_error_text(exc))
    return os.path.abspath(cd)


def build_settings(inv: Invocation) -> Settings:
    """In the real order: -c parsing, -C, then config validation."""
    config = parse_config_overrides(inv.config_overrides())
    cwd = effective_cwd(inv.value("cd"))
    validate_config(config)
    return Settings(inv, config, cwd)


def check_output_schema(path: str | None) -> None:
    if path is None:
        return
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        fail(f"Failed to read output schema file {path}: {os_error_text(exc)}")
    import json

    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"Output schema file {path} is not valid JSON: {serde_json_error(exc)}")


def serde_json_error(exc: json.JSONDecodeError) -> str:
    """Approximate serde_json's wording for the common cases."""
    line, column, doc, pos = exc.lineno, exc.colno, exc.doc, exc.pos
    if exc.msg == "Extra data":
        return f"trailing characters at line {line} column {column}"
    if exc.msg == "Expecting value" and pos >= len(doc.rstrip()):
        return f"EOF while parsing a value at line {line} column {column - 1}"
    if exc.msg == "Expecting value" and doc[pos] in "ntf":
        return f"expected ident at line {line} column {column + 1}"
    if exc.msg == "Expecting value":
        return f"expected value at line {line} column {column}"
    return f"{exc.msg[0].lower()}{exc.msg[1:]} at line {line} column {column}"


def inside_git_repo(path: str) -> bool:
    current = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return True
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent


def check_git(settings: Settings) -> None:
    if settings.skip_git or settings.bypass or inside_git_repo(settings.cwd):
        return
    fail("Not inside a trusted directory and --skip-git-repo-check was not specified.")


def check_last_message_file(path: str | None) -> None:
    if path is None:
        return
    parent = os.path.dirname(os.path.abspath(path))
    try:
        if not os.path.isdir(parent):
            os.listdir(parent)  # raises the right errno (ENOENT / ENOTDIR)
    except OSError as exc:
        quoted = rust_debug_path(path)
        fail_anyhow(f"Failed to open last message file {quoted}: {os_error_text(exc)}", frames=14)


def rust_debug_path(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --------------------------------------------------------------------------------------------
# Prompt and stdin (codex-rs/exec: resolve_prompt / resolve_root_prompt)
# --------------------------------------------------------------------------------------------


def decode_prompt_bytes(raw: bytes) -> str:
    data = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    for bom, name in ((b"\xff\xfe\x00\x00", "UTF-32LE"), (b"\x00\x00\xfe\xff", "UTF-32BE")):
        if data.startswith(bom):
            raise ValueError(f"input appears to be {name}. Convert it to UTF-8 and retry.")
    utf16 = ((b"\xff\xfe", "UTF-16LE", "utf-16-le"), (b"\xfe\xff", "UTF-16BE", "utf-16-be"))
    for bom, name, codec in utf16:
        if data.startswith(bom):
            try:
                return data[2:].decode(codec)
            except UnicodeDecodeError:
                raise ValueError(
                    f"input looked like {name} but could not be decoded. "
                    "Convert it to UTF-8 and retry."
                ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"input is not valid UTF-8 (invalid byte at offset {exc.start}). Convert it to UTF-8 "
            "and retry (e.g., `iconv -f <ENC> -t UTF-8 prompt.txt`)."
        ) from None


class StdinRead:
    def __init__(self) -> None:
        self.raw: bytes | None = None  # None: stdin was not read


def read_stdin(behaviour: str, captured: StdinRead) -> str | None:
    """behaviour: required | forced | append. Returns the text, or None (append, nothing)."""
    is_tty = os.isatty(0)
    if behaviour == "required" and is_tty:
        fail("No prompt provided. Either specify one as an argument or pipe the prompt into stdin.")
    if behaviour == "append" and is_tty:
        return None
    if behaviour == "required":
        err("Reading prompt from stdin...")
    elif behaviour == "append":
        err("Reading additional input from stdin...")
    try:
        captured.raw = sys.stdin.buffer.read()
    except OSError as exc:
        fail(f"Failed to read prompt from stdin: {os_error_text(exc)}")
    try:
        text = decode_prompt_bytes(captured.raw)
    except ValueError as exc:
        fail(f"Failed to read prompt from stdin: {exc}")
    if text.strip():
        return text
    if behaviour == "append":
        return None
    fail("No prompt provided via stdin.")


def with_stdin_context(prompt: str, stdin_text: str) -> str:
    newline = "" if stdin_text.endswith("\n") else "\n"
    return f"{prompt}\n\n<stdin>\n{stdin_text}{newline}</stdin>"


def resolve_prompt(inv: Invocation, captured: StdinRead) -> str:
    root_prompt = inv.exec_.positionals[0] if inv.exec_.positionals else None
    if inv.resume is not None:
        positionals = inv.resume.positionals
        last = bool(inv.resume.get("last"))
        prompt = positionals[1] if len(positionals) > 1 else None
        if prompt is None and last and positionals:
            prompt = positionals[0]
        prompt = prompt if prompt is not None else root_prompt
        if prompt is not None and prompt != "-":
            return prompt
        return read_stdin("forced" if prompt == "-" else "required", captured) or ""
    if root_prompt is not None and root_prompt != "-":
        extra = read_stdin("append", captured)
        return root_prompt if extra is None else with_stdin_context(root_prompt, extra)
    return read_stdin("forced" if root_prompt == "-" else "required", captured) or ""


# --------------------------------------------------------------------------------------------
# Threads and rollout files
# --------------------------------------------------------------------------------------------


class Thread:
    def __init__(
        self,
        thread_id: str,
        path: str | None,  # the rollout file; None when --ephemeral
        turn_number: int,  # 1-based number of the turn this process runs
        prior_usage: dict[str, int],
        recorded_model: str | None,
        resumed: bool,
    ) -> None:
        self.id, self.path, self.turn_number = thread_id, path, turn_number
        self.prior_usage, self.recorded_model, self.resumed = prior_usage, recorded_model, resumed


def zero_usage() -> dict[str, int]:
    return dict.fromkeys(USAGE_KEYS, 0)


def sessions_dir(settings: Settings) -> str:
    return os.path.join(settings.codex_home, "sessions")


def read_rollout(path: str) -> list[dict[str, Any]]:
    import json

    lines: list[dict[str, Any]] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                lines.append(obj)
    return lines


def rollout_summary(
    lines: list[dict[str, Any]],
) -> tuple[int, dict[str, int], str | None, str | None]:
    """(turns so far, cumulative usage, last model, last cwd) from a rollout's lines."""
    turns, usage, model, cwd = 0, zero_usage(), None, None
    for line in lines:
        payload = line.get("payload") or {}
        if line.get("type") == "turn_context":
            turns += 1
            model = payload.get("model", model)
            cwd = payload.get("cwd", cwd)
        elif line.get("type") == "event_msg" and payload.get("type") == "token_count":
            last = (payload.get("info") or {}).get("last_token_usage") or {}
            for key in USAGE_KEYS:
                usage[key] += int(last.get(key, 0))
    return turns, usage, model, cwd


def find_rollout(settings: Settings, thread_id: str) -> str | None:
    import glob

    name = f"rollout-*-{thread_id}.jsonl"
    pattern = os.path.join(glob.escape(sessions_dir(settings)), "**", name)
    matches = sorted(glob.glob(pattern, recursive=True))
    return matches[0] if matches else None


def find_latest_rollout(settings: Settings) -> str | None:
    import glob

    pattern = os.path.join(glob.escape(sessions_dir(settings)), "**", "rollout-*.jsonl")
    paths = sorted(glob.glob(pattern, recursive=True), key=os.path.getmtime, reverse=True)
    for path in paths:
        cwd = rollout_summary(read_rollout(path))[3]
        if settings.resume_all or (cwd and os.path.realpath(cwd) == os.path.realpath(settings.cwd)):
            return path
    return None


def thread_from_rollout(path: str) -> Thread:
    lines = read_rollout(path)
    turns, usage, model, _ = rollout_summary(lines)
    meta = next((ln.get("payload") or {} for ln in lines if ln.get("type") == "session_meta"), {})
    thread_id = meta.get("id") or os.path.basename(path)[-42:-6]  # <36-char uuid>.jsonl
    return Thread(thread_id, path, turns + 1, usage, model, resumed=True)


def new_thread(settings: Settings, thread_id: str | None = None) -> Thread:
    thread_id = thread_id or new_thread_id()
    path = None
    if not settings.ephemeral:
        stamp = time.localtime()
        day_dir = os.path.join(sessions_dir(settings), time.strftime("%Y/%m/%d", stamp))
        name = f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', stamp)}-{thread_id}.jsonl"
        path = os.path.join(day_dir, name)
    return Thread(thread_id, path, 1, zero_usage(), None, resumed=False)


def open_thread(settings: Settings, is_resume: bool) -> Thread:
    if not is_resume:
        return new_thread(settings)
    if settings.resume_last:
        path = find_latest_rollout(settings)
        return thread_from_rollout(path) if path else new_thread(settings)
    if settings.resume_id is None:
        return new_thread(settings)
    canonical = parse_uuid(settings.resume_id)
    if canonical is None:
        return new_thread(settings)  # a thread name that matches nothing starts a new thread
    path = find_rollout(settings, canonical)
    if path is None:
        fail_anyhow(
            "thread/resume: thread/resume failed: no rollout found for thread id "
            f"{settings.resume_id} (code -32600)"
        )
    return thread_from_rollout(path)


class Recorded:
    """What the pinned codex printed and wrote in its recordings (tests/fixtures/codex/<pin>/,
    made by support/codex_streams.py), line by line, with this run's thread, folders and turn
    in place of the recording's. Every event and rollout line of a turn is one of these with
    the turn's own values (its reply, command, usage) put in: the fake knows which recorded
    line to play, never how codex shapes one."""

    def __init__(self, places: dict[str, str], turn_id: str) -> None:
        self.places = places
        self.turn_id = turn_id
        self._scenarios: dict[str, dict[str, str]] = {}  # scenario -> "event:<kind>" -> line

    def event(self, kind: str, scenario: str) -> dict[str, Any]:
        """The first event of `kind` (its type, `item.completed:<item type>` for an item)
        that codex printed in `scenario`."""
        return self._first(f"event:{kind}", scenario)

    def rollout(self, kind: str, scenario: str) -> dict[str, Any]:
        """The first line of `kind` (its type, or its payload's for events and items) that
        codex wrote to the thread's rollout in `scenario`."""
        return self._first(f"rollout:{kind}", scenario)

    def _first(self, key: str, scenario: str) -> dict[str, Any]:
        import json

        if scenario not in self._scenarios:
            self._scenarios[scenario] = self._load(scenario)
        lines = self._scenarios[scenario]
        if key not in lines:
            fail(f"fake codex: the {scenario} recording holds no {key.partition(':')[2]}",
                 code=99)
        line: dict[str, Any] = json.loads(lines[key])
        return line

    def _load(self, scenario: str) -> dict[str, str]:
        import json

        fixture = load_fixture(scenario)
        lines = fixture["rollouts"]["{THREAD}"]
        said = [json.loads(line) for line in lines]
        kinds = [s["payload"].get("type") if s["type"] in ("event_msg", "response_item")
                 else s["type"] for s in said]
        turn = said[kinds.index("task_started")]["payload"]["turn_id"]
        places = {**self.places, turn: self.turn_id}
        found: dict[str, str] = {}
        for kind, line in zip(kinds, lines, strict=True):
            found.setdefault(f"rollout:{kind}", placed(line, places))
        for line in fixture["events"]:
            event = json.loads(line)
            item = event.get("item")
            kind = event["type"] + (f":{item['type']}" if isinstance(item, dict) else "")
            found.setdefault(f"event:{kind}", placed(line, places))
        return found


def run_places(thread: Thread, settings: Settings) -> dict[str, str]:
    """The recordings' stand-ins for a run's values, and this run's values."""
    return {"{THREAD}": thread.id, "{CWD}": settings.cwd, "{CODEX_HOME}": settings.codex_home,
            "{HOME}": os.environ.get("HOME", "")}


class Rollout:
    """Appends the thread's rollout as the real codex writes it: each line the recorded line
    of its kind, with this run's settings, commands, answer and tokens in it. The lines are
    those sparring reads (codex/rollout.py: turn_context, token_count, tool calls and their
    outputs) and those around them; a file change, a reasoning summary and the prompt are not
    written (sparring reads none of them there)."""

    RECORDED = "command"  # a turn that ran one command, then answered
    FAILED = "usage_limit"  # a turn codex ended with an error

    def __init__(self, thread: Thread, settings: Settings, recorded: Recorded) -> None:
        self.path = thread.path
        self.thread = thread
        self.settings = settings
        self.recorded = recorded
        self.calls = 0
        self.ordinal = 0

    def _recorded(self, kind: str, scenario: str = RECORDED) -> dict[str, Any]:
        return self.recorded.rollout(kind, scenario)

    def _append(self, line: dict[str, Any]) -> None:
        if self.path is None:
            return
        stamped = {"timestamp": now_iso(), "ordinal": self.ordinal,
                   **{k: v for k, v in line.items() if k not in ("timestamp", "ordinal")}}
        self.ordinal += 1
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(to_json(stamped) + "\n")

    def begin_turn(self, prompt: str) -> None:
        del prompt  # codex records it too; sparring never reads it there
        if self.path is None:
            return
        settings = self.settings
        if os.path.exists(self.path):
            with open(self.path, "rb") as fh:
                self.ordinal = sum(1 for _ in fh)
        elif not self.thread.resumed:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            meta = self._recorded("session_meta")
            meta["payload"].update(timestamp=now_iso(), cli_version=version())
            self._append(meta)
        started = self._recorded("task_started")
        started["payload"]["started_at"] = int(time.time())
        self._append(started)
        context = self._recorded("turn_context")
        payload = context["payload"]
        payload.update(model=settings.model, effort=settings.effort,
                       sandbox_policy={"type": settings.sandbox})
        payload["collaboration_mode"]["settings"].update(
            model=settings.model, reasoning_effort=settings.effort)
        self._append(context)

    def item(self, item: dict[str, Any]) -> None:
        """A command as a tool call and its output; the answer as the model's message."""
        if item.get("type") == "command_execution":
            self.calls += 1
            call_id = f"call_{self.calls}"
            import json  # loaded already: the recording came in as JSON

            call = self._recorded("function_call")
            asked = {**json.loads(call["payload"]["arguments"]),
                     "cmd": as_asked(str(item["command"]))}
            call["payload"].update(id=f"fc_{call_id}", call_id=call_id, arguments=to_json(asked))
            self._append(call)
            output = self._recorded("function_call_output")
            output["payload"].update(call_id=call_id, output=(
                f"Chunk ID: {call_id}\nWall time: 0.0000 seconds\nProcess exited with code "
                f"{item['exit_code']}\nOutput:\n{item['aggregated_output']}"))
            self._append(output)
        elif item.get("type") == "agent_message":
            message = self._recorded("message")
            message["payload"]["content"][0]["text"] = item["text"]
            self._append(message)

    def complete(
        self, turn_usage: dict[str, int], total: dict[str, int], message: str | None
    ) -> None:
        def with_total(usage: dict[str, int]) -> dict[str, int]:
            return {**usage, "total_tokens": usage["input_tokens"] + usage["output_tokens"]}

        count = self._recorded("token_count")
        count["payload"]["info"].update(total_token_usage=with_total(total),
                                        last_token_usage=with_total(turn_usage))
        self._append(count)
        done = self._recorded("task_complete")
        done["payload"].update(last_agent_message=message, completed_at=int(time.time()))
        self._append(done)

    def failed(self, message: str) -> None:
        done = self._recorded("task_complete", self.FAILED)
        done["payload"].update(error={"message": message}, completed_at=int(time.time()))
        self._append(done)


def placed(line: str, places: dict[str, str]) -> str:
    """A recorded line with this run's values in place of the recording's (each key of
    `places` replaced by its value, escaped as JSON text)."""
    for name, value in places.items():
        line = line.replace(name, to_json(value)[1:-1])
    return line


def as_asked(command: str) -> str:
    """The command as the model asked for it (`cmd`), from the one codex shows it ran:
    `/bin/bash -lc '<cmd>'`."""
    head = "/bin/bash -lc '"
    if command.startswith(head) and command.endswith("'") and "'" not in command[len(head):-1]:
        return command[len(head):-1]
    return command


# --------------------------------------------------------------------------------------------
# Output: JSONL
# --------------------------------------------------------------------------------------------


class Emitter:
    """Writes events as compact JSONL, each line flushed."""

    def __init__(self) -> None:
        self.delay = env_float("FAKE_CODEX_EVENT_DELAY", 0.0)
        self._lines = 0
        self._next_item = 0
        self.last_message: str | None = None

    def next_item_id(self) -> str:
        item_id = f"item_{self._next_item}"
        self._next_item += 1
        return item_id

    def _pace(self) -> None:
        if self._lines and self.delay > 0:
            time.sleep(self.delay)
        self._lines += 1

    def write_raw(self, text: str) -> None:
        self._pace()
        try:
            sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            os._exit(1)

    def event(self, obj: dict[str, Any]) -> None:
        if obj.get("type") == "item.completed" and obj["item"].get("type") == "agent_message":
            self.last_message = obj["item"]["text"]
        self.write_raw(to_json(obj) + "\n")


# --------------------------------------------------------------------------------------------
# Scenario: env variables and FAKE_CODEX_SCRIPT entries
# --------------------------------------------------------------------------------------------


class Scenario:
    """What this turn does: a FAKE_CODEX_SCRIPT entry, with env variables as the fallback."""

    def __init__(self, entry: dict[str, Any], script_index: int | None) -> None:
        def pick(key: str, var: str, default: Any = None) -> Any:
            return entry[key] if key in entry else env(var, default)

        reply = pick("reply", "FAKE_CODEX_REPLY")
        usage = entry.get("usage")
        if usage is None and env("FAKE_CODEX_USAGE"):
            import json

            usage = json.loads(env("FAKE_CODEX_USAGE") or "{}")
        delay = pick("delay", "FAKE_CODEX_DELAY")
        exit_code = pick("exit_code", "FAKE_CODEX_EXIT_CODE")
        self.mode = str(pick("mode", "FAKE_CODEX_MODE", "ok"))
        self.reply: str | None = (
            reply if reply is None or isinstance(reply, str) else _as_text(reply)
        )
        self.reasoning: str | None = pick("reasoning", "FAKE_CODEX_REASONING")
        self.delay = None if delay is None else float(delay)
        self.release: str | None = env("FAKE_CODEX_RELEASE")
        self.usage = {k: int(v) for k, v in (usage or {}).items()}
        self.stderr: str | None = pick("stderr", "FAKE_CODEX_STDERR")
        self.command: str | None = pick("command", "FAKE_CODEX_COMMAND")
        self.write_path: str | None = pick("write_path", "FAKE_CODEX_WRITE_PATH")
        self.write_content = str(
            pick("write_content", "FAKE_CODEX_WRITE_CONTENT", DEFAULT_WRITE_CONTENT)
        )
        self.delete_path: str | None = pick("delete_path", "FAKE_CODEX_DELETE_PATH")
        self.write_append = str(pick("write_append", "FAKE_CODEX_WRITE_APPEND", "")) in (
            "1", "True", "true")
        self.shell: str | None = pick("shell", "FAKE_CODEX_SHELL")
        self.replay: str | None = pick("replay", "FAKE_CODEX_REPLAY")
        self.exit_code = None if exit_code is None else int(exit_code)
        self.script_index = script_index


def _as_text(reply: Any) -> str:
    """A scripted reply that is not a string, as a model would write it out."""
    import json  # loaded already: the reply came from FAKE_CODEX_SCRIPT

    return json.dumps(reply)


def script_entry(state_dir: str) -> tuple[int, dict[str, Any]] | None:
    path = env("FAKE_CODEX_SCRIPT")
    if path is None:
        return None
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            entries = json.load(fh)
    except (OSError, ValueError) as exc:
        fail(f"fake codex: cannot load FAKE_CODEX_SCRIPT {path}: {exc}", code=99)
    if not isinstance(entries, list) or not entries:
        fail(f"fake codex: FAKE_CODEX_SCRIPT {path} must hold a non-empty JSON list", code=99)
    index = claim_counter(state_dir)
    entry = entries[min(index, len(entries) - 1)]
    if isinstance(entry, str):
        return index, {"mode": "ok", "reply": entry}
    if not isinstance(entry, dict):
        fail(f"fake codex: script entry {index} must be a string or an object", code=99)
    return index, entry


def claim_counter(state_dir: str) -> int:
    """Atomically claim the next 0-based turn index, shared by concurrent fake processes."""
    os.makedirs(state_dir, exist_ok=True)
    index = sum(1 for n in os.listdir(state_dir) if n.startswith("turn-"))
    while True:
        try:
            fd = os.open(os.path.join(state_dir, f"turn-{index:06d}"), os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            index += 1
            continue
        os.close(fd)
        return index


def build_scenario(settings: Settings) -> Scenario:
    state_dir = env("FAKE_CODEX_STATE_DIR") or os.path.join(settings.codex_home, "fake-state")
    claimed = script_entry(state_dir)
    return Scenario({}, None) if claimed is None else Scenario(claimed[1], claimed[0])


# --------------------------------------------------------------------------------------------
# The turn
# --------------------------------------------------------------------------------------------


class Turn:
    def __init__(
        self,
        settings: Settings,
        thread: Thread,
        prompt: str,
        scenario: Scenario,
        log: CallLog | None,
    ) -> None:
        self.settings = settings
        self.thread = thread
        self.prompt = prompt
        self.scenario = scenario
        self.log = log
        self.out = Emitter()
        self.recorded = Recorded(run_places(thread, settings), new_thread_id())
        self.rollout = Rollout(thread, settings, self.recorded)

    # -- building blocks: each event the recorded one, with this turn's values ------------

    def said(self, kind: str, scenario: str, **values: Any) -> dict[str, Any]:
        """The event of `kind` as codex printed it in `scenario`, with `values` in it (in
        its item, for an item)."""
        event = self.recorded.event(kind, scenario)
        event.get("item", event).update(values)
        return event

    def emit(self, kind: str, scenario: str, **values: Any) -> dict[str, Any]:
        """The event `said` makes, printed."""
        event = self.said(kind, scenario, **values)
        self.out.event(event)
        return event

    def item(self, kind: str, scenario: str, item_id: str | None = None,
             **values: Any) -> str:
        """An item event (`item.started:<type>` or `item.completed:<type>`) under this
        turn's next item id, or `item_id`; a completed one goes to the rollout too."""
        item_id = item_id or self.out.next_item_id()
        event = self.emit(kind, scenario, id=item_id, **values)
        if kind.startswith("item.completed:"):
            self.rollout.item(event["item"])
        return item_id

    def start(self) -> None:
        """thread.started, warning items, turn.started; records the turn in the rollout."""
        self.emit("thread.started", "answer")
        for message in self._warnings():
            self.item("item.completed:error", "answer", message=message)
        self.rollout.begin_turn(self.prompt)
        if self.scenario.stderr is not None:
            err(self.scenario.stderr)
        self.emit("turn.started", "answer")

    def _warnings(self) -> list[str]:
        s = self.settings
        warnings = []
        known = env("FAKE_CODEX_KNOWN_MODELS")
        if known is not None and s.model not in [m.strip() for m in known.split(",")]:
            warnings.append(
                f"Model metadata for `{s.model}` not found. Defaulting to fallback metadata; "
                "this can degrade performance and cause issues."
            )
        recorded = self.thread.recorded_model
        if self.thread.resumed and s.model_explicit and recorded and recorded != s.model:
            warnings.append(
                f"This session was recorded with model `{recorded}` but is resuming with "
                f"`{s.model}`. Consider switching back to `{recorded}` as it may affect Codex "
                "performance."
            )
        return warnings

    def reasoning(self, default: str | None = None) -> None:
        text = self.scenario.reasoning or default
        if text:
            self.item("item.completed:reasoning", "reasoning", text=text)

    def command(self, command: str | None = None, output: str | None = None,
                failed: bool = False, exit_code: int | None = None) -> None:
        """A command as codex ran it in the `command` recording (`failed_command` for a
        failed one): the recorded command and output, or these."""
        scenario = "failed_command" if failed else "command"
        started = {} if command is None else {"command": command}
        ended = {k: v for k, v in (("aggregated_output", output), ("exit_code", exit_code))
                 if v is not None}
        item_id = self.item("item.started:command_execution", scenario, **started)
        self.item("item.completed:command_execution", scenario, item_id, **started, **ended)

    def reply_text(self) -> str:
        if self.scenario.reply is not None:
            return self.scenario.reply
        return f"Fake Codex reply for turn {self.thread.turn_number}."

    def answer(self) -> None:
        self.item("item.completed:agent_message", "answer", text=self.reply_text())

    def turn_usage(self) -> dict[str, int]:
        """The recorded turn's tokens, or the scenario's."""
        usage: dict[str, int] = self.recorded.event("turn.completed", "answer")["usage"]
        usage.update({k: v for k, v in self.scenario.usage.items() if k in USAGE_KEYS})
        return usage

    def completed_event(self) -> dict[str, Any]:
        turn = self.turn_usage()
        total = {k: self.thread.prior_usage.get(k, 0) + turn[k] for k in USAGE_KEYS}
        self.rollout.complete(turn, total, self.out.last_message)
        event = self.recorded.event("turn.completed", "answer")
        event["usage"] = total
        return event

    def complete(self) -> int:
        self.out.event(self.completed_event())
        self.write_last_message(self.out.last_message)
        return self.exit_code(0)

    def failed(self, message: str) -> int:
        self.emit("error", "usage_limit", message=message)
        failed = self.recorded.event("turn.failed", "usage_limit")
        failed["error"]["message"] = message
        self.out.event(failed)
        self.rollout.failed(message)
        self.write_last_message(None)
        return self.exit_code(1)

    def exit_code(self, default: int) -> int:
        return default if self.scenario.exit_code is None else self.scenario.exit_code

    def write_last_message(self, message: str | None) -> None:
        path = self.settings.output_last_message
        if path is None:
            return
        try:
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(message or "")
        except OSError as exc:
            err(f"Failed to write last message file {rust_debug_path(path)}: {os_error_text(exc)}")
        if message is None:
            err(f"Warning: no last agent message; wrote empty content to {path}")

    # -- modes -----------------------------------------------------------------------------

    def run(self) -> int:
        handler = MODES.get(self.scenario.mode)
        if handler is None:
            fail(f"fake codex: unknown FAKE_CODEX_MODE {self.scenario.mode!r}", code=99)
        limit = int(env("FAKE_CODEX_MAX_INPUT_CHARS", str(MAX_INPUT_CHARS)) or MAX_INPUT_CHARS)
        if len(self.prompt) > limit:
            return self.input_too_large(limit)
        return handler(self)

    def input_too_large(self, limit: int) -> int:
        """codex 0.169.0 opens the thread, then refuses the turn: no rollout, exit 1."""
        self.emit("thread.started", "answer")
        data = {"input_error_code": "input_too_large", "max_chars": limit,
                "actual_chars": len(self.prompt)}
        fail_anyhow(
            f"turn/start: turn/start failed: Input exceeds the maximum length of {limit} "
            f"characters. (code -32602), data: {to_json(data)}",
            frames=0,
        )

    def mode_ok(self) -> int:
        self.start()
        self.reasoning()
        self.answer()
        return self.complete()

    def mode_slow(self) -> int:
        self.start()
        delay = 2.0 if self.scenario.delay is None else self.scenario.delay
        deadline = time.monotonic() + delay
        release = self.scenario.release

        def released() -> bool:
            return release is not None and os.path.exists(release)

        self.reasoning("Looking through the repository before answering.")
        while True:  # the recorded command, again and again until the delay is over
            remaining = deadline - time.monotonic()
            item_id = self.item("item.started:command_execution", "command")
            sleep_in_steps(min(1.0, max(0.0, remaining)), until=released)
            self.item("item.completed:command_execution", "command", item_id)
            if deadline - time.monotonic() <= 0 or released():
                break
        self.answer()
        return self.complete()

    def mode_commands(self) -> int:
        self.start()
        self.command(self.scenario.command)
        self.command(failed=True)
        self.reasoning("The second command failed.")
        self.answer()
        return self.complete()

    def mode_hang(self) -> int:
        self.start()
        sleep_forever()

    def mode_ignore_term(self) -> int:
        import signal

        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return self.mode_hang()

    def mode_spawn_child(self) -> int:
        import subprocess

        child = subprocess.Popen(
            ["sleep", "300"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        pidfile = env("FAKE_CODEX_CHILD_PIDFILE")
        if pidfile is not None:
            tmp = f"{pidfile}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(f"{child.pid}\n")
            os.replace(tmp, pidfile)
        if self.log is not None:
            self.log.update(child_pid=child.pid)
        return self.mode_hang()

    def mode_detach(self) -> int:
        """Leave a process behind that escaped codex's group and parentage (setsid and a
        double fork, as a daemonizing tool does), then answer."""
        self.detach_child()
        return self.mode_ok()

    def mode_detach_hang(self) -> int:
        self.detach_child()
        return self.mode_hang()

    def detach_child(self) -> None:
        pidfile = env("FAKE_CODEX_DETACH_PIDFILE")
        if self.daemonize():
            if pidfile is not None:
                with open(f"{pidfile}.tmp", "w", encoding="utf-8") as fh:
                    fh.write(f"{os.getpid()}\n")
                os.replace(f"{pidfile}.tmp", pidfile)
            if env("FAKE_CODEX_DETACH_CLEAN_ENV") == "1":  # nothing inherited in its environment
                os.execve("/bin/sleep", ["sleep", "300"], {})
            os.execvp("sleep", ["sleep", "300"])
        await_file(pidfile)

    def daemonize(self) -> bool:
        """Fork a process that leaves codex's group, session and parentage as a daemon does
        (setsid, a second fork, the middle exits at once, cwd /, stdio on /dev/null). True in
        that process, False in codex once the middle process has exited."""
        middle = os.fork()
        if middle != 0:
            os.waitpid(middle, 0)
            return False
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        os.chdir("/")
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        return True

    def mode_respawn(self) -> int:
        """Leave a daemon behind that ignores SIGTERM and keeps starting children that
        ignore it too (a supervisor gone wrong), then answer."""
        self.respawner()
        return self.mode_ok()

    def mode_respawn_hang(self) -> int:
        self.respawner()
        return self.mode_hang()

    def respawner(self) -> None:
        pidfile = env("FAKE_CODEX_RESPAWN_PIDFILE")
        if not self.daemonize():
            await_lines(pidfile, 2)  # the daemon and a child it started
            return
        import signal

        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        note_pid(pidfile, os.getpid())
        while True:
            child = os.fork()
            if child == 0:  # ignores TERM as its parent does; lives until killed
                sleep_forever()
            note_pid(pidfile, child)
            time.sleep(0.05)

    def mode_crash(self) -> int:
        self.start()
        self.reasoning("About to do something unwise.")
        err(
            "thread 'main' panicked at codex-rs/core/src/codex.rs:1234:17:\n"
            "called `Option::unwrap()` on a `None` value (simulated crash)\n"
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
        )
        code = self.scenario.exit_code
        if code is None and env("FAKE_CODEX_CRASH_EXIT"):
            code = int(env("FAKE_CODEX_CRASH_EXIT") or "101")
        if code is None:
            import signal

            os.kill(os.getpid(), signal.SIGKILL)
            sleep_forever()
        raise Exit(code)

    def mode_die_early(self) -> int:
        fail(self.scenario.stderr or DEFAULT_DIE_EARLY, code=self.exit_code(1))

    def mode_usage_error(self) -> int:
        sys.stderr.write(usage_error_text())
        raise Exit(2)

    def mode_replay(self) -> int:
        """What the real codex printed in a recorded scenario: its events, stderr and exit
        code as they were, its rollouts written as this run's (the thread's own, and each
        sub-agent's under a thread of its own)."""
        import json

        fixture = load_fixture(self.scenario.replay)
        places = run_places(self.thread, self.settings)
        for thread in fixture["rollouts"]:
            places.setdefault(thread, new_thread_id())

        def now(line: str) -> str:  # a rollout line written now, as codex would write it
            head = '{"timestamp":"'
            end = line.find('"', len(head))
            return head + now_iso() + line[end:] if line.startswith(head) else line

        for thread, lines in fixture["rollouts"].items():
            self.replay_rollout(places[thread], [now(placed(line, places)) for line in lines])
        for line in fixture["stderr"]:
            err(placed(line, places))
        for line in fixture["events"]:
            said = placed(line, places)
            self.out.write_raw(said + "\n")
            if '"agent_message"' in said:
                item = json.loads(said).get("item") or {}
                self.out.last_message = item.get("text", self.out.last_message)
        failed = any('"turn.failed"' in line for line in fixture["events"])
        self.write_last_message(None if failed else self.out.last_message)
        return self.exit_code(int(fixture["exit_code"]))

    def replay_rollout(self, thread_id: str, lines: list[str]) -> None:
        if self.settings.ephemeral:
            return
        path = self.thread.path if thread_id == self.thread.id else new_thread(
            self.settings, thread_id).path
        assert path is not None
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.writelines(line + "\n" for line in lines)

    def mode_hang_silent(self) -> int:
        sleep_forever()

    def mode_rate_limited(self) -> int:
        self.start()
        return self.failed(RATE_LIMITED)

    def mode_server_error(self) -> int:
        self.start()
        delay = self.scenario.delay or 0.0
        for attempt in range(1, 6):
            sleep_in_steps(delay / 5)
            notice = f"Reconnecting... {attempt}/5 ({HIGH_DEMAND})"
            self.emit("error", "usage_limit", message=notice)
        return self.failed(HIGH_DEMAND)

    def mode_offline(self) -> int:
        """Connection refused / no network (reference §11): Codex retries forever, printing
        `Reconnecting... waiting for network (...)` at 0.21 s, then after pauses of 5, 10,
        20 s, … (FAKE_CODEX_DELAY sets the first pause), and never ends the turn itself."""
        self.start()
        sleep_in_steps(0.21)
        pause = 5.0 if self.scenario.delay is None else self.scenario.delay
        while True:
            self.emit("error", "usage_limit", message=WAITING_FOR_NETWORK)
            sleep_in_steps(pause)
            pause *= 2

    def mode_malformed(self) -> int:
        self.start()
        self.out.write_raw("not json at all\n")
        self.out.write_raw('{"type":"item.completed","item":\n')
        self.out.write_raw("\n")
        self.reasoning()
        self.out.write_raw('["item.completed",{"id":"item_9"}]\n')
        self.out.write_raw('{"id":"item_9","text":"an object without a type"}\n')
        self.answer()
        done = to_json(self.completed_event())
        self.out.write_raw(done)  # the last line has no trailing newline
        self.write_last_message(self.out.last_message)
        return self.exit_code(0)

    def mode_partial_then_hang(self) -> int:
        self.start()
        line = to_json(self.said("item.completed:agent_message", "answer",
                                 id=self.out.next_item_id(), text=self.reply_text()))
        self.out.write_raw(line[: len(line) // 2])
        sleep_forever()

    def mode_no_message(self) -> int:
        self.start()
        self.reasoning()
        return self.complete()

    def mode_writes_file(self) -> int:
        self.start()
        changes = plan_file_changes(self.settings.cwd, self.scenario)
        listed = [{"path": p, "kind": k} for p, k in changes]
        item_id = self.item("item.started:file_change", "file_change", changes=listed)
        applied = apply_file_changes(changes, self.scenario.write_content,
                                     self.scenario.write_append)
        done = {} if applied else {"status": "failed"}  # no recording has a failed one
        self.item("item.completed:file_change", "file_change", item_id, changes=listed, **done)
        self.answer()
        return self.complete()

    def mode_shell(self) -> int:
        import subprocess

        self.start()
        done = subprocess.run(["/bin/sh", "-c", self.scenario.shell or "true"],
                              cwd=self.settings.cwd, stdin=subprocess.DEVNULL,
                              capture_output=True, check=False)
        output = (done.stdout + done.stderr).decode("utf-8", "replace")
        self.command(f"/bin/sh -c {self.scenario.shell!r}", output,
                     failed=done.returncode != 0, exit_code=done.returncode)
        self.answer()
        return self.complete()


MODES: dict[str, Callable[[Turn], int]] = {
    "ok": Turn.mode_ok,
    "slow": Turn.mode_slow,
    "commands": Turn.mode_commands,
    "hang": Turn.mode_hang,
    "hang_silent": Turn.mode_hang_silent,
    "crash": Turn.mode_crash,
    "die_early": Turn.mode_die_early,
    "rate_limited": Turn.mode_rate_limited,
    "server_error": Turn.mode_server_error,
    "offline": Turn.mode_offline,
    "malformed": Turn.mode_malformed,
    "partial_then_hang": Turn.mode_partial_then_hang,
    "no_message": Turn.mode_no_message,
    "writes_file": Turn.mode_writes_file,
    "shell": Turn.mode_shell,
    "spawn_child": Turn.mode_spawn_child,
    "detach": Turn.mode_detach,
    "detach_hang": Turn.mode_detach_hang,
    "respawn": Turn.mode_respawn,
    "respawn_hang": Turn.mode_respawn_hang,
    "ignore_term": Turn.mode_ignore_term,
    "usage_error": Turn.mode_usage_error,
    "replay": Turn.mode_replay,
}


def load_fixture(name: str | None) -> dict[str, Any]:
    """A recorded scenario by name (tests/fixtures/codex/<the pinned version>/<name>.json),
    or by path."""
    import json

    if not name:
        fail("fake codex: replay needs FAKE_CODEX_REPLAY (a scenario or a fixture)", code=99)
    path = name if name.endswith(".json") else os.path.join(
        os.path.dirname(HERE), "fixtures", "codex", DEFAULT_VERSION, f"{name}.json")
    try:
        with open(path, encoding="utf-8") as fh:
            fixture: dict[str, Any] = json.load(fh)
    except (OSError, ValueError) as exc:
        fail(f"fake codex: cannot load the recorded scenario {path}: {exc}", code=99)
    return fixture


def note_pid(pidfile: str | None, pid: int) -> None:
    """Append `pid` to `pidfile`, one per line (each line written whole)."""
    if pidfile is not None:
        fd = os.open(pidfile, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{pid}\n".encode())
        finally:
            os.close(fd)


def await_file(path: str | None, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while path is not None and not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)


def await_lines(path: str | None, count: int, timeout: float = 10.0) -> None:
    """Until `path` holds `count` lines (note_pid writes each whole), or `timeout`."""
    deadline = time.monotonic() + timeout
    while path is not None and time.monotonic() < deadline:
        try:
            with open(path, "rb") as fh:
                if fh.read().count(b"\n") >= count:
                    return
        except OSError:
            pass  # not there yet
        time.sleep(0.01)


def sleep_in_steps(seconds: float, step: float = 0.05,
                   until: Callable[[], bool] | None = None) -> None:
    """Sleep `seconds`, or until `until()` says so (asked every `step`)."""
    deadline = time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        if until is not None and until():
            return
        time.sleep(min(step, remaining))


def plan_file_changes(cwd: str, scenario: Scenario) -> list[tuple[str, str]]:
    """writes_file's changes as (absolute path, kind) with kind add | update | delete."""
    write_path, delete_path = scenario.write_path, scenario.delete_path
    if write_path is None and delete_path is None:
        write_path = DEFAULT_WRITE_PATH
    changes = []
    if write_path is not None:
        path = os.path.abspath(os.path.join(cwd, write_path))
        changes.append((path, "update" if os.path.exists(path) else "add"))
    if delete_path is not None:
        changes.append((os.path.abspath(os.path.join(cwd, delete_path)), "delete"))
    return changes


def apply_file_changes(changes: list[tuple[str, str]], content: str,
                       append: bool = False) -> bool:
    """Write (or append to) or delete the files regardless of the sandbox; False if any
    change failed."""
    ok = True
    for path, kind in changes:
        try:
            if kind == "delete":
                os.remove(path)
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "a" if append else "w", encoding="utf-8", newline="") as fh:
                fh.write(content)
        except OSError:
            ok = False
    return ok


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------

EARLY_MODES = ("usage_error", "die_early", "hang_silent")


def early_env_mode() -> str | None:
    """Modes that act before the thread when chosen by env (not by a script entry)."""
    if env("FAKE_CODEX_SCRIPT") is not None:
        return None
    mode = env("FAKE_CODEX_MODE", "ok")
    return mode if mode in EARLY_MODES else None


def run_exec(argv: list[str], log: CallLog | None) -> int:
    inv = parse_invocation(argv)
    install_signal_handlers()
    early = early_env_mode()
    if early is not None and log is not None:
        log.update(mode=early)
    if early == "usage_error":
        sys.stderr.write(usage_error_text())
        return 2
    if inv.value("remote") is not None:  # the real one would talk to that app server
        fail("fake codex: --remote (an app server to connect to) is not modelled")
    settings = build_settings(inv)
    captured = StdinRead()
    try:
        prompt = resolve_prompt(inv, captured)
    finally:
        if log is not None:
            log.record_stdin(captured.raw)
    if log is not None:
        log.update(prompt=prompt, effective_cwd=settings.cwd, model=settings.model)
    if early == "die_early":
        fail(env("FAKE_CODEX_STDERR", DEFAULT_DIE_EARLY) or DEFAULT_DIE_EARLY)
    if early == "hang_silent":
        sleep_forever()
    check_output_schema(settings.output_schema)
    check_git(settings)
    check_last_message_file(settings.output_last_message)
    if not settings.json:  # codex's transcript for a person: sparring never asks for it
        fail("fake codex: a turn without --json is not modelled (sparring passes --json)",
             code=99)
    thread = open_thread(settings, inv.resume is not None)
    scenario = build_scenario(settings)
    if log is not None:
        log.update(
            mode=scenario.mode,
            thread_id=thread.id,
            resumed=thread.resumed,
            turn_number=thread.turn_number,
            script_index=scenario.script_index,
            sandbox=settings.sandbox,
            rollout_path=thread.path,
        )
    return Turn(settings, thread, prompt, scenario, log).run()


def main(argv: list[str] | None = None) -> int:
    global _LOG
    args = sys.argv[1:] if argv is None else argv
    if env("FAKE_CODEX_HELP") == "1":
        sys.stdout.write(ENV_DOC)
        return 0
    log = _LOG = CallLog.start(args)
    if env("FAKE_CODEX_TMP_WARNING") == "1":
        tmp = os.environ.get("TMPDIR") or "/tmp"
        home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
        err(
            "WARNING: proceeding, even though we could not create PATH aliases: Refusing to create "
            f'helper binaries under temporary dir "{tmp}" (codex_home: AbsolutePathBuf("{home}"))'
        )
    try:
        code = run_exec(args, log)
    except Display as shown:
        sys.stdout.write(str(shown))
        code = 0
    except UsageError as bad:
        sys.stderr.write(str(bad))
        code = 2
    except Exit as done:
        code = done.code
    sys.stdout.flush()
    if log is not None:
        log.update(exit_code=code, ended_at=now_iso())
    return code


if __name__ == "__main__":
    sys.exit(main())
