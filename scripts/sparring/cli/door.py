"""The first door: `python -m sparring` and the `sparring` command.

The calls a debate makes every round answer here without loading the CLI (click and what
only the CLI needs): `poll` and `wait` of an ended turn (the commonest call; turn/quick.py
reads it), then every other `poll SESSION` and `wait SESSION [--timeout S]`, `status
SESSION`, and a workflow's own `status` (`debate status DIR`, `discuss status SESSION`),
which run the very functions the CLI runs and print through cli/verb.py as it does; and
`guard check --baseline FILE`, which spends most of its time waiting for git status (and,
when the index moved, git ls-files): it starts them before the rest of the check loads,
and the check runs without click, so less of the machine goes to Python while git works.
The calls that start a turn, whose codex waits for this process, go without click too, as
the skills make them: `start` and `resume` with a prompt file or a template, and a
workflow's own verbs that start a turn (`debate round DIR --file F`, `discuss round
SESSION --file F`); tests/test_door.py holds each to the call click's callback makes.
Everything else, and anything unusual, goes on to the full CLI (cli/main.py), which prints
the same object the slow way.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WAIT_OPTIONS = ("--timeout",)


def main() -> int:
    """`python -m sparring` and the `sparring` command: this fast path, else the CLI."""
    code = run(sys.argv[1:])
    if code is None:
        code = launching(sys.argv[1:])
    if code is None:
        from sparring.cli.main import main as cli

        code = cli()
    return code


def run(argv: list[str]) -> int | None:
    """Print `poll`/`wait` of an ended turn, or `guard check`, and return the exit status;
    None when the full CLI must answer (it has not printed anything then)."""
    from sparring.output import is_text

    if not all(is_text(arg) for arg in argv):
        return None  # the CLI refuses it (not_utf8) before any verb runs
    if argv[:2] == ["guard", "check"]:
        return _guard_check(argv[2:])
    request = _request(argv)
    if request is not None:
        from sparring.output import EXIT_OK, emit, success
        from sparring.turn.quick import SlowPath, WithStatus, ended_turn

        try:
            found = ended_turn(*request)
        except KeyboardInterrupt:
            return _interrupted()
        except WithStatus as known:
            return _verb(argv, known.read)
        except SlowPath:
            pass
        except Exception:  # anything unexpected: the full CLI reports it
            return None
        else:
            emit(success(request[0], found), request[1])  # as the CLI: hints name the session
            return EXIT_OK
    return _verb(argv)


def _verb(argv: list[str], read: tuple[str, dict[str, Any]] | None = None) -> int | None:
    """A verb a debate calls every round, run as the CLI runs it, without click; `read`, for
    poll and wait: the session as turn/quick.py read it (commands/poll.py takes it)."""
    found = _call(argv, read)
    if found is None:
        return None
    verb, call, named = found
    from sparring.cli.verb import run as run_verb

    try:
        return run_verb(verb, call, lambda: named)
    except KeyboardInterrupt:
        return _interrupted()
    # Anything unexpected is a bug, which the CLI reports with its traceback: these verbs
    # print nothing before they end, and running one again changes nothing it recorded.
    except Exception:
        return None


def _call(argv: list[str], read: tuple[str, dict[str, Any]] | None = None
          ) -> tuple[str, Callable[[], dict[str, Any]], str | None] | None:
    """(verb, the call that answers it, the SESSION it names) for `poll SESSION`, `wait
    SESSION [--timeout S]`, `status SESSION` and a workflow's `status` verb; None when
    the command line holds anything else (options, --help, a typo): the CLI's business."""
    # str folders, as the CLI's Paths print: the calls of every round load no pathlib.
    request = _request(argv)
    if request is not None:
        verb, ref = request
        if verb == "poll":
            from sparring.commands.poll import poll

            return verb, lambda: poll(ref, os.getcwd(), False, read), ref
        timeout = _wait_timeout(argv[1:])
        if timeout is None:
            return None
        from sparring.commands.poll import wait

        return verb, lambda: wait(ref, os.getcwd(), timeout, False, None, read), ref
    if len(argv) == 2 and argv[0] == "status" and _is_word(argv[1]):
        from sparring.cli.verb import project_place
        from sparring.commands import status

        ref = argv[1]
        return "status", lambda: status.status(ref, project_place(".").text), ref
    if len(argv) == 3 and argv[1] == "status" and _is_word(argv[2]):
        return _workflow_status(argv[0], argv[2])
    return None


def _workflow_status(command: str, word: str
                     ) -> tuple[str, Callable[[], dict[str, Any]], str | None] | None:
    """`COMMAND status DIR|SESSION` of a workflow whose status verb takes that one argument,
    through the registry as the CLI calls it (cli/workflows.py)."""
    from sparring.workflows import registry

    flow, verb = _flow_verb(command, "status")
    if flow is None or verb is None or len(verb.params) != 1:
        return None
    (param,) = verb.params
    if param.flag is not None or param.kind not in ("dir", "session"):
        return None
    if param.kind == "dir" and not os.path.isdir(word):
        return None  # a file, or nothing there: the CLI says so
    value = word  # a folder as str: the workflow's status reads it as the CLI's Path
    return (f"{command} status",
            lambda: registry.call(flow, "status", {param.name: value}, os.getcwd()),
            word if param.name == "session" else None)


def _flow_verb(command: str, name: str) -> tuple[Any, Any]:
    """(the workflow whose command is `command`, its verb `name`), each None if none."""
    from sparring.workflows import registry

    flow = next((f for f in registry.WORKFLOWS.values() if f.command == command), None)
    return flow, next((v for v in flow.verbs if v.name == name), None) if flow else None


# `start` and `resume` as the skills call them: SESSION, then the prompt's options below,
# each once. Anything else (another option, --help, `--`, an option before SESSION, a value
# that looks like an option) is the CLI's business.
_LAUNCH_OPTIONS = {"--prompt-file": "prompt_file", "--template": "template",
                   "--vars-file": "vars_file"}
_PATH_OPTIONS = ("prompt_file", "vars_file")  # click.Path(dir_okay=False): a Path
# What the CLI's options read from the environment: with any of them set, the CLI answers.
_LAUNCH_VARIABLES = ("SPARRING_EFFORT", "SPARRING_MODEL", "SPARRING_TIMEOUT",
                     "SPARRING_STALL_AFTER", "SPARRING_OFFLINE_AFTER")
# The parameters of cli/main.py's callbacks named in their signatures; the rest are the
# turn's options (`**options`).
_NAMED = ("session", "prompt_file", "template", "var_pairs", "var_file_pairs", "vars_file",
          "schema")


def launching(argv: list[str]) -> int | None:
    """`start` or `resume` as the skills call them, or a workflow's own verb that starts a
    turn (`debate round DIR --file F`), run as the CLI's callback runs it, without click (it
    loads about 13 ms, and the turn's codex waits for this process); None for anything
    else, which the CLI then answers (nothing was done here)."""
    from sparring.cli.verb import run as run_verb

    params = launch_params(argv)
    if params is not None:
        verb, session = argv[0], params["session"]
        return _launched(lambda: run_verb(verb, lambda: _launch(verb, params),
                                          lambda: session))
    found = workflow_launch(argv)
    if found is None:
        return None
    flow, name, values = found
    from pathlib import Path

    from sparring.workflows import registry

    session = values.get("session")  # as click's context names it for the CLI's hints
    return _launched(lambda: run_verb(f"{flow.command} {name}",
                                      lambda: registry.call(flow, name, values, Path.cwd()),
                                      lambda: session))


def _launched(call: Callable[[], int]) -> int:
    from sparring.cli.verb import internal_error

    try:
        return call()
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as exc:  # a bug: reported, never run a second time by the CLI
        return internal_error(exc)


# The options of the turn's option groups as cli/workflows.py names them, all None unless
# given (the door takes none of them: tests/test_door.py holds these to click's); the verb
# gets them together, as `options`.
_TURN_OPTIONS = {
    "turn-limits": ("timeout", "stall_after", "offline_after", "budget_tokens"),
    "codex-turn": ("effort", "model", "sandbox", "timeout", "stall_after", "offline_after",
                   "budget_tokens"),
}


def workflow_launch(argv: list[str]) -> tuple[Any, str, dict[str, Any]] | None:
    """(workflow, verb, the values click gives the verb's callback) for `COMMAND VERB`, a
    workflow's own verb that starts a turn, called as its SKILL.md calls it: each argument
    as a word, then its file and text options (`--flag VALUE`) and flags, each once, and
    none of the turn's settings; None for anything else."""
    if len(argv) < 2 or any(name in os.environ for name in _LAUNCH_VARIABLES):
        return None
    flow, verb = _flow_verb(argv[0], argv[1])
    if flow is None or verb is None or not any(p.kind in _TURN_OPTIONS for p in verb.params):
        return None
    from sparring.output import is_text

    if not all(is_text(arg) for arg in argv):
        return None
    values = _verb_values(verb, argv[2:])
    return None if values is None else (flow, verb.name, values)


def _verb_values(verb: Any, words: list[str]) -> dict[str, Any] | None:
    """The values click gives: the arguments, then the options (each once, or its default),
    then the turn's settings together, all None."""
    arguments = [p for p in verb.params if p.flag is None and p.kind not in _TURN_OPTIONS]
    values = _verb_arguments(arguments, words[:len(arguments)])
    given = _verb_options(verb, words[len(arguments):])
    if values is None or given is None:
        return None
    for param in verb.params:
        if param.kind == "flag":
            values[param.name] = param.name in given
        elif param.flag is not None:
            values[param.name] = given.get(
                param.name, None if param.kind == "file" else param.default)
        elif param.kind in _TURN_OPTIONS:
            values["options"] = {**values.get("options", {}),
                                 **dict.fromkeys(_TURN_OPTIONS[param.kind])}
    return values


def _verb_arguments(params: list[Any], words: list[str]) -> dict[str, Any] | None:
    """Each argument as a word (a DIR as click.Path gives it); None for anything else: an
    optional argument, another option group, a word missing or like an option."""
    from pathlib import Path

    if len(words) < len(params) or not all(_is_word(word) for word in words):
        return None
    values: dict[str, Any] = {}
    for param, word in zip(params, words, strict=True):
        if param.kind not in ("dir", "session", "text") or not param.required:
            return None
        if param.kind == "dir" and not _click_path(word, folder=True):
            return None
        values[param.name] = Path(word) if param.kind == "dir" else word
    return values


def _verb_options(verb: Any, words: list[str]) -> dict[str, Any] | None:
    """The options given, each once (`--flag VALUE`, or a bare flag); None for anything
    else."""
    from pathlib import Path

    flags = {p.flag: p for p in verb.params if p.flag is not None}
    given: dict[str, Any] = {}
    while words:
        param = flags.get(words[0])
        if param is None or param.name in given:
            return None
        if param.kind == "flag":
            given[param.name], words = True, words[1:]
            continue
        if len(words) < 2 or not _is_word(words[1]):
            return None
        if param.kind == "file" and not _click_path(words[1], folder=False):
            return None
        given[param.name] = Path(words[1]) if param.kind == "file" else words[1]
        words = words[2:]
    return given


def _click_path(path: str, folder: bool) -> bool:
    """Whether click.Path takes `path` (a folder, or a file when not `folder`): what is
    there must be of that kind and readable (click refuses it otherwise); what is not there
    is the verb's to report."""
    if not os.path.exists(path):
        return True
    return os.path.isdir(path) == folder and os.access(path, os.R_OK)


def _launch(verb: str, params: dict[str, Any]) -> dict[str, Any]:
    """The call cli/main.py's `start` or `resume` callback makes with these parameters."""
    from pathlib import Path

    from sparring.commands import start as commands

    p = params
    options = {key: value for key, value in p.items()
               if key not in (*_NAMED, "recover", "accept_changes")}
    prompt = (p["prompt_file"], p["template"], p["var_pairs"], p["var_file_pairs"],
              p["vars_file"], p["schema"])
    if verb == "start":
        return commands.start(p["session"], Path.cwd(), options, *prompt)
    return commands.resume(p["session"], Path.cwd(), options, *prompt, p["recover"],
                           p["accept_changes"])


def launch_params(argv: list[str]) -> dict[str, Any] | None:
    """The parameters click gives the `start` or `resume` callback for `argv`, when the
    door takes it; None when it does not."""
    if (len(argv) < 2 or argv[0] not in ("start", "resume") or not _is_word(argv[1])
            or any(name in os.environ for name in _LAUNCH_VARIABLES)):
        return None
    from sparring.output import is_text

    if not all(is_text(arg) for arg in argv):
        return None  # the CLI refuses it (not_utf8)
    given: dict[str, str] = {}
    words = argv[2:]
    if len(words) % 2:
        return None
    for option, value in zip(words[::2], words[1::2], strict=True):
        name = _LAUNCH_OPTIONS.get(option)
        if name is None or name in given or not _is_word(value):
            return None
        if name in _PATH_OPTIONS and not _click_path(value, folder=False):
            return None  # click refuses a folder, or a file it cannot read
        given[name] = value
    from pathlib import Path

    params: dict[str, Any] = {
        "session": argv[1], "effort": None, "sandbox": None, "timeout": None,
        "stall_after": None, "offline_after": None, "budget_tokens": None,
        "prompt_file": None, "template": None, "var_pairs": (), "var_file_pairs": (),
        "vars_file": None, "schema": None}
    if argv[0] == "start":
        params["model"] = None
    else:
        params.update(recover=False, accept_changes=False)
    for name, value in given.items():
        params[name] = Path(value) if name in _PATH_OPTIONS else value
    return params


def _wait_timeout(words: list[str]) -> float | None:
    """The seconds of the last `--timeout` as the CLI reads them (limits.py), its default
    when none is given; None for a value the CLI refuses."""
    from sparring import limits

    value: str | float = limits.WAIT_TIMEOUT_S
    for i, word in enumerate(words):
        if word == "--timeout":
            value = words[i + 1]
        elif word.startswith("--timeout="):
            value = word.partition("=")[2]
    try:
        return limits.seconds(value, allow_zero=True)
    except ValueError:
        return None  # the CLI's usage error


def _is_word(text: str) -> bool:
    return bool(text) and not text.startswith("-")


def _guard_check(words: list[str]) -> int | None:
    """`guard check --baseline FILE`, whose time is git's: git starts before anything else
    loads, and the CLI (click and the rest) never does."""
    baseline = _baseline(words)
    if baseline is None:
        return None
    from pathlib import Path

    from sparring.commands.guard import baseline_file, check
    from sparring.errors import SparringError
    from sparring.guard import start_early

    try:
        start_early(baseline_file(Path(baseline)))  # nothing reads a file the door refuses
        found = check(Path(baseline))
    except SparringError as exc:  # as the CLI's run_verb reports it
        from sparring.output import EXIT_FAILED, emit, failure

        emit(failure("guard check", exc))
        return EXIT_FAILED
    except KeyboardInterrupt:
        return _interrupted()
    except Exception:  # a bug: the full CLI reports it with its traceback
        return None
    from sparring.output import EXIT_OK, emit, success

    emit(success("guard check", found))
    return EXIT_OK


def _baseline(words: list[str]) -> str | None:
    """FILE of `--baseline FILE` or `--baseline=FILE` alone; None for anything else (a
    folder, --help, a typo), which is the CLI's business."""
    if len(words) == 2 and words[0] == "--baseline":
        path = words[1]
    elif len(words) == 1 and words[0].startswith("--baseline="):
        path = words[0].partition("=")[2]
    else:
        return None
    return path if path and not os.path.isdir(path) else None


def _interrupted() -> int:
    """As the CLI reports an interrupt: nothing was written."""
    from sparring.errors import SparringError
    from sparring.output import emit, failure

    emit(failure("sparring", SparringError(
        "interrupted", "interrupted", "run the verb again; what it had written is kept")))
    return 130


def _request(argv: list[str]) -> tuple[str, str] | None:
    """(verb, session) of `poll SESSION` or `wait SESSION [--timeout S]`, else None."""
    if not argv or argv[0] not in ("poll", "wait"):
        return None
    verb, words, refs = argv[0], iter(argv[1:]), []
    for word in words:
        name, _, value = word.partition("=")
        if verb == "wait" and name in _WAIT_OPTIONS:
            if not _is_timeout(value if "=" in word else next(words, "")):
                return None
        elif word.startswith("-") or not word:
            return None  # --full, --seal, --help, a typo: the CLI's business
        else:
            refs.append(word)
    return (verb, refs[0]) if len(refs) == 1 else None


def _is_timeout(text: str) -> bool:
    """Whether the CLI takes `text` as wait's --timeout (limits.py reads it for both)."""
    from sparring import limits

    try:
        limits.seconds(text, allow_zero=True)
    except ValueError:
        return False
    return True
