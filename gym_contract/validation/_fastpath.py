"""The fast path: decode only the contract's structure, leave opaque payloads as raw bytes, check with jsonschema_rs.

The skeleton types are derived at run time from the same bundled JSON Schemas: a property whose
schema constrains nothing (request and response bodies, tool outputs, turn questions and answers)
is decoded as `msgspec.Raw` — its bytes are checked to be JSON but never turned into Python
objects. Objects are decoded straight into plain dicts (typed dicts), so the skeleton is ready
for `jsonschema_rs`, which checks it against the full schema without looking inside the opaque
values, and for the semantic rules, which never read them. A record that fails any step is
handed to the precise path, which explains the failure; so this path only ever has to accept.
"""

from __future__ import annotations

import sys
import types
import typing
from functools import cache
from typing import Any, TypedDict

import jsonschema_rs
import msgspec

from gym_contract import schemas
from gym_contract._limits import max_depth
from gym_contract._vocabulary import ROLLOUT_ATTACHMENTS, SCHEMA_OF_KIND

# Keywords that only annotate: a subschema made of nothing else accepts every JSON value. Anything
# else, even a keyword that applies to one type only, makes the value worth decoding.
_ANNOTATIONS = frozenset(
    {"$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)


def _is_opaque(schema: Any) -> bool:
    """A subschema that accepts every JSON value (annotations only)."""
    return isinstance(schema, dict) and schema.keys() <= _ANNOTATIONS


class _SkeletonBuilder:
    """Turns schemas into msgspec types that keep opaque values raw; `Any` where nothing is opaque."""

    def __init__(self) -> None:
        self._resolver = schemas.registry().resolver()
        self._counter = 0

    def for_uri(self, uri: str) -> Any:
        # The contract's schemas are not recursive, so references are simply followed.
        resolved = self._resolver.lookup(uri)
        return self._build(resolved.contents, resolved.resolver)

    def _build(self, schema: Any, resolver: Any) -> Any:
        if _is_opaque(schema):
            return msgspec.Raw
        if not isinstance(schema, dict):
            return Any
        if "$ref" in schema:
            resolved = resolver.lookup(schema["$ref"])
            return self._build(resolved.contents, resolved.resolver)
        alternatives = schema.get("anyOf") or schema.get("oneOf")
        if alternatives:
            branches = [self._build(branch, resolver) for branch in alternatives]
            if all(branch is Any for branch in branches):
                return Any
            return _union(branches)
        types = schema.get("type")
        types = [types] if isinstance(types, str) else list(types or [])
        built: Any = Any
        if "properties" in schema and (not types or "object" in types):
            built = self._struct(schema, resolver)
        elif "items" in schema and (not types or "array" in types):
            item = self._build(schema["items"], resolver)
            built = Any if item is Any else list[item]  # type: ignore[valid-type]
        if built is not Any and "null" in types:
            return built | None
        return built

    def _struct(self, schema: dict[str, Any], resolver: Any) -> Any:
        fields = {name: self._build(sub, resolver) for name, sub in schema["properties"].items()}
        if all(kind is Any for kind in fields.values()):
            return Any
        self._counter += 1
        # Every key optional and unknown keys skipped: the schema check decides what is required
        # or allowed, and a skipped key shows up when the skeleton is re-encoded.
        return TypedDict(f"{schema.get('title', 'Object')}Skeleton{self._counter}", fields, total=False)  # type: ignore[operator]


def _union(branches: list[Any]) -> Any:
    union = branches[0]
    for branch in branches[1:]:
        union = union | branch
    return union


@cache
def _builder() -> _SkeletonBuilder:
    return _SkeletonBuilder()


# Rollout keys the rules or the kind detection read.
_ROLLOUT_MARKERS = ("_ng_rollout_id", "_ng_task_index", "_ng_rollout_index")


@cache
def skeleton_decoder(kind: str) -> msgspec.json.Decoder[Any]:
    """A decoder of one record of ``kind`` (not `rollout`) into its skeleton."""
    return msgspec.json.Decoder(_skeleton_type(kind))


@cache
def _skeleton_type(kind: str) -> Any:
    return _builder().for_uri(schemas.schema_id(SCHEMA_OF_KIND[kind]))


@cache
def _fields(skeleton_type: Any) -> dict[str, Any]:
    return typing.get_type_hints(skeleton_type)


def _step(skeleton_type: Any, segment: str | int) -> Any:
    """The type of the value one segment further down, or `Any` where nothing more is known."""
    members = typing.get_args(skeleton_type) if isinstance(skeleton_type, types.UnionType) else (skeleton_type,)
    for member in members:
        if isinstance(segment, int) and typing.get_origin(member) is list:
            return typing.get_args(member)[0]
        if isinstance(segment, str) and typing.is_typeddict(member):
            return _fields(member).get(segment, Any)
    return Any


def opaque_at(kind: str | None, path: tuple[str | int, ...]) -> bool:
    """Whether ``path`` lies inside a value the contract treats as opaque, which no path looks into.

    Decided from the skeleton types themselves, so it is true exactly where the fast path keeps raw
    bytes: payloads, and for a rollout every key outside the contract.
    """
    if kind is None or (kind not in SCHEMA_OF_KIND and kind != "rollout") or not path:
        return False
    if kind == "rollout":
        head, *rest = path
        attachment = ROLLOUT_ATTACHMENTS.get(head) if isinstance(head, str) else None
        if attachment is None:
            return head not in _ROLLOUT_MARKERS
        return opaque_at(attachment, tuple(rest))
    current = _skeleton_type(kind)
    for segment in path:
        if current is msgspec.Raw:
            return True
        current = _step(current, segment)
    return current is msgspec.Raw


_TOP_LEVEL = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ENCODER = msgspec.json.Encoder()


@cache
def structural_validator(kind: str) -> Any:
    """A compiled jsonschema_rs validator over the same bundled schemas (no network)."""
    documents = [(schemas.schema_id(n), schemas.get(n)) for n in schemas.names() if "#" not in schemas.schema_id(n)]
    registry = jsonschema_rs.Registry(documents)
    return jsonschema_rs.validator_for({"$ref": schemas.schema_id(SCHEMA_OF_KIND[kind])}, registry=registry)


def _decode_exactly(decoder: msgspec.json.Decoder[Any], data: bytes) -> Any:
    """Decode, and prove that nothing was lost on the way: the skeleton re-encodes to the very same bytes.

    Compact JSON — what the reference writes — passes, whatever the order of its keys (dicts keep
    it); a repeated or unknown key in the contract's objects, whitespace between tokens, or a
    contract string written with escapes where UTF-8 would do, does not, and is left to the slower
    paths, which report duplicates and accept the rest.
    """
    decoded = decoder.decode(data)
    if _ENCODER.encode(decoded) != data:
        raise ValueError("not canonical")
    return decoded


def _depth_bounded_by_interpreter(kind: str) -> bool:
    """Whether msgspec cannot decode anything nested deeper than a record of ``kind`` may be.

    Before Python 3.12 msgspec spends one level of the interpreter's recursion limit per level of
    nesting, and that limit is below the package's; later interpreters bound C code differently.
    """
    return sys.version_info < (3, 12) and sys.getrecursionlimit() <= max_depth(kind)


def skeleton(data: bytes, kind: str) -> dict[str, Any] | None:
    """The record's structure as plain data with opaque values left as `msgspec.Raw`, or None to take the slow path."""
    if not _depth_bounded_by_interpreter(kind) and data.count(b"[") + data.count(b"{") > max_depth(kind):
        return None  # it may nest too deep: the parsed path measures it
    try:
        if not data.isascii():
            # msgspec checks the UTF-8 of what it decodes, not of the payloads it keeps raw.
            data.decode("utf-8")
        if kind != "rollout":
            record = _decode_exactly(skeleton_decoder(kind), data)
            return record if isinstance(record, dict) else None
        top: dict[str, Any] = _decode_exactly(_TOP_LEVEL, data)
        for key, raw in top.items():
            attachment = ROLLOUT_ATTACHMENTS.get(key)
            if attachment is not None and raw != b"null":
                # bytes, not a memoryview: comparing a memoryview with bytes goes item by item.
                top[key] = _decode_exactly(skeleton_decoder(attachment), bytes(raw))
            elif key in _ROLLOUT_MARKERS or attachment is not None:
                top[key] = msgspec.json.decode(raw)
            # any other key lies outside the contract: it stays raw and is never read
        return top
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError):
        # ValueError covers bad UTF-8 and a skeleton that does not re-encode exactly; RecursionError,
        # nesting deeper than the interpreter lets msgspec go. The parsed path decides them all.
        return None


def structurally_valid(record: dict[str, Any], kind: str) -> bool:
    """Whether a record (or skeleton) satisfies its schema; for a rollout, every attachment present."""
    try:
        if kind != "rollout":
            return bool(structural_validator(kind).is_valid(record))
        for key, attachment in ROLLOUT_ATTACHMENTS.items():
            value = record.get(key)
            if value is not None and not (isinstance(value, dict) and structural_validator(attachment).is_valid(value)):
                return False
    except ValueError:
        # jsonschema_rs refuses to judge a raw payload that a keyword would have to look at; the
        # skeleton types keep payloads raw only where no keyword does, so this is a safety net,
        # and the parsed path decides.
        return False
    return True
