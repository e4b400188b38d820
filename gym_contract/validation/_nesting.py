"""How deep a line nests, shown with msgspec's own budget, before the fast path takes its decoding as a check.

msgspec spends a unit of a budget per level of nesting it reads and raises when the budget runs
out; what bounds that budget differs from one Python to the next (`depth_checked`). On 3.12 and
3.13 lines are shown a batch at a time from the bottom of a padding that leaves exactly the room
the package allows (`measure_ahead`), and a rollout is decoded there once, not read twice.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

import msgspec

from gym_contract._limits import EMBEDDING, max_depth


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
# shape), with the proof's answer if it was told, until `skeleton` takes them.
_DECODED_AHEAD: dict[int, tuple[Any, bool | None]] = {}


def measures_ahead() -> bool:
    """Whether lines are worth measuring ahead here (`measure_ahead`): decoding alone does not bound their nesting."""
    return _COUNTED_BUDGET


def measure_ahead(
    lines: list[bytes],
    rollouts: msgspec.json.Decoder[Any] | None = None,
    kept: Callable[[bytes, Any], bool] | None = None,
) -> None:
    """Show which of ``lines`` nest no deeper than any kind may, so that `depth_checked` takes them unmeasured.

    How much of msgspec's budget is left depends on the interpreter and on how deep the caller's
    stack is. Measuring it for each line alone costs, on Python 3.13, a decoding thousands of
    levels deep per line (`nests_within`). Here the budget is spent once for the whole batch: a
    callback called from the bottom of ``padding`` levels of nested tuples, which `isinstance`
    descends spending a unit of the same budget per level (`_padded`), checks with two probes that
    exactly `_SHALLOWEST` levels are left — that many decode and one more do not — and then reads
    each line, as a rollout of the last shape or as raw JSON, from the same place: a line read
    through nests no deeper. A rollout decoded there is asked ``kept`` (what else the fast path
    proves of it: that it is whole) at once, while the line and its Structs are still in the
    processor's cache: told after the batch, on Python 3.13, the proof cost about 30 % more. The
    padding is measured again when the room changed. Only where the budget is a count the
    interpreter keeps (`_COUNTED_BUDGET`): before 3.12 a probe deeper than the C stack allows would
    not raise but crash.
    """
    _AHEAD.clear()
    _DECODED_AHEAD.clear()
    if not lines or not _COUNTED_BUDGET:
        return
    for line, shown in zip(lines, _measured(lines, rollouts, kept) or (), strict=False):
        if shown is not _NOT_SHOWN:
            _AHEAD[id(line)] = line
            if shown is not _SHOWN:
                _DECODED_AHEAD[id(line)] = shown


def _measured(
    lines: list[bytes], rollouts: msgspec.json.Decoder[Any] | None, kept: Callable[[bytes, Any], bool] | None = None
) -> list[Any] | None:
    """What `_Bottom` finds of each line, under the padding that leaves it `_SHALLOWEST` levels of room;
    None when no padding does (then no line is shown)."""
    for _ in range(3):
        padding = _BOTTOM_PADDING[0]
        bottom = _Bottom(lines, rollouts, kept)
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

    def __init__(
        self, lines: list[bytes], rollouts: msgspec.json.Decoder[Any] | None, kept: Callable[[bytes, Any], bool] | None
    ) -> None:
        self.lines = lines
        self.rollouts = rollouts
        self.kept = kept
        # Per line, whether it nests at most `_SHALLOWEST` levels: its Structs (with ``kept``'s answer, if
        # asked), `_SHOWN` or `_NOT_SHOWN`.
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
                else:
                    structs = (structs, None if self.kept is None else _proven(self.kept, line, structs))
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


def _proven(kept: Callable[[bytes, Any], bool], line: bytes, structs: Any) -> bool | None:
    """Whether ``kept`` holds of a line just decoded, told while its Structs are still in the cache; None if
    writing them back ran out of room here."""
    try:
        return kept(line, structs)
    except RecursionError:
        return None


def decoded_ahead(data: bytes) -> tuple[Any, bool | None] | None:
    """The Structs ``data`` was decoded into as a rollout while it was measured ahead, and what ``kept`` said of
    them (None: not told), taken; None if it was not decoded ahead."""
    return _DECODED_AHEAD.pop(id(data), None)
