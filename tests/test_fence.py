"""The one code-fence stripper: exactly which texts count as a fenced block, strictly (Codex's
round files) and leniently (Claude's hand-ins and Codex's structured answers, parsed next)."""

from __future__ import annotations

import pytest

from sparring import answers
from sparring.codex import events
from sparring.errors import SparringError
from sparring.fence import unfence

BODY = '{"a": 1}'


@pytest.mark.parametrize(("text", "body"), [
    (f"```json\n{BODY}\n```", BODY),  # an info word
    (f"```\n{BODY}\n```", BODY),  # a bare fence
    ("```yaml\na: 1\n```", "a: 1"),
    ("```markdown\n# Round 2\n\ntext\n```", "# Round 2\n\ntext"),
    (f"```c++\n{BODY}\n```", BODY),
    (f"```json  \n{BODY}\n```", BODY),  # spaces after the info word
    (f"\n\n  ```json\n{BODY}\n```\n\n", BODY),  # whitespace around the block
    (f"```json\n\n{BODY}\n\n```", f"\n{BODY}\n"),  # the body exactly as it was
    ("```markdown\nsee:\n```py\nx = 1\n```\ndone\n```", "see:\n```py\nx = 1\n```\ndone"),  # nested
    ("```\na\n```\nbetween\n```\nb\n```", "a\n```\nbetween\n```\nb"),  # first opens, last closes
])
def test_a_text_that_is_wholly_one_fenced_block_is_unwrapped(text: str, body: str) -> None:
    assert unfence(text) == body


@pytest.mark.parametrize("text", [
    BODY,  # no fence
    f"Here it is:\n```json\n{BODY}\n```",  # text before the fence
    f"```json\n{BODY}\n```\nThat is my answer.",  # text after the fence
    f"```json\n{BODY}",  # no closing fence
    f"```json {BODY}```",  # not on lines of their own
    "```\n```",  # no body line
    f"```json\n{BODY}\n``` trailing",
    "",
])
def test_anything_else_is_left_as_it_is(text: str) -> None:
    assert unfence(text) == text


def test_claude_s_hand_in_codex_s_answer_and_its_round_file_all_unwrap_the_same() -> None:
    fenced = f"  ```json\n{BODY}\n```\n"
    assert answers.load_json(fenced.encode(), "verdict") == {"a": 1}
    assert events.parse_review(fenced) == {"a": 1}
    assert answers.load_json(b"```yaml\na: 1\nb: two\n```", "verdict") == {"a": 1, "b": "two"}


@pytest.mark.parametrize(("text", "body"), [
    (f"```json\n{BODY}\n```\nThat is my answer.", f"{BODY}\n"),  # a sentence after the block
    (f"```json\n{BODY}", BODY),  # no closing fence
    (f"```json\n{BODY}```", BODY),  # the closing fence on the body's last line
    (f"```json title=verdict\n{BODY}\n```", f"{BODY}\n"),  # an info string, not a word
    (f"```json\r\n{BODY}\r\n```\r\n", f"{BODY}\r\n"),  # CRLF line ends
    (f"  ```\n{BODY}\n```", BODY),  # the strict form, as ever
])
def test_leniently_a_text_that_starts_with_a_fence_is_unwrapped(text: str, body: str) -> None:
    assert unfence(text, lenient=True) == body


@pytest.mark.parametrize("text", [
    BODY,
    f"Here it is:\n```json\n{BODY}\n```",  # text before the fence
    f"```json {BODY}```",  # one line: nothing to take the opening line from
])
def test_leniently_anything_else_is_left_as_it_is(text: str) -> None:
    assert unfence(text, lenient=True) == text


@pytest.mark.parametrize("text", [
    f"```json\n{BODY}\n```\nthanks",
    f"```json\n{BODY}",
    f"```json title=x\n{BODY}\n```",
    f"```json\r\n{BODY}\r\n```",
])
def test_the_json_readers_take_a_block_with_a_loose_fence(text: str) -> None:
    assert answers.load_json(text.encode(), "verdict") == {"a": 1}
    assert events.parse_review(text) == {"a": 1}


def test_a_block_with_prose_before_it_is_not_json() -> None:
    assert events.parse_review(f"My answer:\n```json\n{BODY}\n```") is None
    with pytest.raises(SparringError) as caught:
        answers.load_json(f"Here:\n```json\n{BODY}\n```".encode(), "verdict")
    assert caught.value.code == "verdict_invalid"


def test_a_round_file_keeps_a_loosely_fenced_answer_as_it_was() -> None:
    # Round files are kept as text: only a text that is wholly one block is unwrapped.
    text = "```markdown\n# Round 2\n```\nand a closing remark"
    assert unfence(text) == text
