# generated from schemas/v1/trajectory.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from typing import Annotated, Any, Literal
from pydantic import ConfigDict, Field
from gym_contract._model_base import ContractModel
from . import (
    agent_invocation_schema,
    common_schema,
    model_call_ref_schema,
    observation_gap_schema,
)


class TrajectoryTokenStats(ContractModel):
    """
    Token counts of one model call; null means unknown, never zero.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    prompt_tokens: Annotated[int | None, Field(ge=0)] = None
    """
    Input tokens, cached ones included.
    """
    completion_tokens: Annotated[int | None, Field(ge=0)] = None
    """
    Output tokens.
    """
    reasoning_tokens: Annotated[int | None, Field(ge=0)] = None
    """
    Reasoning tokens, when the dialect reports them.
    """
    total_tokens: Annotated[int | None, Field(ge=0)] = None
    """
    Total tokens as reported, else prompt + completion.
    """
    cached_tokens: Annotated[int | None, Field(ge=0)] = None
    """
    Input tokens served from the prompt cache.
    """


class TrajectoryResponseMetadata(ContractModel):
    """
    Response metadata of one model call.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    response_id: str | None = None
    """
    Protocol response id.
    """
    model_ref: common_schema.ModelServerRef | None = None
    """
    Model server that served the call.
    """
    model: str | None = None
    """
    Model name from the response, else the request.
    """
    dialect: str | None = None
    """
    API dialect: `responses`, `chat` or `messages` (not an enum).
    """
    status_code: int | None = None
    """
    HTTP status code.
    """
    response_status: str | None = None
    """
    Responses lifecycle status, e.g. `completed`, `incomplete`, `failed`.
    """
    finish_reason: str | None = None
    """
    Dialect-specific finish or stop reason.
    """
    error_category: str | None = None
    """
    Capture error category, e.g. `rate_limit`, `stream_truncated`.
    """
    latency_ttft_ms: Annotated[float | None, Field(ge=0.0)] = None
    """
    Time to first body chunk in milliseconds.
    """


class TrajectoryModelCall(ContractModel):
    """
    One captured model call with its payloads.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    model_call_id: str | None = None
    """
    Capture id of the call.
    """
    started_at: float | None = None
    """
    Start, UTC Unix time in seconds.
    """
    completed_at: float | None = None
    """
    Completion, UTC Unix time in seconds.
    """
    duration_ms: Annotated[float | None, Field(ge=0.0)] = None
    """
    Total latency in milliseconds.
    """
    request: Any = None
    """
    Raw request payload (an object), or the raw request text.
    """
    response: Any = None
    """
    Raw response payload (an object), or the raw response text.
    """
    response_metadata: Annotated[
        TrajectoryResponseMetadata, Field(validate_default=True)
    ] = {}
    """
    Response metadata; all null when unknown.
    """
    token_stats: Annotated[TrajectoryTokenStats, Field(validate_default=True)] = {}
    """
    Token counts; all null when unknown.
    """


class TrajectoryTurn(ContractModel):
    """
    One semantic turn of an invocation.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    invocation_id: str
    """
    Invocation the turn belongs to.
    """
    task_id: str
    """
    Task id; equals the record's.
    """
    rollout_id: str
    """
    Rollout id; equals the record's.
    """
    turn_no: Annotated[int, Field(ge=1)]
    """
    Turn number within the invocation, from 1.
    """
    timestamp: float
    """
    When the turn started, UTC Unix time in seconds.
    """
    question: Any = None
    """
    Input of the turn.
    """
    answer: Any = None
    """
    Answer of the turn.
    """
    reasoning_content: Any = None
    """
    Reasoning of the turn.
    """
    resolved: bool | None = None
    """
    Whether the verifier judged the task resolved (set on the last turn).
    """
    step_count: Annotated[int, Field(ge=0)]
    """
    Producer-reported cumulative step count within the invocation.
    """
    model_calls: Annotated[
        list[model_call_ref_schema.ModelCallRef], Field(validate_default=True)
    ] = []
    """
    Model calls made in the turn.
    """


class TrajectoryToolCall(ContractModel):
    """
    A tool call observation with its model-visible output.
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
    output: Any = None
    """
    Model-visible output of the call, as the conversation carried it.
    """


class TrajectoryRecord(ContractModel):
    """
    The `ng_trajectory` attachment: one rollout's evidence joined for training.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    schema_version: Literal["1.0"] = "1.0"
    """
    Version of the trajectory layout.
    """
    task_id: str
    """
    Canonical task id.
    """
    rollout_id: str
    """
    Canonical rollout id.
    """
    invocations: Annotated[
        list[agent_invocation_schema.AgentInvocation], Field(validate_default=True)
    ] = []
    """
    Agent and subagent invocations.
    """
    turns: Annotated[list[TrajectoryTurn], Field(validate_default=True)] = []
    """
    Semantic turns, sorted by (timestamp, invocation_id, turn_no).
    """
    model_calls: Annotated[list[TrajectoryModelCall], Field(validate_default=True)] = []
    """
    Captured model calls.
    """
    tool_calls: Annotated[list[TrajectoryToolCall], Field(validate_default=True)] = []
    """
    Tool calls with timing and output.
    """
    gaps: Annotated[
        list[observation_gap_schema.ObservationGap], Field(validate_default=True)
    ] = []
    """
    Evidence that could not be observed or joined.
    """
