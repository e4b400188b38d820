"""The recorder: a harness that runs in Python records its run as it happens and gets the `Observed` producers return.

A `Recorder` is told of invocations (the root and its subagents, each with the tool call that
spawned it), model calls (by `model_call_id`, or model server and response id), tool calls (start,
end, status, error), compactions, sandboxes and gaps, from any thread or asyncio task; `finish`
closes what is still open and returns the bundle, the outcome and the run summary. A call the
evidence cannot hold becomes a `recorder_misuse` gap (or a more precise one) and a
`RecorderWarning`; a ``Recorder(strict=True)`` raises `RecorderError` instead.
"""

from __future__ import annotations

from gym_contract.recorder._handles import Compaction, Invocation, ToolCall
from gym_contract.recorder._recorder import CURRENT, Recorder
from gym_contract.recorder._state import Clock, MonotonicClock, RecorderError, RecorderWarning

__all__ = [
    "CURRENT",
    "Clock",
    "Compaction",
    "Invocation",
    "MonotonicClock",
    "Recorder",
    "RecorderError",
    "RecorderWarning",
    "ToolCall",
]
