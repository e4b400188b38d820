"""The bundled JSON Schemas compiled to msgspec types, so that decoding a record is checking its structure.

Compiled from the same schemas as every other check (one source of truth), and written out as
source ahead of time (`_struct_source` writes `_structs_v1`), which a process imports instead of
compiling them, as long as the bundled schemas are those it was written from. The compiler reads:
`additionalProperties: false` forbids unknown fields; `anyOf`/`oneOf` branches told apart by a
`const` property become tagged unions, and branches sharing a tag one Struct whose `__post_init__`
proves a branch matches; `const`/`enum` become `Literal`; `minimum`, `minLength`, `maxLength` and
`pattern` become `Meta`; a subschema that constrains nothing, and the members and elements of an
object or array whose schema says nothing of them, stay `msgspec.Raw` (their bytes are checked to be
JSON and never decoded); `if`/`then`/`else` and `dependentRequired` run in `__post_init__`. Optional
fields default to `UNSET`, so a decoded Struct says which keys were written. A keyword the compiler
does not evaluate raises `UnsupportedSchemaError` while the types are built: the types accept what
the schema accepts, or less, never more.
"""

from __future__ import annotations

import keyword
import re
import typing
from dataclasses import dataclass
from functools import cache, reduce
from typing import Annotated, Any, Literal

import msgspec

from gym_contract import schemas
from gym_contract._objects import MemberStruct
from gym_contract._vocabulary import SCHEMA_OF_KIND
from gym_contract.validation._struct_checks import (
    ANNOTATIONS,
    Check,
    UnsupportedSchemaError,
    branch_check,
    branches_check,
    constrains_nothing,
    object_checks,
    post_init,
)

__all__ = ["UnsupportedSchemaError", "compile_schema", "record_decoder", "record_type", "schema_type"]

# Keywords that only locate or identify a schema; they never constrain an instance.
_STRUCTURAL = frozenset({"$schema", "$id", "$defs"})
_PASSIVE = ANNOTATIONS | _STRUCTURAL
_OBJECT_KEYWORDS = frozenset(
    {"properties", "required", "additionalProperties", "if", "then", "else", "dependentRequired"}
)
_KEYWORDS_OF_TYPE = {
    "null": frozenset(),
    "boolean": frozenset(),
    "string": frozenset({"minLength", "maxLength", "pattern"}),
    "integer": frozenset({"minimum"}),
    "number": frozenset({"minimum"}),
    "array": frozenset({"items"}),
    "object": _OBJECT_KEYWORDS,
}


def _union(members: list[Any]) -> Any:
    flat: list[Any] = []
    for member in members:
        for part in typing.get_args(member) if _is_union(member) else (member,):
            if part not in flat:
                flat.append(part)
    return reduce(lambda left, right: typing.Union[left, right], flat)  # noqa: UP007 - members are built at run time


def _is_union(kind: Any) -> bool:
    return typing.get_origin(kind) is typing.Union


def _attribute(key: str, taken: set[str]) -> str:
    """A Python attribute name for a JSON key; keys that cannot be one are renamed."""
    if key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("_"):
        name = key
    else:
        name = f"field_{len(taken)}"
    taken.add(name)
    return name


def _readable_tag(tag_field: str, attributes: dict[str, str]) -> bool:
    """Whether a tag can be a class attribute of its own name: an identifier that no field takes."""
    return tag_field not in attributes.values() and _attribute(tag_field, set()) == tag_field


@dataclass(frozen=True)
class Definition:
    """A Struct as the compiler defined it: its `msgspec.defstruct` arguments and the checks of its `__post_init__`."""

    struct: Any
    fields: tuple[tuple[Any, ...], ...]
    renamed: dict[str, str]
    forbid: bool
    tag: tuple[str, str] | None
    checks: tuple[Check, ...]
    what: str


class _Compiler:
    """Follows `$ref`s among the bundled schemas and builds each subschema's type once."""

    def __init__(self) -> None:
        self._built: dict[tuple[int, str | None], Any] = {}
        self._names: set[str] = set()
        # Every Struct defined, in order: a Struct comes after the Structs its fields are typed with.
        self.definitions: dict[Any, Definition] = {}

    def for_uri(self, uri: str) -> Any:
        return self.build(*schemas.lookup(uri))

    def build(self, schema: Any, base: str, tag_field: str | None = None) -> Any:
        """The type of one subschema; with ``tag_field``, the Struct of a tagged union member."""
        key = (id(schema), tag_field)
        if key not in self._built:
            self._built[key] = self._build(schema, base, tag_field)
        return self._built[key]

    def _build(self, schema: Any, base: str, tag_field: str | None) -> Any:
        if schema is True or (isinstance(schema, dict) and not (schema.keys() - _PASSIVE)):
            return msgspec.Raw
        if not isinstance(schema, dict):
            raise UnsupportedSchemaError(f"schema {schema!r}")
        keys = schema.keys() - _PASSIVE
        if "$ref" in keys:
            if keys != {"$ref"}:
                raise UnsupportedSchemaError(f"$ref beside {sorted(keys - {'$ref'})}")
            target, inner = self._follow(schema["$ref"], base)
            return self.build(target, inner, tag_field)
        if keys & {"anyOf", "oneOf"}:
            return self._alternatives(schema, base)
        if keys & {"const", "enum"}:
            return self._constants(schema)
        if tag_field is not None:
            return self._struct(schema, base, tag_field)
        return self._typed(schema, base)

    def _follow(self, reference: str, base: str) -> tuple[Any, str]:
        return schemas.lookup(reference, base)

    def resolve(self, schema: Any, base: str) -> tuple[Any, str]:
        """A subschema with its `$ref`s followed, as long as it is nothing but a reference."""
        while isinstance(schema, dict) and (schema.keys() - _PASSIVE) == {"$ref"}:
            schema, base = self._follow(schema["$ref"], base)
        return schema, base

    # ----------------------------------------------------------------------------- scalars and types

    def _constants(self, schema: dict[str, Any]) -> Any:
        unknown = schema.keys() - _PASSIVE - {"const", "enum", "type"}
        if unknown or ("const" in schema and "enum" in schema):
            raise UnsupportedSchemaError(f"keywords {sorted(unknown)} beside const/enum")
        values = [schema["const"]] if "const" in schema else list(schema["enum"])
        wanted = schema.get("type")
        allowed = None if wanted is None else ([wanted] if isinstance(wanted, str) else list(wanted))
        kept = [value for value in values if allowed is None or _json_type_name(value) in allowed]
        if any(not (value is None or isinstance(value, str)) for value in kept):
            raise UnsupportedSchemaError(f"a constant that is not a string or null: {kept!r}")
        texts = [value for value in kept if value is not None]
        members: list[Any] = [Literal[tuple(texts)]] if texts else []
        if None in kept:
            members.append(None)
        if not members:
            raise UnsupportedSchemaError("an enum that no value can match")
        return _union(members)

    def _typed(self, schema: dict[str, Any], base: str) -> Any:
        if "type" not in schema:
            raise UnsupportedSchemaError(f"a schema without type: {sorted(schema)}")
        wanted = schema["type"]
        names = [wanted] if isinstance(wanted, str) else list(wanted)
        accepted = set().union(*(_KEYWORDS_OF_TYPE.get(name, frozenset()) for name in names))
        unknown = schema.keys() - _PASSIVE - {"type"} - accepted
        if unknown or any(name not in _KEYWORDS_OF_TYPE for name in names):
            raise UnsupportedSchemaError(f"keywords {sorted(unknown)} for type {wanted!r}")
        return _union([self._of_type(name, schema, base) for name in names])

    def _of_type(self, name: str, schema: dict[str, Any], base: str) -> Any:
        if name == "null":
            return None
        if name == "boolean":
            return bool
        if name == "string":
            lengths = {"min_length": schema.get("minLength"), "max_length": schema.get("maxLength")}
            return _constrained(str, pattern=schema.get("pattern"), **lengths)
        if name == "integer":
            return _constrained(int, ge=schema.get("minimum"))
        if name == "number":
            # JSON Schema's number includes integers: they stay exact ints, as the precise path reads them.
            return _union([_constrained(int, ge=schema.get("minimum")), _constrained(float, ge=schema.get("minimum"))])
        if name == "array":
            item = self.build(schema["items"], base) if "items" in schema else msgspec.Raw
            return list[item]  # type: ignore[valid-type]
        if "properties" in schema:
            return self._struct(schema, base, None)
        if schema.keys() & (_OBJECT_KEYWORDS - {"additionalProperties"}) or schema.get("additionalProperties") is False:
            raise UnsupportedSchemaError(f"an object without properties constrained by {sorted(schema)}")
        return dict[str, msgspec.Raw]

    # ----------------------------------------------------------------------------- objects

    def _struct(self, schema: dict[str, Any], base: str, tag_field: str | None) -> Any:
        unknown = schema.keys() - _PASSIVE - _OBJECT_KEYWORDS - {"type"}
        if unknown or schema.get("type", "object") != "object":
            raise UnsupportedSchemaError(f"keywords {sorted(unknown)} on an object with a tag")
        properties: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        if not required <= properties.keys():
            raise UnsupportedSchemaError(f"required keys {sorted(required - properties.keys())} without a schema")
        extra = schema.get("additionalProperties", True)
        if extra not in (True, False):
            raise UnsupportedSchemaError("additionalProperties that is a schema")
        tag = _tag_of(properties, tag_field) if tag_field is not None else None
        taken: set[str] = set()
        attributes = {key: _attribute(key, taken) for key in properties if key != tag_field or tag is None}
        fields: list[tuple[Any, ...]] = []
        for key, attribute in attributes.items():
            kind = self.build(properties[key], base)
            fields.append((attribute, kind) if key in required else _optional(attribute, kind))
        title = schema.get("title", "Object")
        return self._define(
            title,
            fields,
            attributes,
            checks=object_checks(schema, attributes),
            what=title,
            forbid=extra is False,
            tag=(tag_field, tag) if tag_field is not None and tag is not None else None,
        )

    def _define(
        self,
        title: str,
        fields: list[tuple[Any, ...]],
        attributes: dict[str, str],
        *,
        checks: list[Check],
        what: str,
        forbid: bool,
        tag: tuple[str, str] | None,
    ) -> Any:
        name = "".join(word[:1].upper() + word[1:] for word in re.split(r"[^0-9A-Za-z]+", title)) or "Object"
        while name in self._names:
            name += "_"
        self._names.add(name)
        renamed = {attribute: key for key, attribute in attributes.items() if attribute != key}
        namespace: dict[str, Any] = {"__post_init__": post_init(checks, what)} if checks else {}
        if tag is not None and _readable_tag(tag[0], attributes):
            namespace[tag[0]] = tag[1]  # read as the member it is in JSON (`gym_contract._objects`)
        struct = msgspec.defstruct(
            name,
            fields,
            bases=(MemberStruct,),
            kw_only=True,
            forbid_unknown_fields=forbid,
            rename=renamed or None,
            tag_field=tag[0] if tag else None,
            tag=tag[1] if tag else None,
            namespace=namespace,
            # Decoded records hold no cycles: the garbage collector need not track them.
            gc=False,
        )
        self.definitions[struct] = Definition(struct, tuple(fields), renamed, forbid, tag, tuple(checks), what)
        return struct

    # ----------------------------------------------------------------------------- alternatives

    def _alternatives(self, schema: dict[str, Any], base: str) -> Any:
        keys = schema.keys() - _PASSIVE
        word = "oneOf" if "oneOf" in keys else "anyOf"
        if {"anyOf", "oneOf"} <= keys:
            raise UnsupportedSchemaError("anyOf beside oneOf")
        branches = [self.resolve(branch, base) for branch in schema[word]]
        tag_field = _common_tag(branch for branch, _ in branches)
        # Beside the alternatives, only what a tagged union of Structs makes anyway: an object, the tag
        # required, and the tag declared without a constraint (strict validators ask for both).
        declared = schema.get("properties", {})
        if (
            keys - {word, "required", "type", "properties"}
            or set(schema.get("required", ())) - {tag_field}
            or schema.get("type", "object") != "object"
            or ("type" in keys and tag_field is None)
            or set(declared) - {tag_field}
            or not all(constrains_nothing(sub) for sub in declared.values())
        ):
            raise UnsupportedSchemaError(f"keywords {sorted(keys - {word})} beside {word}")
        if tag_field is None:
            if word == "oneOf":
                raise UnsupportedSchemaError("oneOf whose branches no tag tells apart")
            # msgspec picks a member by the JSON type of the value, one member per type, and refuses
            # a union where two members take the same type: no value is ever judged by the wrong one.
            return _decodable(_union([self.build(branch, inner) for branch, inner in branches]))
        groups: dict[str, list[tuple[Any, Any]]] = {}
        for branch, inner in branches:
            groups.setdefault(branch["properties"][tag_field]["const"], []).append((branch, inner))
        members = [
            self.build(group[0][0], group[0][1], tag_field)
            if len(group) == 1
            else self._merged(tag, group, tag_field, exactly_one=word == "oneOf")
            for tag, group in groups.items()
        ]
        return _union(members)

    def _merged(self, tag: str, group: list[tuple[Any, Any]], tag_field: str, *, exactly_one: bool) -> Any:
        """One Struct for branches that share a tag: every key any of them declares, each typed to
        take what any of them takes, and a check that proves some branch takes the whole object."""
        taken: set[str] = set()
        attributes: dict[str, str] = {}
        wide: dict[str, list[Any]] = {}
        parts = []
        for branch, inner in group:
            own = {key: sub for key, sub in branch.get("properties", {}).items() if key != tag_field}
            for key in own:
                if key not in attributes:
                    attributes[key] = _attribute(key, taken)
            declared = {attributes[key]: self.build(sub, inner) for key, sub in own.items()}
            for attribute, kind in declared.items():
                wide.setdefault(attribute, []).append(kind)
            self.build(branch, inner, tag_field)  # refuses, here, a keyword the branch alone could not have
            required = [attributes[key] for key in branch.get("required", ()) if key != tag_field]
            closed = branch.get("additionalProperties", True) is False
            parts.append((required, declared, closed, object_checks(branch, attributes)))
        merged = {attribute: _widest(kinds) for attribute, kinds in wide.items()}
        fields = [_optional(attribute, kind) for attribute, kind in merged.items()]
        branches = [
            branch_check(required, declared, merged, closed, checks) for required, declared, closed, checks in parts
        ]
        check = branches_check(branches, exactly_one)
        return self._define(
            f"merged {tag}",
            fields,
            attributes,
            checks=[check],
            what=f"a {tag!r} object",
            # Unknown keys are skipped unseen unless forbidden: a closed branch could not refuse them.
            forbid=any(closed for _, _, closed, _ in parts),
            tag=(tag_field, tag),
        )


def _optional(attribute: str, kind: Any) -> tuple[str, Any, Any]:
    """A field that may be absent: UNSET when it is, so that a decoded Struct tells which keys were written."""
    return (attribute, _union([kind, msgspec.UnsetType]), msgspec.UNSET)


def _widest(kinds: list[Any]) -> Any:
    """One type that takes every value any of ``kinds`` takes; lists of different items merge their items."""
    members: list[Any] = []
    lists: list[Any] = []
    for kind in kinds:
        for part in typing.get_args(kind) if _is_union(kind) else (kind,):
            if typing.get_origin(part) is list:
                lists.append(typing.get_args(part)[0])
            elif part not in members:
                members.append(part)
    if lists:
        members.append(list[_widest(lists)])  # type: ignore[misc]
    literals = [m for m in members if typing.get_origin(m) is Literal]
    if len(literals) > 1:
        values = tuple(dict.fromkeys(v for literal in literals for v in typing.get_args(literal)))
        members = [m for m in members if m not in literals] + [Literal[values]]
    return _decodable(_union(members))


def _decodable(kind: Any) -> Any:
    """``kind``, once msgspec has agreed to decode it: it refuses a union it could not tell apart."""
    try:
        msgspec.json.Decoder(kind)
    except TypeError as refused:
        raise UnsupportedSchemaError(str(refused)) from refused
    return kind


def _constrained(base: type, **constraints: Any) -> Any:
    given = {name: value for name, value in constraints.items() if value is not None}
    return Annotated[base, msgspec.Meta(**given)] if given else base


def _json_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "integer"
    return type(value).__name__


def _tag_of(properties: dict[str, Any], tag_field: str) -> str:
    constant = properties.get(tag_field, {}).get("const")
    if not isinstance(constant, str):
        raise UnsupportedSchemaError(f"a tagged branch whose {tag_field!r} is not a string constant")
    return constant


def _common_tag(branches: Any) -> str | None:
    """The property every branch fixes to a distinct string constant (`kind`, `type`), if there is one."""
    listed = list(branches)
    if not listed or not all(isinstance(b, dict) and isinstance(b.get("properties"), dict) for b in listed):
        return None
    candidates = set.intersection(
        *({key for key, sub in b["properties"].items() if isinstance(sub.get("const"), str)} for b in listed)
    )
    return min(candidates) if len(candidates) == 1 else None


@cache
def _compiler() -> _Compiler:
    return _Compiler()


def compile_schema(schema: dict[str, Any]) -> Any:
    """The msgspec type of a schema given as data, its `$ref`s resolved among the bundled schemas."""
    return _Compiler().build(schema, "")


@cache
def _rendered() -> dict[str, Any]:
    """The records' Structs as `_struct_source` wrote them out, if from these very schemas; else none.

    Importing them costs a fraction of compiling them. A schema edited since they were written is
    compiled afresh instead, so that records are never judged by the types of another schema.
    """
    from gym_contract.validation import _structs_v1 as rendered

    return rendered.SCHEMA_TYPES if schemas._digest() == rendered.SCHEMAS_DIGEST else {}


@cache
def schema_type(name: str) -> Any:
    """The msgspec type of the bundled schema ``name`` (see `schemas.names`)."""
    rendered = _rendered().get(name)
    return rendered if rendered is not None else _compiler().for_uri(schemas.schema_id(name))


def record_type(kind: str) -> Any:
    """The msgspec type of a record of ``kind`` (not `rollout`, which is a frame around the others)."""
    return schema_type(SCHEMA_OF_KIND[kind])


@cache
def record_decoder(kind: str) -> msgspec.json.Decoder[Any]:
    """A decoder that accepts a record of ``kind`` only if its schema does."""
    return msgspec.json.Decoder(record_type(kind))
