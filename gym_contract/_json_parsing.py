"""Parsing one JSON text strictly: why it is not JSON, and every object in it that repeats a key."""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from gym_contract.diagnostics import Diagnostic

ORJSON_MAX_DEPTH = 1024

_NON_FINITE = re.compile(r"-?(?:NaN|Infinity)")
_JSON_TYPE_NAMES: dict[type, str] = {list: "array", str: "string", int: "number", float: "number", bool: "true/false"}


def json_type(value: Any) -> str:
    return "null" if value is None else _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def decode_failure(data: bytes, error: orjson.JSONDecodeError) -> tuple[Diagnostic, int]:
    """Why orjson refused `data`, and on which line of `data`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as bad:
        message = f"the text is not valid UTF-8: byte 0x{data[bad.start]:02x} at offset {bad.start} ({bad.reason})"
        return Diagnostic.of("utf8_invalid", message), data.count(b"\n", 0, bad.start) + 1
    # orjson's own words ("unexpected character") do not say that the value was a NaN or an Infinity.
    # Its position is the token, or the letter after a minus sign.
    position = error.pos
    if _NON_FINITE.match(text, position) or (position > 0 and _NON_FINITE.match(text, position - 1)):
        message = f"NaN and Infinity are not JSON ({error})"
    elif "depth" in error.msg or "recursion" in error.msg:
        message = f"nesting is deeper than orjson's {ORJSON_MAX_DEPTH} levels ({error})"
    else:
        message = str(error)
    return Diagnostic.of("json_invalid", message), error.lineno


def proven_free_of_duplicates(value: Any, data: bytes) -> bool:
    """True when `data` is exactly orjson's own output for `value`, which cannot repeat a key."""
    try:
        if orjson.dumps(value) == data:
            return True
        return b"\n" in data and orjson.dumps(value, option=orjson.OPT_INDENT_2) == data.strip()
    except orjson.JSONEncodeError:
        # orjson writes at most 254 levels; deeper values go the exact way.
        return False


class _DuplicatedObject(dict[str, Any]):
    """An object whose text repeats a key: the dict keeps the last value, `repeated_key` names the key."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        counts = Counter(key for key, _ in pairs)
        self.repeated_key = next(key for key, count in counts.items() if count > 1)


_DEEP_NESTING_LOCK = threading.Lock()
T = TypeVar("T")


def with_room_for_nesting(work: Callable[[], T]) -> T:
    """Run ``work``; if it runs out of recursion, run it again with room for JSON nested as deep as
    orjson accepts.

    The stdlib's parser, `repr` and jsonschema spend a Python recursion level per nesting level, and
    orjson has already bounded the depth of anything read: lifting the limit by that much, for the
    one call, and putting it back, is safe.
    """
    try:
        return work()
    except RecursionError:
        pass
    with _DEEP_NESTING_LOCK:
        previous = sys.getrecursionlimit()
        sys.setrecursionlimit(previous + ORJSON_MAX_DEPTH + 100)
        try:
            return work()
        finally:
            sys.setrecursionlimit(previous)


def _parse_with_pairs_hook(data: bytes, hook: Callable[[list[tuple[str, Any]]], Any], **options: Any) -> Any:
    return with_room_for_nesting(lambda: json.loads(data, object_pairs_hook=hook, **options))


def _pointer(segments: tuple[str | int, ...]) -> str:
    return "".join("/" + str(segment).replace("~", "~0").replace("/", "~1") for segment in segments)


def find_duplicates(data: bytes) -> list[tuple[tuple[str | int, ...], str]]:
    """Every object of `data` (already valid JSON) that repeats a key: its path and the first repeated key."""
    repeats = 0

    def keep_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeats
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        repeats += 1
        return _DuplicatedObject(pairs)

    value = _parse_with_pairs_hook(data, keep_pairs)
    found: list[tuple[tuple[str | int, ...], str]] = []
    # Paths are only needed when something repeats; the walk is iterative, so depth does not matter.
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())] if repeats else []
    while stack:
        value, path = stack.pop()
        if isinstance(value, _DuplicatedObject):
            found.append((path, value.repeated_key))
        if isinstance(value, dict):
            stack.extend((child, (*path, key)) for key, child in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((child, (*path, index)) for index, child in reversed(list(enumerate(value))))
    return found


def duplicate_key(path: tuple[str | int, ...], key: str) -> Diagnostic:
    where = f"the object at {_pointer(path)}" if path else "the top-level object"
    message = f"key {key!r} appears more than once in {where}; parsers keep only one of the values"
    return Diagnostic.of("json_duplicate_key", message, _pointer(path))


Duplicates = list[tuple[tuple[str | int, ...], str]]
"""Objects that repeat a key: each one's path and the first key it repeats."""


# Twenty digits in a row may be an integer beyond 64 bits, which orjson reads as a float.
_LONG_DIGITS = re.compile(rb"\d{20}")


def loads(data: bytes | str) -> Any:
    """Parse JSON as orjson does (and raise its `JSONDecodeError`), except that every integer stays
    exact: orjson turns one beyond 64 bits into a float, and refuses one beyond a double's range;
    JSON means the integer, whatever its size."""
    raw = data.encode() if isinstance(data, str) else data
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        if "infinity" not in error.msg:
            raise
        return _exact(raw, error)
    if _LONG_DIGITS.search(raw):
        # orjson has proven the text is JSON and bounded its depth; the stdlib keeps integers whole.
        value = _parse_with_pairs_hook(raw, dict)
    return value


def _exact(raw: bytes, refusal: orjson.JSONDecodeError) -> Any:
    """The text orjson refused for a number out of a double's range: fine if that number is an
    integer (Python's limit on the digits of one stands), refused as orjson did otherwise."""
    try:
        return _parse_with_pairs_hook(raw, dict, parse_float=_finite, parse_constant=_not_json)
    except (ValueError, RecursionError):
        raise refusal from None


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is beyond a double's range")
    return number


def _not_json(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def parse_with_duplicates(data: bytes) -> tuple[Any, Duplicates] | Diagnostic:
    """One JSON value and every object in it that repeats a key, or why ``data`` is not JSON."""
    try:
        value = loads(data)
    except orjson.JSONDecodeError as error:
        return decode_failure(data, error)[0]
    return value, ([] if proven_free_of_duplicates(value, data) else find_duplicates(data))


def not_an_object(value: Any) -> Diagnostic:
    return Diagnostic.of("record_not_object", f"the record is a JSON {json_type(value)}, not an object")


def parse_record(data: bytes) -> dict[str, Any] | Diagnostic:
    """One JSONL record parsed, or the diagnostic that says why it is not one (without a line)."""
    parsed = parse_with_duplicates(data)
    if isinstance(parsed, Diagnostic):
        return parsed
    value, repeated = parsed
    if type(value) is not dict:
        return not_an_object(value)
    return duplicate_key(*repeated[0]) if repeated else value
