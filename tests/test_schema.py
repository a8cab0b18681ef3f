"""sparring's own schema checks (scripts/sparring/schema.py) against the `jsonschema` package.

The runner checks each structured answer, and `verdict` and `finalize` what Claude hands in,
against the three schemas in scripts/sparring/schemas/. It used `jsonschema` for that, whose
loading alone took 100 ms of CPU per call; schema.py checks the strict subset those schemas
keep to. Here the package is the reference: for thousands of values, valid and broken at
every depth, both must find the same problems, at the same places, in the same order.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from sparring import answers, schema
from sparring.choices import CLAUDE_SYNTHESIS, CLAUDE_VERDICT, CODEX_ANSWER

SCHEMAS = [CODEX_ANSWER, CLAUDE_VERDICT, CLAUDE_SYNTHESIS]
# Values that break a place's rules, or happen to keep them: types JSON Schema tells apart
# (a boolean is no number; 1.0 is an integer), strings a pattern or an enum turns down.
ANYTHING = [None, True, False, 0, 1, 1.0, 2.5, "", "x", "X-1", "C-0", "S-2", "agree", "high",
            [], [""], ["a", 1], {}, {"id": "X-1"}]
PATTERNED = ["X-1", "C-12", "S-3", "X-0", "x-1", "X-1 ", "", "C-", "S-10"]


def sample(rule: dict[str, Any], rng: random.Random, depth: int = 0, tidy: bool = False
           ) -> Any:
    """A value for `rule`: mostly of its shape, sometimes anything, at every depth; `tidy`,
    always of its shape and mostly within its rules (the schemas have many required keys, so
    a value broken somewhere is the rule, and the tidy ones keep valid values in the mix)."""
    if not tidy and (rng.random() < 0.05 or depth > 5):
        return rng.choice(ANYTHING)
    if "enum" in rule:
        return rng.choice(rule["enum"] if tidy else [*rule["enum"], "none of these"])
    kind = rule.get("type")
    kind = rng.choice(kind) if isinstance(kind, list) else kind
    if kind == "object":
        value = {name: sample(inner, rng, depth + 1, tidy)
                 for name, inner in rule.get("properties", {}).items()
                 if name in rule.get("required", ()) or rng.random() < (0.5 if tidy else 0.97)}
        if not tidy and rng.random() < 0.05:
            value["unasked"] = "x"
        return value
    if kind == "array":
        return [sample(rule.get("items", {}), rng, depth + 1, tidy)
                for _ in range(rng.randrange(3 if tidy or depth > 3 else 4))]
    if kind == "string":
        if tidy:
            return rng.choice(["X-1", "C-12", "S-3"] if "pattern" in rule else ["text", "é ✓"])
        return rng.choice(PATTERNED if "pattern" in rule else ["", "text", "é ✓"])
    if kind == "null":
        return None
    if kind == "integer":  # around a `minimum` and a `maximum`, and whole floats
        return rng.choice([1, 55, 100, 7.0] if tidy else [-1, 0, 1, 55, 100, 101, 7.0, 2.5])
    return rng.choice(ANYTHING)


def reference(validator: Draft202012Validator, value: Any) -> list[tuple[Any, ...]]:
    """What `jsonschema` finds: place, rule, the rule's value, and what a missing property's
    problem says (the one message sparring keeps as the package words it)."""
    return [(tuple(e.absolute_path), str(e.validator), e.validator_value,
             e.message if e.validator == "required" else None)
            for e in validator.iter_errors(value)]


@pytest.mark.parametrize("name", SCHEMAS)
def test_the_same_problems_as_jsonschema_finds_for_a_thousand_values(name: str) -> None:
    rules = json.loads(answers.schema_path(name).read_text(encoding="utf-8"))
    validator = Draft202012Validator(rules)
    rng = random.Random(name)
    broken = 0
    for _ in range(1000):
        value = sample(rules, rng, tidy=rng.random() < 0.3)
        ours = [(p.path, p.rule, p.bound, p.message if p.rule == "required" else None)
                for p in schema.problems(rules, value)]
        assert ours == reference(validator, value), value
        broken += bool(ours)
    assert broken >= 100 and 1000 - broken >= 20  # valid and broken values alike were tried


def test_each_rule_is_said_without_the_value() -> None:
    """What a problem says (shown, and sent on in a re-ask, while Codex's answer is still
    withheld from Claude) names the place and the rule, never the value found there."""
    answer = {"position": 7, "points": [{"id": "SECRET-1", "claim": "", "stance": "SECRET",
                                         "evidence": ["x"]}],
              "convergence": {"state": "agree"}, "proposed_summary": None,
              "approve_summary": None, "SECRET": 1}
    said = answers.problems(CODEX_ANSWER, answer)
    assert said == [
        "(top level): holds properties the schema does not allow",
        "(top level): 'choice' is a required property",
        "(top level): 'confidence' is a required property",
        "(top level): 'summary_objections' is a required property",
        "convergence: 'reason' is a required property",
        "points[0]: 'note' is a required property",
        "points[0]: 'would_change_my_mind' is a required property",
        "points[0].evidence[0]: is not of type 'object'",
    ]
    assert "SECRET" not in "".join(part.split("rule")[0] for part in said)


def test_a_schema_with_a_keyword_it_does_not_check_is_refused() -> None:
    """Never half-checked: a keyword outside the subset, at any depth, even where no value
    reaches, refuses the schema whole."""
    nested = {"type": "object", "properties": {"n": {"type": "integer",
                                                     "exclusiveMinimum": 1}}}
    assert schema.unsupported(nested) == ["exclusiveMinimum"]
    with pytest.raises(ValueError, match="exclusiveMinimum"):
        schema.problems({"type": "integer", "exclusiveMinimum": 1}, 0)
    for name in SCHEMAS:
        rules = json.loads(answers.schema_path(name).read_text(encoding="utf-8"))
        assert schema.unsupported(rules) == [], name
