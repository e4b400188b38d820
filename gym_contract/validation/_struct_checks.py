"""Checks that msgspec cannot express as types, run on decoded Structs: conditionals, dependencies, merged branches.

Every check here is built from a subschema when the types are compiled, and refuses, at that moment,
any keyword it does not evaluate: a check can only be as strict as its subschema, or stricter. A
Struct's checks become the source of one `__post_init__` function, compiled once: it runs for every
object decoded, and one function reading attributes costs a fraction of a chain of closures.
"""

from __future__ import annotations

import itertools
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

ANNOTATIONS = frozenset(
    # `discriminator` is OpenAPI's, not JSON Schema's: every draft 2020-12 validator ignores it.
    {"$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "discriminator"}
)

_NAMES = itertools.count()

Conforms = Callable[[Any], bool]
"""Whether one decoded value is of a type: the check of a value a merged Struct types more widely."""


class UnsupportedSchemaError(NotImplementedError):
    """A subschema uses a keyword, or a combination, that the Struct compiler does not evaluate."""


@dataclass(frozen=True)
class Check:
    """A condition on a decoded Struct: a Python expression over ``self`` that is true when it holds.

    ``names`` binds the objects the expression refers to (helpers built once, constants).
    """

    source: str
    names: dict[str, Any] = field(default_factory=dict)


def _all(checks: Sequence[Check]) -> Check:
    kept = [check for check in checks if check.source != "True"]
    if not kept:
        return Check("True")
    if len(kept) == 1:
        return kept[0]
    return Check("(" + " and ".join(f"({check.source})" for check in kept) + ")", _bound(kept))


def _bound(checks: Sequence[Check]) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for check in checks:
        names.update(check.names)
    return names


# The type each helper checks, by its name: what rebuilds the helper where the checks are written out as source.
_HELPER_TYPES: dict[str, Any] = {}


def _helper(kind: Any, subject: str) -> Check:
    """A condition that ``subject`` is of type ``kind``, by a helper (`conformer`): not worth writing out as source."""
    name = f"_h{next(_NAMES)}"
    _HELPER_TYPES[name] = kind
    return Check(f"{name}({subject})", {name: conformer(kind)})


def helper_type(name: str) -> Any:
    """The type that the helper ``name``, bound by a check, tells values of (see `conformer`); KeyError if no helper."""
    return _HELPER_TYPES[name]


def constrains_nothing(schema: Any) -> bool:
    """Whether a subschema takes every value: `true`, or an object of annotations only (a key declared, say)."""
    return schema is True or (isinstance(schema, dict) and not (schema.keys() - ANNOTATIONS))


_TYPE_TESTS = {
    "null": "{0} is None",
    "boolean": "type({0}) is bool",
    "integer": "type({0}) is int",
    # JSON Schema counts an integer as a number; msgspec never hands over a float where an integer
    # is typed, so a float with no fraction need not count as an integer.
    "number": "(type({0}) is int or type({0}) is float)",
    "string": "type({0}) is str",
    "array": "type({0}) is list",
    "object": "isinstance({0}, _object_types)",
}
_TYPE_NAMES = {"_object_types": (dict, msgspec.Struct)}
"""The names the type tests refer to."""


def _equals(subject: str, option: Any) -> Check:
    """``subject`` is ``option`` and of its very type (JSON's `1` is not `true`)."""
    if option is None or isinstance(option, bool):
        return Check(f"{subject} is {option!r}")
    if type(option) in (str, int):
        return Check(f"(type({subject}) is {type(option).__name__} and {subject} == {option!r})")
    name = f"_c{next(_NAMES)}"
    return Check(f"(type({subject}) is type({name}) and {subject} == {name})", {name: option})


def value_check(schema: dict[str, Any], subject: str) -> Check:
    """A check of the value ``subject`` (an expression) against `type`, `const`, `enum` and string lengths.

    A raw payload, whose type was never decoded, passes none of them: not proven, so the precise path decides.
    """
    unknown = schema.keys() - ANNOTATIONS - {"type", "const", "enum", "minLength", "maxLength"}
    if unknown:
        raise UnsupportedSchemaError(f"keywords {sorted(unknown)} in a condition on a value")
    wanted = schema.get("type")
    allowed_types = [wanted] if isinstance(wanted, str) else wanted
    parts: list[Check] = []
    if allowed_types is None:
        parts.append(Check(f"type({subject}) is not _raw", {"_raw": msgspec.Raw}))
    else:
        if any(name not in _TYPE_TESTS for name in allowed_types):
            raise UnsupportedSchemaError(f"a condition on type {wanted!r}")
        tests = [_TYPE_TESTS[name].format(subject) for name in allowed_types]
        parts.append(Check(" or ".join(tests) if len(tests) == 1 else "(" + " or ".join(tests) + ")", _TYPE_NAMES))
    allowed_values = [schema["const"]] if "const" in schema else schema.get("enum")
    if allowed_values is not None:
        options = [_equals(subject, option) for option in allowed_values]
        parts.append(Check("(" + " or ".join(o.source for o in options) + ")" if options else "False", _bound(options)))
    bounds = {word: schema[word] for word in ("minLength", "maxLength") if word in schema}
    if any(type(bound) is not int for bound in bounds.values()):
        raise UnsupportedSchemaError(f"string lengths that are not integers: {bounds}")
    lengths = [f"len({subject}) >= {bounds['minLength']}"] if "minLength" in bounds else []
    lengths += [f"len({subject}) <= {bounds['maxLength']}"] if "maxLength" in bounds else []
    if lengths:
        parts.append(Check(f"(type({subject}) is not str or ({' and '.join(lengths)}))"))
    return _all(parts)


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
    parts = [_all_present([attributes[name] for name in schema.get("required", ())])]
    for name, sub in schema.get("properties", {}).items():
        if not constrains_nothing(sub):
            subject = f"self.{attributes[name]}"
            holds = value_check(sub, subject)
            parts.append(Check(f"({subject} is UNSET or {holds.source})", holds.names))
    if "not" in schema:
        negated = object_check(schema["not"], attributes)
        parts.append(Check(f"not ({negated.source})", negated.names))
    return _all(parts)


def _all_present(attributes: Sequence[str]) -> Check:
    """Whether none of ``attributes`` is UNSET."""
    return _all([Check(f"self.{attribute} is not UNSET") for attribute in attributes])


def _all_absent(attributes: Sequence[str]) -> Check:
    """Whether all of ``attributes`` are UNSET."""
    return _all([Check(f"self.{attribute} is UNSET") for attribute in attributes])


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
    then = object_check(schema["then"], attributes) if "then" in schema else Check("True")
    otherwise = object_check(schema["else"], attributes) if "else" in schema else Check("True")
    source = f"(({then.source}) if ({condition.source}) else ({otherwise.source}))"
    return Check(source, _bound([condition, then, otherwise]))


def dependencies_check(dependencies: dict[str, list[str]], attributes: dict[str, str]) -> Check:
    """`dependentRequired`: when a key is present, the keys it names are present too."""
    for key, names in dependencies.items():
        if key not in attributes or any(name not in attributes for name in names):
            raise UnsupportedSchemaError(f"dependentRequired on keys {key!r}, {names} the object does not declare")
    # Most objects carry none of the keys that have dependents: that case is told first.
    none_given = _all_absent([attributes[key] for key in dependencies])
    each = [
        Check(f"(self.{attributes[key]} is UNSET or ({_all_present([attributes[n] for n in names]).source}))")
        for key, names in dependencies.items()
    ]
    return Check(f"({none_given.source}) or ({_all(each).source})")


def post_init_source(checks: Sequence[Check], what: str) -> Check:
    """The source of a `__post_init__` that fails decoding when one of ``checks`` does not hold, and its names."""
    condition = _all(checks)
    names: dict[str, Any] = {
        **condition.names,
        "UNSET": msgspec.UNSET,
        "_refusal": f"{what} does not satisfy its schema",
    }
    source = f"def __post_init__(self):\n    if not ({condition.source}):\n        raise ValueError(_refusal)\n"
    return Check(source, names)


def post_init(checks: Sequence[Check], what: str) -> Callable[[Any], None]:
    """A `__post_init__` that fails decoding when one of ``checks`` does not hold, compiled from their source."""
    definition = post_init_source(checks, what)
    namespace = dict(definition.names)
    exec(compile(definition.source, f"<checks of {what}>", "exec"), namespace)
    function: Callable[[Any], None] = namespace["__post_init__"]
    return function


# ------------------------------------------------------------------------------------- merged branches


def conformer(kind: Any) -> Conforms:
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
            # The classes of the elements are gathered in C: this runs for every message's content.
            return lambda value: type(value) is list and set(map(type, value)) <= allowed
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


def branch_check(
    required: Sequence[str],
    declared: dict[str, Any],
    merged: dict[str, Any],
    closed: bool,
    checks: Sequence[Check],
) -> Check:
    """One alternative of an `anyOf`/`oneOf` that shares its tag with others, as a check on the merged Struct.

    The branch gives its attributes the types ``declared``; the merged Struct, those ``merged``. It
    holds when the attributes it requires are there, those it does not declare are absent (when it
    is closed), those it types more narrowly conform, and its own checks hold.
    """
    undeclared = [attribute for attribute in merged if attribute not in declared] if closed else []
    parts = [_all_present(required), _all_absent(undeclared)]
    for attribute, kind in declared.items():
        if kind != merged[attribute]:
            narrower = _helper(kind, f"self.{attribute}")
            parts.append(Check(f"(self.{attribute} is UNSET or {narrower.source})", narrower.names))
    return _all([*parts, *checks])


def branches_check(branches: Sequence[Check], exactly_one: bool) -> Check:
    """At least one branch accepts the instance (`anyOf`), or exactly one does (`oneOf`)."""
    if not exactly_one:
        return Check(" or ".join(f"({branch.source})" for branch in branches), _bound(branches))
    counted = " + ".join(f"(1 if ({branch.source}) else 0)" for branch in branches)
    return Check(f"({counted}) == 1", _bound(branches))
