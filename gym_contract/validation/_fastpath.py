"""The fast path: a line decoded once into the Structs compiled from the schemas, so decoding it is checking it.

A record that decodes is valid against its schema (`_struct_types` builds the types to accept
nothing more), and its opaque payloads were checked to be JSON but never turned into Python
objects. Three things decoding alone does not prove are proven here, or the line is handed to the
parsed path, which explains it: that the text is UTF-8 inside the payloads too, that it nests no
deeper than the package allows, and that no object of the contract repeats a key (see
`_keys_all_kept`). So this path only ever has to accept.
"""

from __future__ import annotations

import sys
import threading
import typing
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

import msgspec
import stringzilla

from gym_contract._limits import EMBEDDING, max_depth
from gym_contract._vocabulary import ROLLOUT_ATTACHMENTS, SCHEMA_OF_KIND, detect_kind

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


def depth_checked(data: bytes, kind: str) -> bool:
    """Whether decoding ``data`` with msgspec is shown not to accept nesting deeper than ``kind`` may have.

    msgspec spends one unit of a budget per level of nesting and raises when it runs out. Before
    Python 3.12 the budget is the interpreter's recursion limit, below the package's unless raised;
    raised, it no longer protects the C stack, so only a line with fewer brackets than the limit is
    decoded. On 3.12 and 3.13 the interpreter bounds C recursion safely with a count of its own,
    far above the package's limit on 3.13; a line measured ahead with others (`measure_ahead`), or
    else alone the same way, or else exactly against its kind's limit (`nests_within`), is shown.
    Later interpreters bound C recursion by the stack's size, which levels of arrays and of objects
    fill at different rates: only the count of brackets is taken there.
    """
    limit = max_depth(kind)
    if _AHEAD.get(id(data)) is data:
        return True  # measured ahead, against a limit no kind goes below
    if _COUNTED_BUDGET:
        if len(data) > 2 * _SHALLOWEST and _measured([data], None) not in (None, [_NOT_SHOWN]):
            return True  # measured alone as a batch is measured, against a limit no kind goes below
        measured = nests_within(data, limit)  # exactly, for a line between that limit and its kind's
        if measured is not None:
            return measured
    elif sys.version_info < (3, 12) and sys.getrecursionlimit() <= limit:
        return True
    return data.count(b"[") + data.count(b"{") <= limit  # fewer brackets than levels allowed


# Whether msgspec's budget is a count of levels that the interpreter keeps apart from its recursion limit.
_COUNTED_BUDGET = (3, 12) <= sys.version_info < (3, 14)

_AS_RAW = msgspec.json.Decoder(msgspec.Raw)
# Levels of padding measured to leave msgspec room for exactly `limit` more, per limit (see `nests_within`),
# and the limits for which the room was too large to pad cheaply.
_PADDING: dict[int, int] = {}
_TOO_MUCH_ROOM: set[int] = set()
# Beyond this much padding, the probes cost more than the parsed path's own measure: measured on
# Python 3.12 (about 470 levels of padding), the fast path with the measure is faster than the parsed
# path; on 3.13 (about 9,000), slower.
_MOST_PADDING = 2048


def _decodes(text: bytes) -> bool:
    """Whether msgspec reads ``text`` through (as raw JSON, building nothing) without running out of room."""
    try:
        _AS_RAW.decode(text)
    except RecursionError:
        return False
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return True  # not JSON, but not too deep either: the decoding proper refuses it
    return True


@cache
def _nested(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


def nests_within(data: bytes, limit: int) -> bool | None:
    """Whether ``data`` nests no deeper than ``limit`` levels, shown with msgspec itself; None when not measured.

    msgspec spends one unit of a budget per level and raises when it runs out; how much budget is
    left depends on the interpreter and on how deep the caller's stack already is. So, here, at one
    depth of the stack: ``padding`` levels around ``data`` leave exactly ``limit`` levels of room —
    `padding + limit` levels decode and one more do not — and then ``data`` wrapped in them decodes
    only if it nests at most ``limit`` deep. The padding is measured again when the room changed.
    """
    if len(data) <= 2 * limit:
        return True  # every level takes two bytes
    if limit in _TOO_MUCH_ROOM:
        return None
    for _ in range(2):
        padding = _PADDING.get(limit)
        if padding is not None and _decodes(_nested(padding + limit)) and not _decodes(_nested(padding + limit + 1)):
            return _decodes(b"[" * padding + data + b"]" * padding)
        # The room left here, by bisection, each probe at the same depth of the stack as the check.
        low, high = 0, limit + _MOST_PADDING + 1
        while low < high:
            middle = (low + high + 1) // 2
            if _decodes(_nested(middle)):
                low = middle
            else:
                high = middle - 1
        if low > limit + _MOST_PADDING:
            _TOO_MUCH_ROOM.add(limit)
            return None
        if low < limit:
            return None  # too little room here to decode such a line at all
        _PADDING[limit] = low - limit
    return None


# ------------------------------------------------------------------------------------------ nesting, measured ahead

# Every kind's limit is at least this: a line measured against it nests no deeper than its kind allows.
_SHALLOWEST = min(max_depth(kind) for kind in EMBEDDING)
# Lines shown to nest at most `_SHALLOWEST` levels, by identity; the last batch's only. Held, so that no
# other line takes the identity of one while it is here.
_AHEAD: dict[int, bytes] = {}
# Of those, the rollout lines that were decoded while they were measured (by the Struct of the last
# shape), until `skeleton` takes them.
_DECODED_AHEAD: dict[int, Any] = {}


def measures_ahead() -> bool:
    """Whether lines are worth measuring ahead here (`measure_ahead`): decoding alone does not bound their nesting."""
    return _COUNTED_BUDGET


def measure_ahead(lines: list[bytes]) -> None:
    """Show which of ``lines`` nest no deeper than any kind may, so that `depth_checked` takes them unmeasured.

    How much of msgspec's budget is left depends on the interpreter and on how deep the caller's
    stack is. Measuring it for each line alone costs, on Python 3.13, a decoding thousands of
    levels deep per line (`nests_within`). Here the budget is spent once for the whole batch: a
    callback called from the bottom of ``padding`` levels of nested tuples, which `isinstance`
    descends spending a unit of the same budget per level (`_padded`), checks with two probes that
    exactly `_SHALLOWEST` levels are left — that many decode and one more do not — and then reads
    each line, as a rollout of the last shape or as raw JSON, from the same place: a line read
    through nests no deeper. The padding is measured again when the room changed. Only where the
    budget is a count the interpreter keeps (`_COUNTED_BUDGET`): before 3.12 a probe deeper than
    the C stack allows would not raise but crash.
    """
    _AHEAD.clear()
    _DECODED_AHEAD.clear()
    if not lines or not _COUNTED_BUDGET:
        return
    for line, shown in zip(lines, _measured(lines, _SHAPES.current) or (), strict=False):
        if shown is not _NOT_SHOWN:
            _AHEAD[id(line)] = line
            if shown is not _SHOWN:
                _DECODED_AHEAD[id(line)] = shown


def _measured(lines: list[bytes], rollouts: msgspec.json.Decoder[Any] | None) -> list[Any] | None:
    """What `_Bottom` finds of each line, under the padding that leaves it `_SHALLOWEST` levels of room;
    None when no padding does (then no line is shown)."""
    for _ in range(3):
        padding = _BOTTOM_PADDING[0]
        bottom = _Bottom(lines, rollouts)
        try:
            isinstance(bottom, _padded(padding))
        except RecursionError:
            _BOTTOM_PADDING[0] = 0  # the stack is deeper than when the padding was measured: from the top
            continue
        if bottom.shown is not None:
            return bottom.shown
        if bottom.room is None or padding + bottom.room < _SHALLOWEST:
            return None  # no bound in sight, or less room than the limit even at the top
        _BOTTOM_PADDING[0] = padding + bottom.room - _SHALLOWEST
    return None


# Levels of arrays above the callback of `measure_ahead` that leave exactly `_SHALLOWEST` levels of room in it.
_BOTTOM_PADDING = [0]
# More room than any interpreter with a counted budget gives (10,000 levels on 3.13).
_MOST_ROOM = 1 << 16


def _read_through(text: bytes, decoder: msgspec.json.Decoder[Any] = _AS_RAW) -> Any:
    """What ``decoder`` makes of ``text``, in the room it has here, or `_NOT_SHOWN` when it does not read it through.

    The default decoder reads it as raw JSON, building nothing. Text that is no JSON is not shown,
    however shallow the part read before the fault: the fast path refuses it anyway, and nothing
    then rests on how far the reading got.
    """
    try:
        return decoder.decode(text)
    except (RecursionError, msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return _NOT_SHOWN


# What `_Bottom` found of a line: not read through, so not shown; or read through, and shown, without its Structs.
_NOT_SHOWN = object()
_SHOWN = object()


class _CallsTheInstance(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        instance()
        return False


class _AtTheBottom(metaclass=_CallsTheInstance):
    """A class whose instance check calls the instance: `_Bottom` is called this way, under the padding."""


@lru_cache(maxsize=2)
def _padded(levels: int) -> Any:
    """``levels`` of tuples around `_AtTheBottom`.

    `isinstance` descends a tuple of classes level by level, each level a unit of the budget that
    msgspec spends too: 9,000 levels take it about 20 µs on Python 3.13, as many levels of arrays
    decoded by msgspec 500 µs.
    """
    padding: Any = _AtTheBottom
    for _ in range(levels):
        padding = (padding,)
    return padding


class _Bottom:
    """The callback of `measure_ahead`, called from the bottom of the padding."""

    def __init__(self, lines: list[bytes], rollouts: msgspec.json.Decoder[Any] | None) -> None:
        self.lines = lines
        self.rollouts = rollouts
        # Per line: its Structs, `_SHOWN` or `_NOT_SHOWN`, whether it nests at most `_SHALLOWEST` levels.
        self.shown: list[Any] | None = None
        self.room: int | None = None  # the levels left down here, when they were not exactly the limit

    def __call__(self) -> None:
        # Every probe and every line is read from this frame, by one function, so that each has the same room.
        exactly = _read_through(_nested(_SHALLOWEST)) is not _NOT_SHOWN
        if exactly and _read_through(_nested(_SHALLOWEST + 1)) is _NOT_SHOWN:
            shown = []
            # A loop, not a comprehension: before 3.12 a comprehension is a frame of its own, one level less room.
            for line in self.lines:
                # Decoded as a rollout of the last shape, the line is read through once, not twice: msgspec
                # spends a unit of the same budget on every level of nesting, in a Struct, a list, a dict or a
                # value it skips, so a line that decodes in this room nests no deeper than raw reading shows.
                structs = _NOT_SHOWN if self.rollouts is None else _read_through(line, self.rollouts)
                if structs is _NOT_SHOWN:
                    structs = _SHOWN if _read_through(line) is not _NOT_SHOWN else _NOT_SHOWN
                shown.append(structs)
            self.shown = shown
            return
        low, high = 0, _SHALLOWEST + 1
        while _read_through(_nested(high)) is not _NOT_SHOWN:
            low, high = high, 2 * high
            if high > _MOST_ROOM:
                return  # no bound in sight: left unmeasured
        while low < high - 1:
            middle = (low + high) // 2
            if _read_through(_nested(middle)) is not _NOT_SHOWN:
                low = middle
            else:
                high = middle
        self.room = low


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
    their Structs, the markers as any JSON, and every other key it was made for as raw bytes; a
    key it was not made for is skipped, which `_keys_all_kept` notices, and the line is then
    decoded in two steps (`decoded`), whose keys make the Struct for the next line.
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
        """The line in one pass, or None when no shape has been learnt yet."""
        return None if self._current is None else self._current.decode(data)

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
    from gym_contract.validation._struct_types import record_type

    named = dict.fromkeys([*keys, *ROLLOUT_ATTACHMENTS, *_ROLLOUT_MARKERS])
    fields: list[tuple[str, Any, Any]] = []
    renamed: dict[str, str] = {}
    for position, key in enumerate(named):
        attachment = ROLLOUT_ATTACHMENTS.get(key)
        if attachment is not None:
            kind: Any = typing.Optional[record_type(attachment)]  # noqa: UP045 - built at run time
        else:
            kind = Any if key in _ROLLOUT_MARKERS else msgspec.Raw
        attribute = f"k{position}"
        renamed[attribute] = key
        fields.append((attribute, kind | msgspec.UnsetType, msgspec.UNSET))
    return msgspec.defstruct("RolloutFrame", fields, kw_only=True, rename=renamed, gc=False)


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


def skeleton(data: bytes, kind: str) -> dict[str, Any] | None:
    """The record's structure as plain data with opaque values left as `msgspec.Raw`, or None to take the slow path.

    A record it gives satisfies its schema (for a rollout: every attachment there is).
    """
    if not depth_checked(data, kind):
        return None  # it may nest too deep: the parsed path measures it
    try:
        if not data.isascii():
            # msgspec checks the UTF-8 of what it decodes, not of the payloads it keeps raw.
            data.decode("utf-8")
        if _contains(data, _ESCAPED_COLON):
            return None
        tried = _DECODED_AHEAD.pop(id(data), None)
        if kind != "rollout":
            tried = None
        elif tried is None:
            tried = _SHAPES.decode(data)
        if tried is not None and _keys_all_kept(data, tried):
            structs = tried
        else:  # no shape yet, or a key the shape does not know, or a repeated one
            structs = decoded(data, kind)
            if not _keys_all_kept(data, structs):
                return None
        record = msgspec.to_builtins(structs, builtin_types=(msgspec.Raw,))
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError):
        # ValueError covers bad UTF-8 and integers too long to convert; RecursionError, nesting
        # deeper than the interpreter lets msgspec go. The parsed path decides them all.
        return None
    return record if isinstance(record, dict) else None


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
