# generated from schemas/v1/model_call_record.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from typing import Annotated, Any
from pydantic import MISSING
from gym_contract._model_base import ContractModel
from pydantic import ConfigDict, Field
from . import common_schema, observation_gap_schema


class CapturedToolCall(ContractModel):
    """
    A tool call read from a captured response. Each value is what the response held, of whatever JSON type it was: a record derived here has string or null `call_id` and `name` and object `arguments`, and one derived by the reference implementation may hold other types (a JSON array parsed from the arguments text, a numeric id).
    """

    model_config = ConfigDict(
        extra="allow",
    )
    call_id: Any = None
    """
    Tool call id: Responses `call_id` (else `id`), chat `id`, Anthropic `id`.
    """
    name: Any = None
    """
    Tool name.
    """
    arguments: Any | MISSING = MISSING
    """
    Arguments: an object as given, text parsed as JSON; derived here, text that is not a JSON object is kept as `{"_raw": text}`.
    """


class CaptureMetrics(ContractModel):
    """
    Sums over a rollout's captured calls; a sum is null only when every call's value is null.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    tokens_in: Annotated[int | None, Field(ge=0)] = None
    """
    Sum of known input tokens.
    """
    tokens_out: Annotated[int | None, Field(ge=0)] = None
    """
    Sum of known output tokens.
    """
    tokens_reasoning: Annotated[int | None, Field(ge=0)] = None
    """
    Sum of known reasoning tokens.
    """
    tokens_total: Annotated[int | None, Field(ge=0)] = None
    """
    Sum of known total tokens.
    """
    cached_tokens: Annotated[int | None, Field(ge=0)] = None
    """
    Sum of known cached tokens.
    """
    latency_total_ms: Annotated[float | None, Field(ge=0.0)] = None
    """
    Sum of known latencies in milliseconds.
    """
    num_calls: Annotated[int, Field(ge=0)]
    """
    Number of captured calls.
    """


class ModelCallRecord(ContractModel):
    """
    One captured model call, derived from a raw capture exchange.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    model_call_id: str | None = None
    """
    Capture id of the call.
    """
    response_id: str | None = None
    """
    `response.id` when it is a string.
    """
    call_index: Annotated[int, Field(ge=0)]
    """
    Durable append position in the capture file (not causal order); keeps holes left by damaged lines.
    """
    model_ref: common_schema.ModelServerRef | None = None
    """
    Model server that served the call.
    """
    model: str | None = None
    """
    `response.model`, else `request.model`.
    """
    dialect: str | None = None
    """
    `responses`, `chat` or `messages`.
    """
    status_code: int | None = None
    """
    HTTP status code.
    """
    response_status: str | None = None
    """
    `response.status` when it is a string.
    """
    finish_reason: str | None = None
    """
    Anthropic `stop_reason`, chat `choices[0].finish_reason`, or Responses `incomplete_details.reason`.
    """
    started_at: float | None = None
    """
    Start, UTC Unix time in seconds.
    """
    completed_at: float | None = None
    """
    Completion, UTC Unix time in seconds.
    """
    tokens_in: Annotated[int | None, Field(ge=0)] = None
    """
    Input tokens, cache reads and writes folded in for Anthropic.
    """
    tokens_out: Annotated[int | None, Field(ge=0)] = None
    """
    Output tokens.
    """
    tokens_reasoning: Annotated[int | None, Field(ge=0)] = None
    """
    Reasoning tokens; null when the dialect does not report them.
    """
    tokens_total: Annotated[int | None, Field(ge=0)] = None
    """
    Total tokens as reported, else in + out.
    """
    request: dict[str, Any] | None = None
    """
    Parsed request payload.
    """
    response: dict[str, Any] | None = None
    """
    Parsed or reassembled response payload.
    """
    request_raw: str | None = None
    """
    Raw request body when it is not a JSON object.
    """
    response_raw: str | None = None
    """
    Raw response body when streamed or unparseable.
    """
    tool_calls: Annotated[list[CapturedToolCall], Field(validate_default=True)] = []
    """
    Tool calls the response requested.
    """
    reasoning_content: str | None = None
    """
    Reasoning text joined from the response.
    """
    cache_hit: bool | None = None
    """
    Whether any input tokens came from the cache.
    """
    cached_tokens: Annotated[int | None, Field(ge=0)] = None
    """
    Input tokens served from the cache.
    """
    cache_creation_tokens: Annotated[int | None, Field(ge=0)] = None
    """
    Anthropic cache-creation input tokens.
    """
    error_category: str | None = None
    """
    Capture error category.
    """
    latency_total_ms: Annotated[float | None, Field(ge=0.0)] = None
    """
    Total latency in milliseconds.
    """
    latency_ttft_ms: Annotated[float | None, Field(ge=0.0)] = None
    """
    Time to first body chunk in milliseconds.
    """


class ModelCallCapture(ContractModel):
    """
    The `ng_model_call_capture` attachment of a rollout record.
    """

    model_config = ConfigDict(
        extra="allow",
    )
    rollout_id: str
    """
    Rollout id the capture is keyed by.
    """
    metrics: CaptureMetrics
    """
    Aggregate metrics over the calls.
    """
    calls: list[ModelCallRecord]
    """
    Captured calls; payload keys removed once `ng_trajectory` owns them.
    """
    gaps: Annotated[
        list[observation_gap_schema.ObservationGap], Field(validate_default=True)
    ] = []
    """
    Capture gaps; present only when non-empty.
    """
