"""The package's one limit on the JSON it reads — nesting depth — and the checks that enforce it.

A rollout record may nest as deep as orjson reads (1,024 levels). A record of another kind ends up
inside a rollout record — an observation bundle one level down, a raw capture line three — so it
gets the room it will have there: whatever validates here can be embedded, projected and written
by every command of this package, and read back. Numbers have no limit of their own: an integer
of any size Python converts stays an integer, and a number Python cannot hold is kept as its text
(`NumberText`), so no reader of this package ever refuses or changes one.
"""

from __future__ import annotations

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

    Iterative, so a value of any depth is measured without exhausting the interpreter's stack.
    """
    stack: list[tuple[Any, int, Path]] = [(value, 1, ())]
    while stack:
        item, level, path = stack.pop()
        if isinstance(item, dict):
            if level > limit:
                return path
            stack.extend((child, level + 1, (*path, key)) for key, child in item.items())
        elif isinstance(item, list):
            if level > limit:
                return path
            stack.extend((child, level + 1, (*path, index)) for index, child in enumerate(item))
    return None


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
    stack: list[tuple[Any, int, Path]] = [(value, 1, ())]
    while stack:
        item, level, path = stack.pop()
        if isinstance(item, dict):
            if level > limit:
                return path, f"nesting is deeper than the {limit} levels a record of this kind may have"
            for key, child in item.items():
                if not isinstance(key, str):
                    return path, f"an object key must be a string, not {type(key).__name__}"
                stack.append((child, level + 1, (*path, key)))
        elif isinstance(item, list):
            if level > limit:
                return path, f"nesting is deeper than the {limit} levels a record of this kind may have"
            stack.extend((child, level + 1, (*path, index)) for index, child in enumerate(item))
        elif isinstance(item, int) and item.bit_length() > 3 * _MAX_INT_DIGITS and not _writable(item):
            return (
                path,
                f"an integer of more than {_MAX_INT_DIGITS:,} digits; read from JSON text it would be NumberText",
            )
    return None


def _writable(integer: int) -> bool:
    try:
        return len(str(integer).lstrip("-")) <= _MAX_INT_DIGITS
    except ValueError:  # longer than Python will write
        return False
