"""Values nested as deep as the readers allow, made safe for code that recurses once per level of nesting.

The readers take 1,024 levels (`_limits.MAX_DEPTH`). Python's `repr` and `str` of a list or a dict,
and every library that quotes a value in a message through them (jsonschema builds each error's
message with `repr` of the instance as it finds the error), spend one level of the interpreter's
recursion per level of nesting: on 3.10 and 3.11 out of the 1,000 levels of `sys.getrecursionlimit`
that the caller's own frames share, on 3.12 out of a fixed C budget of 1,500 that no setting
raises. So no value of unknown depth reaches them: `python_repr` writes exactly what `repr` writes,
with an explicit stack, and `repr_safe` gives a view of a value in which `repr` recurses at most
`REPR_LEVELS` levels whatever the value's depth, because every container that deep writes itself
with `python_repr`.
"""

from __future__ import annotations

from typing import Any

from gym_contract._json_writing import SHORT_INT_BITS, integer_text, nested_text
from gym_contract._limits import ORJSON_WRITES, nests_within
from gym_contract._values import NumberText

__all__ = ["REPR_LEVELS", "exact_repr", "python_repr", "python_str", "repr_safe", "written_iteratively"]

REPR_LEVELS = ORJSON_WRITES
"""Levels of nesting `repr` may recurse through in a `repr_safe` view: as many as orjson writes, so
that a value orjson writes is its own view."""


def python_repr(value: Any) -> str:
    """``repr(value)`` for a JSON value, at any depth, and never raising: an integer too long for
    Python to write as text (more than `sys.int_max_str_digits` digits) is written in full anyway."""
    return nested_text(
        value,
        is_object=_repr_as_dict,
        is_array=_repr_as_list,
        leaf=_repr_leaf,
        string=str.__repr__,
        key_text=_repr_key,
    )


def _repr_key(key: Any) -> str:
    # A JSON object's keys are strings: written directly, not through a layout of their own.
    return str.__repr__(key) if type(key) is str else python_repr(key)


def _repr_as_dict(value: Any) -> bool:
    return isinstance(value, dict) and type(value).__repr__ in (dict.__repr__, _ReprDict.__repr__)


def _repr_as_list(value: Any) -> bool:
    return isinstance(value, list) and type(value).__repr__ in (list.__repr__, _ReprList.__repr__)


def _repr_leaf(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return integer_text(value)
    return repr(value)  # not a JSON value either: whatever it says of itself


def exact_repr(value: Any) -> str:
    """`python_repr`, except that a number Python cannot hold (`NumberText`) is written whole, not shortened
    for a message: text that keeps apart any two values it is given, for an export or an identity."""
    return nested_text(
        value,
        is_object=_repr_as_dict,
        is_array=_repr_as_list,
        leaf=_exact_leaf,
        string=str.__repr__,
        key_text=_exact_key,
    )


def _exact_key(key: Any) -> str:
    return str.__repr__(key) if type(key) is str else exact_repr(key)


def _exact_leaf(value: Any) -> str:
    return value.text if isinstance(value, NumberText) else _repr_leaf(value)


def python_str(value: Any) -> str:
    """``str(value)`` for a JSON value, at any depth and never raising (see `python_repr`)."""
    return value if isinstance(value, str) else python_repr(value)


class _ReprDict(dict[str, Any]):
    """An object of a `repr_safe` view: the same members, written by `python_repr`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return python_repr(self)


class _ReprList(list[Any]):
    """An array of a `repr_safe` view: the same items, written by `python_repr`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return python_repr(self)


class _ReprInt(int):
    """An integer too long for Python to write as text, which `repr` and `str` write all the same."""

    def __repr__(self) -> str:
        return integer_text(self)

    __str__ = __repr__


def written_iteratively(value: Any) -> Any:
    """``value``, or an equal copy of it (of a subclass of its type) that `repr` and `str` write without
    recursing and without raising: a shallow copy of an array or an object, written with `python_repr`,
    or an integer too long for Python to write."""
    if isinstance(value, dict):
        return _ReprDict(value)
    if isinstance(value, list):
        return _ReprList(value)
    if type(value) is int and value.bit_length() > SHORT_INT_BITS:
        return _ReprInt(value)
    return value


def repr_safe(value: Any) -> Any:
    """``value``, or an equal copy of it in which `repr` recurses no more than `REPR_LEVELS` levels.

    Every container nested a multiple of `REPR_LEVELS` levels deep is, in the copy, a dict or list
    of a subclass that writes itself with `python_repr`: the same type to `isinstance`, the same
    members, the same equality and the same `repr` text, so code that judges the copy (jsonschema)
    judges and words it exactly as it would the value. A value that nests no deeper than
    `REPR_LEVELS` is returned as it is. The copy is made with an explicit stack.
    """
    if not isinstance(value, (dict, list)) or nests_within(value, REPR_LEVELS):
        return value
    root: list[Any] = [None]
    # (value to copy, the container its copy goes into, the key or index there, its level)
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        item, parent, slot, level = stack.pop()
        if isinstance(item, dict):
            copy: Any = _ReprDict() if level % REPR_LEVELS == 0 and level else {}
            for key, child in item.items():
                copy[key] = None
                stack.append((child, copy, key, level + 1))
        elif isinstance(item, list):
            copy = _ReprList() if level % REPR_LEVELS == 0 and level else []
            copy.extend([None] * len(item))
            stack.extend((child, copy, index, level + 1) for index, child in enumerate(item))
        else:
            copy = item
        parent[slot] = copy
    return root[0]
