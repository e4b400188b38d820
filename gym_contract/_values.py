"""Typed reads of JSON values of unknown shape: a value of the wrong type reads as absent, never raises.

Every rule, reader and projection step reads fields through these functions, so that any JSON value
in any field — an object where an id was expected, a list where a kind was, a number no double can
hold — is simply not the thing asked for. The schema check reports the wrong type; everything else
goes on with what can still be read.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

__all__ = [
    "NumberText",
    "boolean",
    "count",
    "finite",
    "first_text",
    "indexed_objects",
    "integer",
    "json_type",
    "nonempty",
    "number",
    "obj",
    "objects",
    "preview",
    "text",
]


class NumberText:
    """A JSON number that Python cannot hold as an int or a finite float, kept exactly as written.

    JSON sets no range on numbers; a reader may. An integer of more digits than Python converts, or
    a number beyond a double's range, is kept as its text where the contract treats a value as
    opaque, and written back unchanged. Where the contract wants a number, it is not one.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        shown = (
            self.text if len(self.text) <= 40 else f"{self.text[:20]}…{self.text[-8:]} ({len(self.text)} characters)"
        )
        return shown

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NumberText) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("NumberText", self.text))


def text(value: Any) -> str | None:
    """A string, or None."""
    return value if isinstance(value, str) else None


def nonempty(value: Any) -> str | None:
    """A non-empty string, or None: the reference counts an empty id as a missing one."""
    return value if isinstance(value, str) and value else None


def first_text(*values: Any) -> str | None:
    """The first of ``values`` that is a string."""
    return next((value for value in values if isinstance(value, str)), None)


def integer(value: Any) -> int | None:
    """An integer (never a bool, which Python counts as one), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def count(value: Any) -> int | None:
    """A non-negative integer, or None."""
    number_ = integer(value)
    return number_ if number_ is not None and number_ >= 0 else None


def number(value: Any) -> float | None:
    """A number as a float, finite or not (rules report the non-finite ones), or None.

    An integer too large for a float reads as infinite, which is what it is to any comparison here.
    """
    if isinstance(value, float):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    return None


def finite(value: Any) -> float | None:
    """A finite number as a float, or None."""
    number_ = number(value)
    return number_ if number_ is not None and math.isfinite(number_) else None


def boolean(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def obj(value: Any) -> dict[str, Any] | None:
    """An object, or None."""
    return value if isinstance(value, dict) else None


def objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a list, skipping anything else; empty when ``value`` is not a list."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def indexed_objects(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """The objects of a list with their positions; anything else is the schema's business."""
    if not isinstance(value, list):
        return []
    return [(index, item) for index, item in enumerate(value) if isinstance(item, dict)]


_JSON_TYPE_NAMES: dict[type, str] = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "true/false",
    int: "number",
    float: "number",
    NumberText: "number",
}
_ARTICLES = {"object": "an object", "array": "an array", "string": "a string", "number": "a number"}


def json_type(value: Any, *, article: bool = False) -> str:
    """What a value is in JSON's words: "array", "string", … (with ``article``: "an array", "a string", …)."""
    if value is None:
        name = "null"
    else:
        name = _JSON_TYPE_NAMES.get(type(value)) or next(
            (name for kind, name in _JSON_TYPE_NAMES.items() if isinstance(value, kind)), type(value).__name__
        )
    return _ARTICLES.get(name, name) if article else name


PREVIEW_CHARS = 80


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A short rendering of any value for a message: bounded in length and work, whatever its size or depth.

    Strings, numbers, true/false and null read as Python writes them (so messages quote ids as
    ``'root'``); containers are rendered breadth-limited and depth-limited, and cut with an ellipsis.
    """
    out: list[str] = []
    budget = [limit + 1]

    def emit(piece: str) -> bool:
        out.append(piece[: budget[0]])
        budget[0] -= len(piece)
        return budget[0] > 0

    # An explicit stack of pieces still to render: either text or a value; depth cannot exhaust it.
    stack: list[Any] = [("value", value)]
    while stack and budget[0] > 0:
        tag, item = stack.pop()
        if tag == "text":
            emit(item)
            continue
        if isinstance(item, dict):
            entries = list(itertools.islice(item.items(), limit // 2 + 1))
            pending: list[Any] = [("text", "{")]
            for position, (key, child) in enumerate(entries):
                if position:
                    pending.append(("text", ", "))
                pending.append(("text", _scalar(key, limit) + ": "))
                pending.append(("value", child))
            pending.append(("text", "}"))
            stack.extend(reversed(pending))
        elif isinstance(item, list):
            pending = [("text", "[")]
            for position, child in enumerate(item[: limit // 2 + 1]):
                if position:
                    pending.append(("text", ", "))
                pending.append(("value", child))
            pending.append(("text", "]"))
            stack.extend(reversed(pending))
        else:
            emit(_scalar(item, limit))
    rendered = "".join(out)
    return rendered if len(rendered) <= limit and not stack else rendered[: limit - 1] + "…"


def _scalar(value: Any, limit: int) -> str:
    if isinstance(value, str):
        return repr(value[: limit + 1])
    if isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > 4 * limit:
            # A huge integer: its digits would not fit anyway, and Python refuses to write very long ones.
            digits = int(value.bit_length() * math.log10(2)) + 1
            return f"<an integer of about {digits} digits>"
        return repr(value)
    if isinstance(value, (float, bool, NumberText)) or value is None:
        return repr(value)
    if isinstance(value, (dict, list)):
        return "…"
    return f"<{type(value).__name__}>"
