"""One code-fence stripper for everything sparring reads that a model may have fenced:
Claude's hand-ins (`answers.load_json`) and Codex's structured answers (`events.parse_review`),
both read leniently because what comes out is parsed and validated; Codex's free-text rounds
(`turns._deliver`), read strictly because their text is kept as it is.
"""

from __future__ import annotations

import re

# The whole text is one fenced block: an opening ``` line (an optional info word such as
# json, yaml or markdown, then optional spaces), the body, a closing ``` line; only
# whitespace around it.
_FENCED = re.compile(r"\s*```[\w+.-]*[ \t]*\n(.*)\n```\s*", re.S)


def unfence(text: str, *, lenient: bool = False) -> str:
    """The body of `text` when `text` is wholly one fenced block, else `text` unchanged.

    Accepted (the body is returned exactly, neither stripped nor re-indented):
    - a fence with an info word (```json, ```yaml, ```markdown, ```c++) or a bare ```;
    - whitespace (blank lines included) before the opening line and after the closing one;
    - fences nested inside the body: the first line opens the block and the last line
      closes it, whatever ``` lines come between (so two blocks with text between them
      count as one whose body holds the text and the inner fence lines).
    Not accepted, returned unchanged: text before the opening fence or after the closing
    one (a sentence, then a block, is an answer with a block in it, not a fenced answer);
    an opening fence without a closing one; a fence not on lines of its own
    (```{"a": 1}```); text without a fence.

    `lenient` (for text that is parsed as JSON or YAML next, and refused there when it is
    not): a text that starts with a fence is unwrapped all the same. Its opening line goes
    (whatever info string it has); so does everything from the last ``` on (a closing fence
    on the body's last line, a sentence after it), or nothing when there is no closing
    fence. Lines ending in CRLF are fine.
    """
    match = _FENCED.fullmatch(text)
    if match:
        return match.group(1)
    start = text.lstrip()
    if not lenient or not start.startswith("```") or "\n" not in start:
        return text
    body = start.split("\n", 1)[1]
    return body.rsplit("```", 1)[0]
