"""A value checked against one of sparring's own JSON schemas (`schemas/*.json`).

Those schemas keep to the strict subset of JSON Schema (2020-12) that codex's
`--output-schema` takes: `type`, `properties`, `required`, `additionalProperties`, `items`,
`enum`, `pattern`, `minLength`, `minimum` and `maximum`, besides the annotations
`description`, `title` and `$schema`. This checks exactly those keywords, as JSON Schema
defines them, and refuses a schema holding any other (ValueError): a schema that grows one is
never half-checked.

Why not the `jsonschema` package: loading it took 100 ms of CPU (its metaschemas, its
referencing machinery), in every schema turn's runner and every `verdict` and `finalize`
call, to check three small schemas of ours. tests/test_schema.py holds this module to that
package, which the tests keep as the reference, over valid and broken answers alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

Where = tuple[str | int, ...]  # keys and indexes from the top


class Problem(NamedTuple):
    """One way a value breaks its schema: where (keys and indexes from the top), the rule
    (keyword) it breaks and that rule's value in the schema, and what is wrong in words
    that never quote the value."""
    path: Where
    rule: str
    bound: Any
    message: str


def problems(schema: Mapping[str, Any], value: Any) -> list[Problem]:
    """Every way `value` breaks `schema`, in the order of the schema's keywords, depth first
    (as JSON Schema validators report them); empty when it holds."""
    found: list[Problem] = []
    _check(schema, value, (), found)
    return found


def unsupported(schema: Mapping[str, Any]) -> list[str]:
    """The keywords anywhere in `schema` that this module does not check (a schema is
    refused whole, before any value is checked against it)."""
    found = [rule for rule in schema if rule not in _ANNOTATIONS and rule not in _RULES]
    inner = [*schema.get("properties", {}).values(), schema.get("items"),
             schema.get("additionalProperties")]
    for sub in inner:
        if isinstance(sub, Mapping):
            found += unsupported(sub)
    return found


_ANNOTATIONS = frozenset({"description", "title", "$schema"})


def _check(schema: Mapping[str, Any], value: Any, path: Where, found: list[Problem]) -> None:
    for rule, bound in schema.items():
        if rule in _ANNOTATIONS:
            continue
        check = _RULES.get(rule)
        if check is None:
            raise ValueError(f"the schema keyword {rule!r} is not one sparring checks")
        check(schema, bound, value, path, found)


def _type(schema: Mapping[str, Any], bound: Any, value: Any, path: Where,
          found: list[Problem]) -> None:
    names = [bound] if isinstance(bound, str) else list(bound)
    if not any(_is(value, name) for name in names):
        found.append(Problem(path, "type", bound, f"is not of type {_said(bound)}"))


def _is(value: Any, name: str) -> bool:
    """JSON Schema's types: a boolean is no number, and 1.0 is an integer."""
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    kind = _TYPES.get(name)
    if kind is None:
        raise ValueError(f"the schema type {name!r} is not a JSON Schema type")
    return isinstance(value, kind)


_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "object": dict, "array": list, "boolean": bool, "null": type(None)}


def _properties(schema: Mapping[str, Any], bound: Any, value: Any, path: Where,
                found: list[Problem]) -> None:
    if isinstance(value, dict):
        for name, inner in bound.items():
            if name in value:
                _check(inner, value[name], (*path, name), found)


def _required(schema: Mapping[str, Any], bound: Any, value: Any, path: Where,
              found: list[Problem]) -> None:
    if isinstance(value, dict):
        found += [Problem(path, "required", bound, f"{name!r} is a required property")
                  for name in bound if name not in value]


def _additional(schema: Mapping[str, Any], bound: Any, value: Any, path: Where,
                found: list[Problem]) -> None:
    if not isinstance(value, dict):
        return
    extra = [name for name in value if name not in schema.get("properties", {})]
    if bound is False and extra:
        found.append(Problem(path, "additionalProperties", bound,
                             "holds properties the schema does not allow"))
    elif isinstance(bound, dict):
        for name in extra:
            _check(bound, value[name], (*path, name), found)


def _items(schema: Mapping[str, Any], bound: Any, value: Any, path: Where,
           found: list[Problem]) -> None:
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check(bound, item, (*path, i), found)


def _enum(schema: Mapping[str, Any], bound: Any, value: Any, path: Where,
          found: list[Problem]) -> None:
    if not any(_equal(value, allowed) for allowed in bound):
        found.append(Problem(path, "enum", bound, f"is not one of {_said(bound)}"))


def _equal(one: Any, other: Any) -> bool:
    """JSON's equality: true is not 1."""
    if isinstance(one, bool) or isinstance(other, bool):
        return isinstance(one, bool) and isinstance(other, bool) and one == other
    return bool(one == other)


def _pattern(schema: Mapping[str, Any], bound: Any, value: Any, path: Where,
             found: list[Problem]) -> None:
    if isinstance(value, str) and not re.search(bound, value):
        found.append(Problem(path, "pattern", bound, _broken("pattern", bound)))


def _min_length(schema: Mapping[str, Any], bound: Any, value: Any, path: Where,
                found: list[Problem]) -> None:
    if isinstance(value, str) and len(value) < bound:
        found.append(Problem(path, "minLength", bound, _broken("minLength", bound)))


def _minimum(schema: Mapping[str, Any], bound: Any, value: Any, path: Where,
             found: list[Problem]) -> None:
    if _is(value, "number") and value < bound:
        found.append(Problem(path, "minimum", bound, _broken("minimum", bound)))


def _maximum(schema: Mapping[str, Any], bound: Any, value: Any, path: Where,
             found: list[Problem]) -> None:
    if _is(value, "number") and value > bound:
        found.append(Problem(path, "maximum", bound, _broken("maximum", bound)))


_RULE_AT_MOST = 200  # characters of a schema's rule a problem quotes


def _said(bound: Any) -> str:
    said = repr(bound)
    return said if len(said) <= _RULE_AT_MOST else said[:_RULE_AT_MOST - 1] + "…"


def _broken(rule: str, bound: Any) -> str:
    return f"breaks the schema's {rule!r} rule ({_said(bound)})"


_RULES: dict[str, Callable[[Mapping[str, Any], Any, Any, Where, list[Problem]], None]] = {
    "type": _type, "properties": _properties, "required": _required,
    "additionalProperties": _additional, "items": _items, "enum": _enum,
    "pattern": _pattern, "minLength": _min_length, "minimum": _minimum, "maximum": _maximum,
}
