"""The one code-fence stripper: exactly which texts count as a fenced block, and the three
readers that use it (Claude's hand-ins, Codex's structured answers, Codex's round files)."""

from __future__ import annotations

import pytest

from sparring import answers, turns
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
    assert turns.parse_review(fenced) == {"a": 1}
    assert answers.load_json(b"```yaml\na: 1\nb: two\n```", "verdict") == {"a": 1, "b": "two"}


def test_a_block_with_prose_around_it_is_not_json() -> None:
    assert turns.parse_review(f"My answer:\n```json\n{BODY}\n```") is None
    with pytest.raises(SparringError) as caught:
        answers.load_json(f"```json\n{BODY}\n```\nthanks".encode(), "verdict")
    assert caught.value.code == "verdict_invalid"
