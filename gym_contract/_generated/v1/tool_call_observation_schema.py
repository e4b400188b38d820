# generated from schemas/v1/tool_call_observation.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from typing import Annotated, Literal
from pydantic import ConfigDict, Field
from gym_contract._model_base import ContractModel


class ToolCallObservation(ContractModel):
    """
    Timing and outcome of one tool call at an agent-owned boundary.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["tool_call"] = "tool_call"
    """
    Record discriminator.
    """
    invocation_id: str
    """
    Invocation whose conversation made the call.
    """
    tool_call_id: str
    """
    Tool call id (the `call_id` of the `function_call`).
    """
    sandbox_id: str | None = None
    """
    Enclosing sandbox instance, shared by concurrent calls; not per-call resource attribution.
    """
    tool_name: str | None = None
    """
    Tool name.
    """
    started_at: float | None = None
    """
    Start, UTC Unix time in seconds.
    """
    completed_at: float | None = None
    """
    Completion, UTC Unix time in seconds; not earlier than `started_at`.
    """
    duration_ms: Annotated[float | None, Field(ge=0.0)] = None
    """
    Duration in milliseconds.
    """
    timing_source: Literal["executor", "artifact", "harness"] | None = None
    """
    Where the timing was measured.
    """
    status: Literal[
        "completed", "failed", "timeout", "cancelled", "incomplete", "unknown"
    ] = "unknown"
    """
    Outcome of the call.
    """
    error_type: str | None = None
    """
    Error type, e.g. `http_500`.
    """
