"""Writing JSON text: orjson's output for every value this package reads, at any depth and integer size.

orjson writes at most 254 levels and integers within 64 bits; the readers here take 1,024 levels
and integers of any size, and keep numbers Python cannot hold as `NumberText`. What orjson
refuses is written by a small iterative writer that lays text out exactly as orjson does, so the
output never depends on which of the two wrote it.

Where a format is defined by the text Python's `json` module writes (lineage's canonical JSON,
the reference's `_raw` tool arguments), `python_text` writes that text for the same values.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

import orjson

from gym_contract._values import NumberText

__all__ = ["SHORT_INT_BITS", "dumps", "integer_text", "nested_text", "python_text"]

_INT64_MIN = -(2**63)
_UINT64_END = 2**64


def dumps(value: Any, *, indent: bool = False, sort_keys: bool = False) -> bytes:
    """``value`` as UTF-8 JSON text: compact, or indented by two spaces (for the first 254 levels, then
    compact, so that the text stays linear in the value's size); keys sorted on request.

    Raises TypeError for a value JSON text cannot hold (a non-string key, a set, a string with a lone
    surrogate, an integer too long for Python to write); every value this package's readers give can
    be written.
    """
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    # orjson is never handed a NumberText as an `orjson.Fragment`: orjson 3.13 writes past the end of its
    # buffer when a long fragment is followed by the closing brackets of a deep value. A value holding
    # one, which only the lenient reader makes, is written by the explicit stack below.
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        return _dumps_any_depth(value, indent=indent, sort_keys=sort_keys)


class _Text(bytes):
    """Output already laid out, on the writer's stack (as opposed to a value still to write)."""


def _dumps_any_depth(value: Any, *, indent: bool, sort_keys: bool) -> bytes:
    pieces: list[bytes] = []
    stack: list[tuple[Any, int]] = [(value, 0)]
    separator = b": " if indent else b":"
    while stack:
        item, level = stack.pop()
        if isinstance(item, _Text):
            pieces.append(item)
        elif isinstance(item, dict):
            if not item:
                pieces.append(b"{}")
                continue
            entries = sorted(item.items()) if sort_keys else list(item.items())
            pending: list[tuple[Any, int]] = [(_Text(b"{"), level)]
            for position, (key, child) in enumerate(entries):
                if not isinstance(key, str):
                    raise TypeError(f"an object key must be a string, not {type(key).__name__}")
                start = _Text(b"," if position else b"") + _break(indent, level + 1)
                pending.append((_Text(start + _leaf(key) + separator), level))
                pending.append((child, level + 1))
            pending.append((_Text(_break(indent, level) + b"}"), level))
            stack.extend(reversed(pending))
        elif isinstance(item, (list, tuple)):
            if not item:
                pieces.append(b"[]")
                continue
            pending = [(_Text(b"["), level)]
            for position, child in enumerate(item):
                pending.append((_Text((b"," if position else b"") + _break(indent, level + 1)), level))
                pending.append((child, level + 1))
            pending.append((_Text(_break(indent, level) + b"]"), level))
            stack.extend(reversed(pending))
        else:
            pieces.append(_leaf(item))
    return b"".join(pieces)


# orjson indents as deep as it writes; deeper, the text goes on without line breaks. Indenting every
# level would cost each line two bytes per level above it: text quadratic in a chain's length.
_INDENTED_LEVELS = 254


def _break(indent: bool, level: int) -> bytes:
    return b"\n" + b"  " * level if indent and level <= _INDENTED_LEVELS else b""


def _leaf(value: Any) -> bytes:
    if isinstance(value, int) and not isinstance(value, bool) and not _INT64_MIN <= value < _UINT64_END:
        return integer_text(value).encode()
    if isinstance(value, NumberText):
        return value.text.encode()
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError as error:
        raise TypeError(str(error)) from None


# Python writes an int as text only up to sys.int_max_str_digits (4,300 by default, 640 at the least);
# `decimal` converts from int exactly and without that limit.
SHORT_INT_BITS = 2000
"""Integers of at most this many bits have at most 603 digits: Python writes them whatever its limit is set to."""
_DECIMAL = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def integer_text(value: int) -> str:
    """An integer in decimal, exactly, whatever its size."""
    if value.bit_length() <= SHORT_INT_BITS:
        return int.__repr__(value)
    return format(_DECIMAL.create_decimal(value), "f")


class _Literal(str):
    """Text already laid out, on `nested_text`'s stack (as opposed to a value still to write)."""


def nested_text(
    value: Any,
    *,
    is_object: Callable[[Any], bool],
    is_array: Callable[[Any], bool],
    leaf: Callable[[Any], str],
    string: Callable[[str], str],
    key_text: Callable[[Any], str],
    item_separator: str = ", ",
    key_separator: str = ": ",
    sort_keys: bool = False,
) -> str:
    """``value`` laid out as both `json.dumps` and `repr` lay out objects and arrays (``{key: value, …}``,
    ``[value, …]``), at any depth: what counts as an object and as an array, and how a string, any
    other leaf and a key are written, is given.

    An explicit stack of values still to write and text already laid out: depth cannot exhaust it.
    """
    pieces: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is _Literal:
            pieces.append(item)
        elif type(item) is str:  # the commonest leaf, written without asking what else it is
            pieces.append(string(item))
        elif is_object(item):
            if not item:
                pieces.append("{}")
                continue
            keys = sorted(item) if sort_keys else list(item)
            stack.append(_Literal("}"))
            for position in range(len(keys) - 1, -1, -1):
                key = keys[position]
                stack.append(item[key])
                stack.append(_Literal(("{" if position == 0 else item_separator) + key_text(key) + key_separator))
        elif is_array(item):
            if not item:
                pieces.append("[]")
                continue
            stack.append(_Literal("]"))
            for position in range(len(item) - 1, 0, -1):
                stack.append(item[position])
                stack.append(_Literal(item_separator))
            stack.append(item[0])
            stack.append(_Literal("["))
        else:
            pieces.append(leaf(item))
    return "".join(pieces)


def _python_scalar(value: Any, allow_nan: bool) -> str:
    if isinstance(value, str):
        return encode_basestring(value)  # what json.dumps(value, ensure_ascii=False) writes
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, int):
        return integer_text(value)
    if isinstance(value, float):
        if value != value or value in (_INFINITY, -_INFINITY):
            if not allow_nan:
                raise ValueError("JSON has no NaN or Infinity")
            return "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    if isinstance(value, NumberText):
        return value.text
    raise TypeError(f"not a JSON value: {type(value).__name__}")


_INFINITY = float("inf")


def python_text(value: Any, *, sort_keys: bool = False, compact: bool = False, allow_nan: bool = True) -> str:
    """``value`` as ``json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)`` writes it (``compact``:
    with the separators ``,`` and ``:``), at any depth, integers of any size, `NumberText` as its text.

    A key that is not a string is written as ``str(key)``. Raises TypeError for a value JSON cannot
    hold, and ValueError for NaN or an infinity unless ``allow_nan``.
    """
    item_separator, key_separator = (",", ":") if compact else (", ", ": ")
    return nested_text(
        value,
        is_object=_is_dict,
        is_array=_is_sequence,
        leaf=lambda item: _python_scalar(item, allow_nan),
        string=encode_basestring,
        key_text=lambda key: encode_basestring(key if isinstance(key, str) else str(key)),
        item_separator=item_separator,
        key_separator=key_separator,
        sort_keys=sort_keys,
    )


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple))
