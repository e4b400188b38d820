"""Writing JSON text: orjson's output for every value this package reads, at any depth and integer size.

orjson writes at most 254 levels and integers within 64 bits; the readers here take 1,024 levels
and integers of any size, and keep numbers Python cannot hold as `NumberText`. What orjson
refuses is written by a small iterative writer that lays text out exactly as orjson does, so the
output never depends on which of the two wrote it.
"""

from __future__ import annotations

from typing import Any

import orjson

from gym_contract._values import NumberText

__all__ = ["dumps", "fragment"]

_INT64_MIN = -(2**63)
_UINT64_END = 2**64


def fragment(value: Any) -> Any:
    """orjson's `default` hook: a `NumberText` is written exactly as it was read."""
    if isinstance(value, NumberText):
        return orjson.Fragment(value.text.encode())
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def dumps(value: Any, *, indent: bool = False, sort_keys: bool = False) -> bytes:
    """``value`` as UTF-8 JSON text: compact, or indented by two spaces; keys sorted on request.

    Raises TypeError for a value JSON text cannot hold (a non-string key, a set, a string with a lone
    surrogate, an integer too long for Python to write); every value this package's readers give can
    be written.
    """
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return orjson.dumps(value, default=fragment, option=option)
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


def _break(indent: bool, level: int) -> bytes:
    return b"\n" + b"  " * level if indent else b""


def _leaf(value: Any) -> bytes:
    if isinstance(value, int) and not isinstance(value, bool) and not _INT64_MIN <= value < _UINT64_END:
        try:
            return str(value).encode()
        except ValueError:  # more digits than Python writes; the readers keep such a number as NumberText
            raise TypeError("an integer too long for Python to write as text") from None
    try:
        return orjson.dumps(value, default=fragment)
    except orjson.JSONEncodeError as error:
        raise TypeError(str(error)) from None
