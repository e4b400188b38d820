"""The fast path: a line decoded once into the Structs compiled from the schemas, so decoding it is checking it.

A record that decodes is valid against its schema (`_struct_types` builds the types to accept
nothing more), and its opaque payloads were checked to be JSON but never turned into Python
objects. Three things decoding alone does not prove are proven here, or the line is handed to the
parsed path, which explains it: that the text is UTF-8 inside the payloads too, that it nests no
deeper than the package allows (`_nesting`), and that no object of the contract repeats a key (see
`_keys_all_kept`). So this path only ever has to accept.
"""

from __future__ import annotations

import keyword
import threading
import typing
from collections.abc import Callable
from functools import cache
from typing import Any

import msgspec
import stringzilla

from gym_contract._vocabulary import ROLLOUT_ATTACHMENTS, SCHEMA_OF_KIND, detect_kind
from gym_contract.validation import _nesting, _shared_values

# Rollout keys the rules or the kind detection read.
_ROLLOUT_MARKERS = ("_ng_rollout_id", "_ng_task_index", "_ng_rollout_index")

_TOP_LEVEL = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ENCODER = msgspec.json.Encoder()
# SIMD search (see `_keys_all_kept`): this proof is most of the fast path's own cost.
_contains: Callable[[bytes, bytes], bool] = stringzilla.contains
# Each byte's mark: 1 for a colon, 0 for any other (see `colons`).
_COLON_MARKS = bytes(int(byte == ord(":")) for byte in range(256))
# The start of the escapes that write a colon inside a string, `\u003a` or `\u003A` (see `_keys_all_kept`):
# one scan finds both, and a line that has others is merely sent to the parsed path.
_ESCAPED_COLON = b"\\u003"


def _keys_all_kept(data: bytes, decoded: Any) -> bool:
    """Whether decoding dropped no member of an object: no repeated key, no key skipped as unknown.

    Decoding keeps the last value of a repeated key, and a Struct skips the keys it does not
    declare; either way the member is gone from what was decoded. Every member of an object is
    written with exactly one colon outside strings. Writing the decoded record back gives a colon
    for each member it kept, the colons inside its strings (which msgspec never escapes), and its
    raw payloads byte for byte, with theirs. Inside a string of the line, a colon is either itself
    or the escape `\\u003a` — ruled out before — so the line has as many colons as the record
    written back exactly when no member was dropped, whatever the order of keys or the spacing.
    """
    scratch = _SCRATCH
    written = scratch.written
    _ENCODER.encode_into(decoded, written)
    stringzilla.translate(written, _COLON_MARKS, inplace=True)
    kept: bool = stringzilla.bytesum(written) == colons(data)
    if len(written) > _SCRATCH_KEPT:
        scratch.written = bytearray()
    return kept


def colons(data: bytes) -> int:
    """How many colons ``data`` holds: its bytes marked 1 for a colon, 0 otherwise, and summed.

    Both steps are SIMD passes; on a 150 KB line, counting the one byte directly takes about six
    times as long with `stringzilla.count`, thirteen with `bytes.count`. The marks go to a buffer
    kept for the next line (see `_Scratch`).
    """
    scratch = _SCRATCH
    marks, size = scratch.marks, len(data)
    if len(marks) < size:
        marks.extend(bytes(size - len(marks)))
    stringzilla.translate(data, _COLON_MARKS, out=marks)
    total: int = stringzilla.bytesum(memoryview(marks)[:size])
    if size > _SCRATCH_KEPT:
        scratch.marks = bytearray()
    return total


class _Scratch(threading.local):
    """Buffers the proof writes into, kept from one line to the next, one set per thread.

    A new buffer for each record written back and each line's marks is an allocation of the size of
    the line, which the C allocator often takes from the system and gives back, page by page: on
    150 KB lines that cost more than the counting itself.
    """

    def __init__(self) -> None:
        self.written = bytearray()  # the record written back, then its marks
        self.marks = bytearray()  # the marks of the line


_SCRATCH = _Scratch()
# A buffer grown beyond this for one very long line is not kept for the next.
_SCRATCH_KEPT = 8 * 1024 * 1024


def measures_ahead() -> bool:
    """Whether lines are worth measuring ahead here (`measure_ahead`): decoding alone does not bound their nesting."""
    return _nesting.measures_ahead()


def measure_ahead(lines: list[bytes]) -> None:
    """Show which of ``lines`` nest no deeper than any kind may, the rollouts among them decoded as the last were
    and proven as `skeleton` proves them (`_sound`)."""
    _nesting.measure_ahead(lines, _SHAPES.current, _sound)


def _sound(data: bytes, decoded: Any) -> bool:
    """Whether ``decoded`` is the whole of ``data``: UTF-8 throughout, no colon written as an escape, no member dropped.

    What `skeleton` proves of a line decoded in one pass, told here of a rollout decoded ahead while the
    line and its Structs are still in the processor's cache.
    """
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
    if _contains(data, _ESCAPED_COLON):
        return False
    try:
        _shared_values.fill(decoded)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return False  # a conversation that does not decode: the line, decoded whole afresh, tells why
    return _keys_all_kept(data, decoded)


def decoded(data: bytes, kind: str) -> Any:
    """The line decoded into its Structs (a rollout: a dict of its keys); raises when it does not fit.

    Not proven: that no key was repeated or skipped (see `skeleton`)."""
    # The Structs are imported by the first line decoded: an empty input, or --help, starts without them.
    from gym_contract.validation._struct_types import record_decoder

    if kind != "rollout":
        return record_decoder(kind).decode(data)
    top: dict[str, Any] = _TOP_LEVEL.decode(data)
    _SHAPES.learn(tuple(top))  # the next lines are tried in one pass, by a Struct of these keys
    for key, raw in top.items():
        attachment = ROLLOUT_ATTACHMENTS.get(key)
        if attachment is not None:
            top[key] = None if raw == b"null" else record_decoder(attachment).decode(raw)
        elif key in _ROLLOUT_MARKERS:
            top[key] = msgspec.json.decode(raw)
        # any other key lies outside the contract: it stays raw and is never read
    return top


class _RolloutShapes:
    """Rollout lines decoded in one pass, by a Struct made for the keys the last lines had.

    A file's rollouts mostly share their keys. The Struct of a shape types the attachments as
    their Structs (with the conversations raw, filled in by `_shared_values.fill`), the markers as
    any JSON, and every other key it was made for as raw bytes; a key it was not made for is
    skipped, which `_keys_all_kept` notices, and the line is then decoded in two steps (`decoded`),
    whose keys make the Struct for the next line.
    """

    _KEPT = 16  # shapes remembered; a file whose keys vary more than this decodes in two steps
    # A rollout has a dozen keys; a Struct of a line with thousands would cost more to make than it saves.
    _MOST_KEYS = 256

    def __init__(self) -> None:
        self._decoders: dict[tuple[str, ...], msgspec.json.Decoder[Any]] = {}
        self._current: msgspec.json.Decoder[Any] | None = None

    @property
    def current(self) -> msgspec.json.Decoder[Any] | None:
        """The decoder of the shape learnt last, if any."""
        return self._current

    def decode(self, data: bytes) -> Any:
        """The line in one pass, its conversations filled in, or None when no shape has been learnt yet."""
        return None if self._current is None else _shared_values.fill(self._current.decode(data))

    def learn(self, keys: tuple[str, ...]) -> None:
        """Decode the next lines with the Struct of ``keys``, made on first need (not for a line of very many keys)."""
        if len(keys) > self._MOST_KEYS:
            return
        decoder = self._decoders.get(keys)
        if decoder is None:
            if len(self._decoders) >= self._KEPT:
                self._decoders.clear()
            decoder = self._decoders[keys] = msgspec.json.Decoder(_frame(keys))
        self._current = decoder


def _frame(keys: tuple[str, ...]) -> Any:
    """The Struct of rollouts with ``keys`` (and any of the contract's keys), each absent one UNSET."""
    from gym_contract._objects import WholeRecordStruct
    from gym_contract.validation._struct_types import record_type

    named = dict.fromkeys([*keys, *ROLLOUT_ATTACHMENTS, *_ROLLOUT_MARKERS])
    # A key is read as the attribute of its name (`gym_contract._objects`); one that cannot be an attribute is
    # renamed, and read by no one: the contract's keys are all names.
    taken = {key for key in named if _nameable(key)}
    fields: list[tuple[str, Any, Any]] = []
    renamed: dict[str, str] = {}
    for key in named:
        attachment = ROLLOUT_ATTACHMENTS.get(key)
        if attachment is not None:
            kind: Any = typing.Optional[_shared_values.deferring(record_type(attachment))]  # noqa: UP045
        else:
            kind = Any if key in _ROLLOUT_MARKERS else msgspec.Raw
        attribute = key
        if not _nameable(key):
            attribute = next(name for n in range(len(taken) + 1) if (name := f"key_{n}") not in taken)
            taken.add(attribute)
            renamed[attribute] = key
        fields.append((attribute, kind | msgspec.UnsetType, msgspec.UNSET))
    return msgspec.defstruct(
        "RolloutFrame", fields, bases=(WholeRecordStruct,), kw_only=True, rename=renamed or None, gc=False
    )


def _nameable(key: str) -> bool:
    """Whether a rollout's key can be the attribute of a Struct: a name, neither a keyword nor Python's own."""
    return key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("__")


_SHAPES = _RolloutShapes()


def decoded_once(data: bytes, kind: str) -> Any:
    """The line decoded as the fast path tries it first: a rollout in one pass once a shape is learnt."""
    structs = _SHAPES.decode(data) if kind == "rollout" else None
    return decoded(data, kind) if structs is None else structs


def kind_of(data: bytes) -> str | None:
    """The kind of record a line holds, told from its keys alone, or None (not an object, not JSON, not known)."""
    try:
        return detect_kind(_TOP_LEVEL.decode(data))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None


def skeleton(data: bytes, kind: str) -> Any:
    """The record decoded into its Structs, opaque values left as `msgspec.Raw`, or None to take the slow path.

    A record it gives satisfies its schema (for a rollout: every attachment there is). It is read as its
    Structs are (`gym_contract._objects`); a rollout decoded in two steps is a dict of its keys.
    """
    if not _nesting.depth_checked(data, kind):
        return None  # it may nest too deep: the parsed path measures it
    try:
        ahead = _nesting.decoded_ahead(data) if kind == "rollout" else None
        if ahead is not None and ahead[1]:
            structs = ahead[0]  # decoded and proven sound ahead
        else:
            if not data.isascii():
                # msgspec checks the UTF-8 of what it decodes, not of the payloads it keeps raw.
                data.decode("utf-8")
            if _contains(data, _ESCAPED_COLON):
                return None
            if kind != "rollout":
                tried = None
            elif ahead is None:
                tried = _SHAPES.decode(data)
            else:
                # Not told ahead (writing back ran out of room there): filled here, if it was not yet.
                tried = _shared_values.fill(ahead[0]) if ahead[1] is None else None  # unsound: decoded afresh
            if tried is not None and _keys_all_kept(data, tried):
                structs = tried
            else:  # no shape yet, or a key the shape does not know, or a repeated one
                structs = decoded(data, kind)
                if not _keys_all_kept(data, structs):
                    return None
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError):
        # ValueError covers bad UTF-8 and integers too long to convert; RecursionError, nesting
        # deeper than the interpreter lets msgspec go. The parsed path decides them all.
        return None
    return structs


def kind_of_decoded(record: Any) -> str | None:
    """The kind `detect_kind` tells of a record `skeleton` gave, from the keys it was written with."""
    if isinstance(record, dict):
        return detect_kind(record)
    written = zip(record.__struct_fields__, record.__struct_encode_fields__, strict=True)
    return detect_kind({key: True for name, key in written if getattr(record, name) is not msgspec.UNSET})


# ------------------------------------------------------------------------------------------ opaque values


def opaque_at(kind: str | None, path: tuple[str | int, ...], record: Any = None) -> bool:
    """Whether ``path`` lies inside a value of ``record`` that the contract treats as opaque, which no path looks into.

    Decided from the Structs themselves, so it is true exactly where the fast path keeps raw bytes:
    payloads, the members and elements of an object or array whose schema says nothing of them,
    and for a rollout every key outside the contract. ``record`` chooses among tagged branches.
    """
    if kind is None or (kind not in SCHEMA_OF_KIND and kind != "rollout") or not path:
        return False
    if kind == "rollout":
        head, *rest = path
        attachment = ROLLOUT_ATTACHMENTS.get(head) if isinstance(head, str) else None
        if attachment is None:
            return head not in _ROLLOUT_MARKERS
        return opaque_at(attachment, tuple(rest), _child(record, head))
    from gym_contract.validation._struct_types import record_type

    current: Any = record_type(kind)
    value = record
    for segment in path:
        if _members(current) == (msgspec.Raw,):
            return True
        current = _step(current, segment, value)
        value = _child(value, segment)
    return _members(current) == (msgspec.Raw,)


def _child(value: Any, segment: str | int) -> Any:
    if isinstance(segment, int):
        return value[segment] if isinstance(value, list) and -len(value) <= segment < len(value) else None
    return value.get(segment) if isinstance(value, dict) else None


def _members(kind: Any) -> tuple[Any, ...]:
    """The alternatives of a type, with `Annotated` and absence (UNSET) taken off."""
    if typing.get_origin(kind) is typing.Union:
        return tuple(m for part in typing.get_args(kind) for m in _members(part))
    if typing.get_origin(kind) is typing.Annotated:
        return (typing.get_args(kind)[0],)
    return () if kind is msgspec.UnsetType or kind is None else (kind,)


def _step(kind: Any, segment: str | int, value: Any) -> Any:
    """The type of the value one segment further down, or None where the Structs say nothing more."""
    for member in _members(kind):
        origin = typing.get_origin(member)
        if isinstance(segment, int) and origin is list:
            return typing.get_args(member)[0]
        if isinstance(segment, str) and origin is dict:
            return typing.get_args(member)[1]
        if isinstance(segment, str) and isinstance(member, type) and issubclass(member, msgspec.Struct):
            info = member.__struct_config__
            if info.tag_field is not None and (not isinstance(value, dict) or value.get(info.tag_field) != info.tag):
                continue  # another branch of the tagged union
            fields = _fields(member)
            # A key the Struct does not declare is not opaque: it is the schema's, or a key it allows.
            return fields.get(segment)
    return None


@cache
def _fields(struct: Any) -> dict[str, Any]:
    """JSON key -> type of each field of a Struct."""
    hints = typing.get_type_hints(struct, include_extras=True)
    names = zip(struct.__struct_fields__, struct.__struct_encode_fields__, strict=True)
    return {key: hints[name] for name, key in names}


# ------------------------------------------------------------------------------------------ parsed records


@cache
def _compiled_registry() -> Any:
    """The bundled schemas in a jsonschema_rs registry, built once for every kind (no network)."""
    import jsonschema_rs  # only lines the Structs do not take need it

    from gym_contract import schemas

    # The documents as read, not copies: the registry takes them into its own memory.
    return jsonschema_rs.Registry([(document["$id"], document) for document in schemas._documents().values()])


@cache
def structural_validator(kind: str) -> Any:
    """A compiled jsonschema_rs validator over the same bundled schemas (no network)."""
    import jsonschema_rs

    from gym_contract import schemas

    return jsonschema_rs.validator_for({"$ref": schemas.schema_id(SCHEMA_OF_KIND[kind])}, registry=_compiled_registry())


def failing_paths(record: dict[str, Any], kind: str) -> list[tuple[str | int, ...]] | None:
    """Where a parsed record of ``kind`` breaks its schema, as the compiled validator locates it; None if it cannot."""
    try:
        return [tuple(error.instance_path) for error in structural_validator(kind).iter_errors(record)]
    except ValueError:
        return None  # a value it cannot represent (a number Python holds as text)


def structurally_valid(record: dict[str, Any], kind: str) -> bool:
    """Whether a parsed record satisfies its schema; for a rollout, every attachment present.

    The parsed path asks this of a line the fast path could not take (spaced out, a repeated key in
    a payload, an escape), to skip explaining a record that has nothing to explain.
    """
    try:
        if kind != "rollout":
            return bool(structural_validator(kind).is_valid(record))
        for key, attachment in ROLLOUT_ATTACHMENTS.items():
            value = record.get(key)
            if value is not None and not (isinstance(value, dict) and structural_validator(attachment).is_valid(value)):
                return False
    except ValueError:
        # jsonschema_rs refuses to judge a value it cannot represent (a number Python holds as
        # text); the explaining validator decides.
        return False
    return True
