"""Checks that msgspec cannot express as types, run on decoded Structs: conditionals, dependencies, merged branches.

Every check here is built from a subschema when the types are compiled, and refuses, at that moment,
any keyword it does not evaluate: a check can only be as strict as its subschema, or stricter.
"""

from __future__ import annotations

import operator
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

Check = Callable[[Any], bool]
"""Whether a decoded Struct passes one condition of its schema."""

ANNOTATIONS = frozenset(
    # `discriminator` is OpenAPI's, not JSON Schema's: every draft 2020-12 validator ignores it.
    {"$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "discriminator"}
)


class UnsupportedSchemaError(NotImplementedError):
    """A subschema uses a keyword, or a combination, that the Struct compiler does not evaluate."""


def constrains_nothing(schema: Any) -> bool:
    """Whether a subschema takes every value: `true`, or an object of annotations only (a key declared, say)."""
    return schema is True or (isinstance(schema, dict) and not (schema.keys() - ANNOTATIONS))


def _json_type(value: Any) -> str | None:
    """The JSON type of a decoded value, or None for a raw payload whose type is not known."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, (dict, msgspec.Struct)):
        return "object"
    return None


def _has_type(value: Any, wanted: str) -> bool:
    found = _json_type(value)
    # JSON Schema counts an integer as a number; a float with no fraction as an integer too, which
    # msgspec never hands over where an integer is typed, so it is not needed here.
    return found == wanted or (wanted == "number" and found == "integer")


def value_check(schema: dict[str, Any]) -> Check:
    """A check of one decoded value against a subschema of `type`, `const`, `enum` and string lengths."""
    unknown = schema.keys() - ANNOTATIONS - {"type", "const", "enum", "minLength", "maxLength"}
    if unknown:
        raise UnsupportedSchemaError(f"keywords {sorted(unknown)} in a condition on a value")
    wanted = schema.get("type")
    allowed_types = [wanted] if isinstance(wanted, str) else wanted
    allowed_values = [schema["const"]] if "const" in schema else schema.get("enum")
    shortest, longest = schema.get("minLength"), schema.get("maxLength")
    if allowed_types == ["string"] and allowed_values is None and longest is None:
        # The common condition (a non-empty id), in one step: it runs for every model call reference.
        least = shortest or 0
        return lambda value: type(value) is str and len(value) >= least

    def check(value: Any) -> bool:
        if _json_type(value) is None:
            return False  # a raw payload: not proven, so the precise path decides
        if allowed_types is not None and not any(_has_type(value, t) for t in allowed_types):
            return False
        if allowed_values is not None and not any(
            type(value) is type(option) and value == option for option in allowed_values
        ):
            return False
        if isinstance(value, str):
            return (shortest is None or len(value) >= shortest) and (longest is None or len(value) <= longest)
        return True

    return check


def object_check(schema: Any, attributes: dict[str, str]) -> Check:
    """A check of a decoded Struct against a subschema of `required`, `properties` and `not`.

    ``attributes`` maps each JSON key the Struct declares to its attribute name; a condition on a
    key it does not declare cannot be evaluated (msgspec skips such keys), and is refused.
    """
    if not isinstance(schema, dict):
        raise UnsupportedSchemaError(f"a condition that is not an object schema: {schema!r}")
    unknown = schema.keys() - ANNOTATIONS - {"required", "properties", "not", "type"}
    if unknown:
        raise UnsupportedSchemaError(f"keywords {sorted(unknown)} in a condition on an object")
    if schema.get("type", "object") != "object":
        raise UnsupportedSchemaError(f"a condition on an object of type {schema['type']!r}")
    named = [*schema.get("required", ()), *schema.get("properties", {})]
    if any(name not in attributes for name in named):
        raise UnsupportedSchemaError(f"a condition on keys {named} of an object that declares {sorted(attributes)}")
    required = [attributes[name] for name in schema.get("required", ())]
    properties = [
        (attributes[name], value_check(sub))
        for name, sub in schema.get("properties", {}).items()
        if not constrains_nothing(sub)
    ]
    negated = object_check(schema["not"], attributes) if "not" in schema else None
    present = _all_present(required)

    def check(instance: Any) -> bool:
        if not present(instance):
            return False
        for attribute, holds in properties:
            value = getattr(instance, attribute)
            if value is not msgspec.UNSET and not holds(value):
                return False
        return negated is None or not negated(instance)

    return check


def _all_present(attributes: Sequence[str]) -> Check:
    """Whether none of ``attributes`` is UNSET, in one call to C for any number of them."""
    if not attributes:
        return lambda instance: True
    read: Callable[[Any], Any] = operator.attrgetter(*attributes)
    if len(attributes) == 1:
        return lambda instance: read(instance) is not msgspec.UNSET
    return lambda instance: msgspec.UNSET not in read(instance)


def _all_absent(attributes: Sequence[str]) -> Check:
    """Whether all of ``attributes`` are UNSET, in one call to C for any number of them."""
    if not attributes:
        return lambda instance: True
    read: Callable[[Any], Any] = operator.attrgetter(*attributes)
    if len(attributes) == 1:
        return lambda instance: read(instance) is msgspec.UNSET
    absent = (msgspec.UNSET,) * len(attributes)
    return lambda instance: read(instance) == absent


def object_checks(schema: dict[str, Any], attributes: dict[str, str]) -> list[Check]:
    """The checks of an object schema that its Struct's fields cannot make: conditionals and dependencies."""
    checks = []
    if "if" in schema:
        checks.append(conditional_check(schema, attributes))
    elif "then" in schema or "else" in schema:
        raise UnsupportedSchemaError("then/else without if")
    if "dependentRequired" in schema:
        checks.append(dependencies_check(schema["dependentRequired"], attributes))
    return checks


def conditional_check(schema: dict[str, Any], attributes: dict[str, str]) -> Check:
    """`if`/`then`/`else` as one check."""
    condition = object_check(schema["if"], attributes)
    then = object_check(schema["then"], attributes) if "then" in schema else None
    otherwise = object_check(schema["else"], attributes) if "else" in schema else None

    def check(instance: Any) -> bool:
        if condition(instance):
            return then is None or then(instance)
        return otherwise is None or otherwise(instance)

    return check


def dependencies_check(dependencies: dict[str, list[str]], attributes: dict[str, str]) -> Check:
    """`dependentRequired`: when a key is present, the keys it names are present too."""
    for key, names in dependencies.items():
        if key not in attributes or any(name not in attributes for name in names):
            raise UnsupportedSchemaError(f"dependentRequired on keys {key!r}, {names} the object does not declare")
    pairs = [
        (attributes[key], _all_present([attributes[name] for name in names])) for key, names in dependencies.items()
    ]
    # Most objects carry none of the keys that have dependents: that case is told in one step.
    none_given = _all_absent([attribute for attribute, _ in pairs])

    def check(instance: Any) -> bool:
        if none_given(instance):
            return True
        for attribute, needed in pairs:
            if getattr(instance, attribute) is not msgspec.UNSET and not needed(instance):
                return False
        return True

    return check


def post_init(checks: Sequence[Check], what: str) -> Callable[[Any], None]:
    """A `__post_init__` that fails decoding when one of ``checks`` does not hold."""
    frozen = tuple(checks)

    def __post_init__(self: Any) -> None:  # noqa: N807 - the name msgspec calls
        for holds in frozen:
            if not holds(self):
                raise ValueError(f"{what} does not satisfy its schema")

    return __post_init__


# ------------------------------------------------------------------------------------- merged branches


def conformer(kind: Any) -> Check:
    """Whether a value decoded under a wider type is also what the narrower type ``kind`` accepts.

    Built once per type: the check runs for every object of a merged Struct.
    """
    if kind is msgspec.Raw:
        return lambda value: True
    if kind is None or kind is type(None):
        return lambda value: value is None
    if kind is msgspec.UnsetType:
        return lambda value: value is msgspec.UNSET
    origin = typing.get_origin(kind)
    if origin is typing.Union or isinstance(kind, types.UnionType):
        # Plain classes are told in one step; only the other members need a check of their own.
        members = typing.get_args(kind)
        plain = frozenset(m for m in members if isinstance(m, type) and _is_plain(m))
        others = tuple(conformer(member) for member in members if member not in plain)
        if not others:
            return lambda value: type(value) in plain
        if len(others) == 1:
            (other,) = others
            return lambda value: type(value) in plain or other(value)
        return lambda value: type(value) in plain or any(holds(value) for holds in others)
    if origin is typing.Literal:
        options = typing.get_args(kind)
        if all(type(option) is str for option in options):
            texts = frozenset(options)
            return lambda value: type(value) is str and value in texts
        typed = [(type(option), option) for option in options]
        return lambda value: any(type(value) is kind and value == option for kind, option in typed)
    if origin is typing.Annotated:
        base, *metadata = typing.get_args(kind)
        holds = conformer(base)
        return lambda value: holds(value) and all(_meets(value, meta) for meta in metadata)
    if origin is list:
        item = typing.get_args(kind)[0]
        allowed = _classes(item)
        if allowed is not None:
            return lambda value: type(value) is list and all(type(element) in allowed for element in value)
        each = conformer(item)
        return lambda value: type(value) is list and all(each(element) for element in value)
    if origin is dict:
        each = conformer(typing.get_args(kind)[1])
        return lambda value: type(value) is dict and all(each(element) for element in value.values())
    if isinstance(kind, type) and _is_plain(kind):
        return lambda value: type(value) is kind
    raise UnsupportedSchemaError(f"no check for values of type {kind!r}")


def _is_plain(kind: type) -> bool:
    """A Struct, str, int, float or bool: msgspec decodes each JSON value to exactly one of them."""
    return kind is not msgspec.Raw and kind is not msgspec.UnsetType and kind is not type(None)


def _meets(value: Any, meta: msgspec.Meta) -> bool:
    if meta.ge is not None and not value >= meta.ge:
        return False
    if meta.min_length is not None and not len(value) >= meta.min_length:
        return False
    if meta.max_length is not None and not len(value) <= meta.max_length:
        return False
    return meta.pattern is None or re.search(meta.pattern, value) is not None


def _classes(kind: Any) -> frozenset[type] | None:
    """The classes a union of plain classes (Structs, str, …) admits, or None for any other type."""
    members = typing.get_args(kind) if typing.get_origin(kind) is typing.Union else (kind,)
    if all(isinstance(member, type) and member is not msgspec.Raw for member in members):
        return frozenset(members)
    return None


@dataclass(frozen=True)
class Branch:
    """One alternative of an `anyOf`/`oneOf` that shares its tag with others, as a check on the merged Struct."""

    present: Check
    """Whether the attributes this branch requires are there."""
    absent: Check
    """Whether the attributes of the merged Struct this branch does not declare are absent, when it is closed."""
    narrower: tuple[tuple[str, Check], ...]
    """Attributes this branch types more narrowly than the merged Struct, with the check of its type."""
    checks: tuple[Check, ...]

    @classmethod
    def of(
        cls,
        required: Sequence[str],
        declared: dict[str, Any],
        merged: dict[str, Any],
        closed: bool,
        checks: Sequence[Check],
    ) -> Branch:
        """A branch that gives its attributes the types ``declared``; the merged Struct, those ``merged``."""
        undeclared = tuple(attribute for attribute in merged if attribute not in declared) if closed else ()
        narrower = tuple(
            (attribute, conformer(kind)) for attribute, kind in declared.items() if kind != merged[attribute]
        )
        return cls(_all_present(required), _all_absent(undeclared), narrower, tuple(checks))

    def accepts(self, instance: Any) -> bool:
        if not (self.present(instance) and self.absent(instance)):
            return False
        for attribute, holds in self.narrower:
            value = getattr(instance, attribute)
            if value is not msgspec.UNSET and not holds(value):
                return False
        # A loop, not all() over a generator: this runs for every message of every conversation.
        for holds in self.checks:  # noqa: SIM110
            if not holds(instance):
                return False
        return True


def branches_check(branches: Sequence[Branch], exactly_one: bool) -> Check:
    """At least one branch accepts the instance (`anyOf`), or exactly one does (`oneOf`)."""
    frozen = tuple(branches)

    def check(instance: Any) -> bool:
        if not exactly_one:
            return any(branch.accepts(instance) for branch in frozen)
        return sum(branch.accepts(instance) for branch in frozen) == 1

    return check
