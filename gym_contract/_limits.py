"""The package's one limit on the JSON it reads — nesting depth — and the checks that enforce it.

A rollout record may nest as deep as orjson reads (1,024 levels). A record of another kind ends up
inside a rollout record — an observation bundle one level down, a raw capture line three — so it
gets the room it will have there: whatever validates here can be embedded, projected and written
by every command of this package, and read back. Numbers have no limit of their own: an integer
of any size Python converts stays an integer, and a number Python cannot hold is kept as its text
(`NumberText`), so no reader of this package ever refuses or changes one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

__all__ = [
    "EMBEDDING",
    "MAX_DEPTH",
    "ORJSON_WRITES",
    "depth_beyond",
    "fits_orjson",
    "max_depth",
    "nests_within",
    "value_problem",
]

MAX_DEPTH = 1024
"""Levels of arrays and objects a rollout record may nest (as many as orjson reads)."""

EMBEDDING = {
    "rollout": 0,
    "bundle": 1,
    "trajectory": 1,
    "model_call_capture": 1,
    "agent_outcome": 1,
    # rollout -> ng_model_call_capture -> calls -> the call that a capture line becomes
    "capture_exchange": 3,
}
"""How many levels down a rollout record holds a record of each kind."""


def max_depth(kind: str | None) -> int:
    """The nesting a record of ``kind`` may have (a record of unknown kind is held to a rollout's)."""
    return MAX_DEPTH - EMBEDDING.get(kind or "rollout", 0)


Path = tuple[str | int, ...]


def depth_beyond(value: Any, limit: int) -> Path | None:
    """The path of the first array or object nested more than ``limit`` levels deep, or None.

    Iterative, so a value of any depth is measured without exhausting the interpreter's stack, and
    linear in the size of the value: a path is kept as a link to its parent's, and spelt out only for
    the place reported.
    """
    for item, level, link in _walk(value):
        if level > limit and isinstance(item, (dict, list)):
            return _spelt(link)
    return None


# A path as a chain of (parent link, last segment) pairs: one pair per value walked, whatever its depth.
_Link = tuple[Any, str | int] | None


def _walk(value: Any) -> Iterator[tuple[Any, int, _Link]]:
    """Every value inside ``value``, itself included, depth first, with its level and the link to its path.

    A container's members are taken on only when the next value is asked for, so a caller that stops
    at a container never pays for what it holds."""
    stack: list[tuple[Any, int, _Link]] = [(value, 1, None)]
    while stack:
        entry = stack.pop()
        yield entry
        item, level, link = entry
        if isinstance(item, dict):
            stack.extend((child, level + 1, (link, key)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, level + 1, (link, index)) for index, child in enumerate(item))


def _spelt(link: _Link) -> Path:
    segments: list[str | int] = []
    while link is not None:
        link, segment = link
        segments.append(segment)
    return tuple(reversed(segments))


# orjson writes at most this many levels, string keys only, and integers within 64 bits: a value it
# writes has none of the problems below.
ORJSON_WRITES = 254
"""Levels of nesting orjson writes: a value it writes nests no deeper."""


def fits_orjson(value: Any) -> bool:
    """Whether orjson writes ``value``: proof, in compiled code, that it nests at most `ORJSON_WRITES` levels."""
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False
    return True


def nests_within(value: Any, levels: int) -> bool:
    """Whether ``value`` nests no deeper than ``levels`` levels (at most `ORJSON_WRITES` checks in compiled code)."""
    if levels >= ORJSON_WRITES and fits_orjson(value):
        return True
    return depth_beyond(value, levels) is None


# Python refuses to write an integer of more digits than this as text (sys.int_max_str_digits).
_MAX_INT_DIGITS = 4300


def value_problem(value: Any, limit: int) -> tuple[Path, str] | None:
    """Why a Python value handed to the library is not a JSON value this package can take, or None.

    Values read from JSON text by this package never have such a problem. A caller's own value may:
    nesting beyond ``limit``, a key that is not a string, or an integer too long to write as text.
    """
    if limit >= ORJSON_WRITES and fits_orjson(value):
        return None  # the common case, proven in one pass of compiled code
    deeper = f"nesting is deeper than the {limit} levels a record of this kind may have"
    for item, level, link in _walk(value):
        if isinstance(item, dict):
            if level > limit:
                return _spelt(link), deeper
            for key in item:
                if not isinstance(key, str):
                    return _spelt(link), f"an object key must be a string, not {type(key).__name__}"
        elif isinstance(item, list):
            if level > limit:
                return _spelt(link), deeper
        elif isinstance(item, int) and item.bit_length() > 3 * _MAX_INT_DIGITS and not _writable(item):
            return (
                _spelt(link),
                f"an integer of more than {_MAX_INT_DIGITS:,} digits; read from JSON text it would be NumberText",
            )
    return None


def _writable(integer: int) -> bool:
    try:
        return len(str(integer).lstrip("-")) <= _MAX_INT_DIGITS
    except ValueError:  # longer than Python will write
        return False
