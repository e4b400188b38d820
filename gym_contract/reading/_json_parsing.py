"""Parsing one JSON text strictly: why it is not JSON, and every object in it that repeats a key."""

from __future__ import annotations

import math
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from gym_contract._json_pointer import pointer
from gym_contract._limits import MAX_DEPTH, depth_beyond
from gym_contract._values import NumberText, json_type
from gym_contract.diagnostics import Diagnostic

ORJSON_MAX_DEPTH = MAX_DEPTH

_NON_FINITE = re.compile(r"-?(?:NaN|Infinity)")


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
        # orjson writes at most 254 levels, and no NumberText; such values go the exact way.
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


def _parse_with_pairs_hook(data: bytes | str, hook: Callable[[list[tuple[str, Any]]], Any]) -> Any:
    """The stdlib's parse of text orjson accepted, with every number as exact as `loads` keeps it."""
    import json  # the stdlib's parser: only for text with numbers orjson does not keep exact

    return with_room_for_nesting(
        lambda: json.loads(
            data, object_pairs_hook=hook, parse_int=_integer, parse_float=_float, parse_constant=_not_json
        )
    )


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
    where = f"the object at {pointer(*path)}" if path else "the top-level object"
    message = f"key {key!r} appears more than once in {where}; parsers keep only one of the values"
    return Diagnostic.of("json_duplicate_key", message, pointer(*path))


Duplicates = list[tuple[tuple[str | int, ...], str]]
"""Objects that repeat a key: each one's path and the first key it repeats."""


# An integer outside [-2**63, 2**64), which orjson reads as a float, has twenty digits, or nineteen after a minus.
# Every digit is written as 0, so that two substring searches find such a run: fifteen times faster
# than a regular expression on a rollout line.
_DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_TWENTY_DIGITS = b"0" * 20
_MINUS_NINETEEN_DIGITS = b"-" + b"0" * 19


def _has_long_digit_run(raw: bytes) -> bool:
    digits = raw.translate(_DIGITS_AS_ZEROS)
    return _TWENTY_DIGITS in digits or _MINUS_NINETEEN_DIGITS in digits


def loads(data: bytes | str) -> Any:
    """Parse JSON as orjson does (and raise its `JSONDecodeError`), except that every number stays
    exactly what the text says: orjson turns an integer beyond 64 bits into a float and refuses a
    number beyond a double's range. An integer Python can convert is an int, whatever its size; a
    number Python cannot hold is kept as its text (`NumberText`). Text is held to orjson's rules
    whichever parser reads it: a lone surrogate is refused even where a number sends the text to the
    stdlib's parser."""
    if isinstance(data, str):
        try:
            raw = data.encode()
        except UnicodeEncodeError as error:  # a str holding a lone surrogate: not text either
            raise orjson.JSONDecodeError("str is not valid UTF-8: surrogates not allowed", data, error.start) from None
    else:
        raw = data
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        if "infinity" not in error.msg:
            raise
        return _exact(raw, error)
    if _has_long_digit_run(raw):
        # orjson has proven the text is JSON and bounded its depth; the stdlib keeps numbers whole.
        value = _parse_with_pairs_hook(raw, dict)
    return value


def _exact(raw: bytes, refusal: orjson.JSONDecodeError) -> Any:
    """The text orjson refused for a number out of a double's range, read with that number kept as text.

    The text is held to orjson's rules for everything else: UTF-8 decoded strictly (the stdlib lets
    encoded surrogates through) and no lone surrogate escape, so that whether a string is accepted
    never depends on a number beside it.
    """
    try:
        text = raw.decode("utf-8")
        value = _parse_with_pairs_hook(text, dict)
    except (ValueError, RecursionError):
        raise refusal from None
    lone = lone_surrogate(text)
    if lone is not None:
        raise orjson.JSONDecodeError(lone[0], text, lone[1])
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)


def lone_surrogate(text: str) -> tuple[str, int] | None:
    """The first `\\uD800`–`\\uDFFF` escape of JSON ``text`` that is not half of a pair, in orjson's words,
    with its offset; None when every surrogate escape is paired.

    A lone surrogate is not a character: Python would hold it in a string, but no UTF-8 writer can
    write it. orjson refuses it wherever it reads one; this says the same of text orjson did not read.
    """
    if _SURROGATE_ESCAPE.search(text) is None:
        return None
    high: tuple[int, int] | None = None  # an unpaired high surrogate escape: where it starts and ends
    for escape in _ESCAPE.finditer(text):
        unit = int(escape[1], 16) if escape[1] is not None else None
        if high is not None:
            if escape.start() != high[1] or unit is None:
                return "no low surrogate in string", high[0]
            if not 0xDC00 <= unit <= 0xDFFF:
                return "invalid low surrogate in string", high[0]
            high = None
            continue
        if unit is not None and 0xD800 <= unit <= 0xDBFF:
            high = (escape.start(), escape.end())
        elif unit is not None and 0xDC00 <= unit <= 0xDFFF:
            return "invalid high surrogate in string", escape.start()
    return None if high is None else ("no low surrogate in string", high[0])


def _integer(text: str) -> int | NumberText:
    try:
        return int(text)
    except ValueError:  # more digits than Python converts
        return NumberText(text)


def _float(text: str) -> float | NumberText:
    number = float(text)
    return number if math.isfinite(number) else NumberText(text)


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
    message = f"the record is a JSON {json_type(value)}, not an object"
    if isinstance(value, list):
        # The usual cause: records written as one JSON array into a file named as JSONL.
        message += (
            "; a JSONL file holds one object per line, and a file that is one JSON array of records "
            "is read as such when its name ends in .json"
        )
    return Diagnostic.of("record_not_object", message)


def nesting_problem(value: Any, limit: int) -> Diagnostic | None:
    """Why a parsed value nests deeper than ``limit`` levels (for a kind that sits deeper in a rollout record)."""
    if limit >= MAX_DEPTH:
        return None  # the parser itself refuses anything deeper
    try:
        orjson.dumps(value)
        return None  # orjson writes at most 254 levels: shallow enough for any kind
    except orjson.JSONEncodeError:
        where = depth_beyond(value, limit)
    if where is None:
        return None
    message = f"nesting is deeper than the {limit} levels a record of this kind may have, to fit in a rollout record"
    return Diagnostic.of("json_invalid", message, pointer(*where))


def parse_record(data: bytes, max_depth: int = MAX_DEPTH) -> dict[str, Any] | Diagnostic:
    """One JSONL record parsed, or the diagnostic that says why it is not one (without a line)."""
    parsed = parse_with_duplicates(data)
    if isinstance(parsed, Diagnostic):
        return parsed
    value, repeated = parsed
    if type(value) is not dict:
        return not_an_object(value)
    if repeated:
        return duplicate_key(*repeated[0])
    return nesting_problem(value, max_depth) or value
