"""What the recorder keeps while a run goes on: its clock, the checks on what a harness hands it, and the
misuse it reports."""

from __future__ import annotations

import math
import time
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from gym_contract.models import (
    AgentInvocation,
    ContextCompactionObservation,
    SandboxObservation,
    ToolCallObservation,
)

__all__ = [
    "COMPACTION_OUTCOMES",
    "INVOCATION_STATUSES",
    "SANDBOX_OUTCOMES",
    "SANDBOX_ROLES",
    "TIMING_SOURCES",
    "TOOL_STATUSES",
    "Clock",
    "MonotonicClock",
    "RecorderError",
    "RecorderWarning",
    "choice",
    "count",
    "identifier",
    "known",
    "number",
    "seconds",
    "text",
]

Clock = Callable[[], float]
"""What the recorder reads the time from: UTC Unix seconds, as a float."""


def _literals(model: Any, name: str) -> tuple[str, ...]:
    """The values a generated model's Literal field allows, so that the schema stays their one source."""
    annotation = model.model_fields[name].annotation
    arms = typing.get_args(annotation) if typing.get_origin(annotation) is not typing.Literal else (annotation,)
    return tuple(value for arm in arms for value in typing.get_args(arm) if isinstance(value, str))


INVOCATION_STATUSES: Final = _literals(AgentInvocation, "status")
TOOL_STATUSES: Final = _literals(ToolCallObservation, "status")
TIMING_SOURCES: Final = _literals(ToolCallObservation, "timing_source")
COMPACTION_OUTCOMES: Final = _literals(ContextCompactionObservation, "outcome")
SANDBOX_ROLES: Final = _literals(SandboxObservation, "role")
SANDBOX_OUTCOMES: Final = _literals(SandboxObservation, "outcome")


class RecorderError(ValueError):
    """A call the evidence cannot hold, raised by a ``Recorder(strict=True)`` instead of the gap and the warning."""


class RecorderWarning(UserWarning):
    """A call the evidence cannot hold: the recorder kept what it could and wrote a `recorder_misuse` gap."""


class MonotonicClock:
    """Wall time that never runs backwards: the wall clock read once, then a monotonic counter added to it.

    A wall clock may step back (NTP, a VM resumed); intervals measured on this clock never do, and
    every reading is still a UTC Unix time.
    """

    __slots__ = ("_counter_at_anchor", "_wall_at_anchor")

    def __init__(self) -> None:
        self._wall_at_anchor = time.time()
        self._counter_at_anchor = time.perf_counter()

    def __call__(self) -> float:
        return self._wall_at_anchor + (time.perf_counter() - self._counter_at_anchor)


# ----------------------------------------------------------------------------- checks of given values
# Each returns the value the evidence can hold, or raises _UnfitValueError with why; the recorder turns that
# into a gap and a warning (or, strict, an exception) and keeps what else the call gave.


class UnfitValueError(ValueError):
    """A value the harness gave that the evidence cannot hold; the message says which and why."""


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def identifier(value: Any, what: str) -> str:
    """An id as given: a non-empty string."""
    if isinstance(value, str) and value:
        return value
    raise UnfitValueError(f"{what} must be a non-empty string, not {_shown(value)}")


def text(value: Any, what: str) -> str | None:
    """A string, or None."""
    if value is None or isinstance(value, str):
        return value
    raise UnfitValueError(f"{what} must be a string or None, not {_shown(value)}")


def count(value: Any, what: str) -> int | None:
    """A whole number of at least 0, or None; a bool is no number."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return value
    raise UnfitValueError(f"{what} must be an integer of at least 0 or None, not {_shown(value)}")


def number(value: Any, what: str) -> float | None:
    """A finite number of at least 0, or None; a bool is no number."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    raise UnfitValueError(f"{what} must be a finite number of at least 0 or None, not {_shown(value)}")


def seconds(value: Any, what: str) -> float:
    """A moment as UTC Unix seconds: a finite number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    raise UnfitValueError(f"{what} must be a finite number of UTC Unix seconds, not {_shown(value)}")


def choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    """One of the values the contract allows for a field."""
    if isinstance(value, str) and value in allowed:
        return value
    raise UnfitValueError(f"{what} must be one of {', '.join(allowed)}, not {_shown(value)}")


def integer(value: Any, what: str) -> int | None:
    """Any whole number within 64 bits, or None (an exit code may be negative)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**64):
        return value
    raise UnfitValueError(f"{what} must be an integer within 64 bits or None, not {_shown(value)}")


# ------------------------------------------------------------------------------------------- state

Moment = tuple[float, int]
"""When something happened: its time (-inf when no clock reading was ever usable), then the order the recorder
heard of it (ties of equal times)."""


def known(moment: float) -> float | None:
    """A time as the evidence holds it: None for the -inf of a clock that never gave a usable reading."""
    return moment if math.isfinite(moment) else None


@dataclass(eq=False)
class InvocationState:
    """One invocation as recorded so far; `started` is False while only other records have named it."""

    invocation_id: str
    started: bool = False
    parent: str | None = None
    spawned_by: str | None = None
    unattributed: bool = False
    """Started under a parent while no tool call was current to have spawned it."""
    start: Moment | None = None
    end: Moment | None = None
    status: str = "unknown"
    error_type: str | None = None
    calls: list[tuple[Moment, dict[str, Any] | None]] = field(default_factory=list)
    """Model calls as (when, reference); None where the call gave nothing to reference it by."""
    children: int = 0
    closed: bool = False
    """Closed `incomplete` by `finish` while still open: final from then on."""


@dataclass(eq=False)
class ToolState:
    """One tool call as recorded so far."""

    invocation_id: str
    tool_call_id: str
    name: str | None
    sandbox_id: str | None
    timing_source: str | None
    started_at: float | None
    completed_at: float | None = None
    status: str = "unknown"
    error_type: str | None = None
    ended: bool = False
    closed: bool = False
    """Closed `incomplete` by `finish` while still open: final from then on."""


@dataclass(eq=False)
class CompactionState:
    """One compaction as recorded so far; its model calls are settled from the invocation's at the end."""

    invocation_id: str
    start: Moment
    trigger: str | None
    tokens_before: int | None
    end: Moment | None = None
    outcome: str = "unknown"
    tokens_after: int | None = None
    summary: str | None = None
    first_kept_item_id: str | None = None
    closed: bool = False
    """Closed by `finish` while still open, its outcome unknown: final from then on."""
