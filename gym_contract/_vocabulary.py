"""The names the contract gives its attachments, record kinds, failure kinds and token counts, defined once."""

from __future__ import annotations

from typing import Any, Final

# Keys under which a rollout record carries the contract's attachments.
OBSERVATIONS = "ng_agent_observations"
CAPTURE = "ng_model_call_capture"
TRAJECTORY = "ng_trajectory"
OUTCOME = "ng_agent_outcome"

ROLLOUT_ATTACHMENTS = {
    OBSERVATIONS: "bundle",
    CAPTURE: "model_call_capture",
    TRAJECTORY: "trajectory",
    OUTCOME: "agent_outcome",
}
"""Attachment key of a rollout record -> kind of record it holds."""

SCHEMA_OF_KIND = {
    "bundle": "agent_observations",
    "trajectory": "trajectory",
    "model_call_capture": "model_call_capture",
    "capture_exchange": "capture_exchange",
    "agent_outcome": "agent_outcome",
}
"""Kind of record -> name of its bundled schema."""

CONTRACT_VERSION = "1.0"
"""Version of the data contract the bundled schemas describe (also `gym_contract.schemas.CONTRACT_VERSION`)."""

KINDS: tuple[str, ...] = (*SCHEMA_OF_KIND, "rollout")
"""Every kind of record the package checks: each schema's kind, and the rollout record that carries them."""

CRITERIA: tuple[str, ...] = ("C1", "C2", "C3", "C4", "C5", "C6", "C7")
"""The capability criteria a rollout's evidence is rated on (see `gym_contract.coverage`)."""

_ROLLOUT_MARKERS = (
    *ROLLOUT_ATTACHMENTS,
    "_ng_rollout_id",
    "_ng_task_index",
    "_ng_rollout_index",
    "responses_create_params",
)


def detect_kind(obj: Any) -> str | None:
    """The kind of a record told from its shape, or None when nothing fits."""
    if not isinstance(obj, dict):
        return None
    if any(key in obj for key in _ROLLOUT_MARKERS):
        return "rollout"
    if "source" in obj and ("records" in obj or "gaps" in obj):
        return "bundle"
    if "task_id" in obj and "rollout_id" in obj:
        return "trajectory"
    if "rollout_id" in obj and "calls" in obj:
        return "model_call_capture"
    if "harness" in obj and "response_status" in obj:
        return "agent_outcome"
    if "model_call_id" in obj and any(key in obj for key in ("dialect", "latency_ms", "request", "response")):
        return "capture_exchange"
    return None


# Failure kinds, in the order of the schema's enum.
MODEL_CONTEXT_LIMIT: Final = "model_context_limit"
MODEL_OUTPUT_LIMIT: Final = "model_output_limit"
MODEL_REQUEST_ERROR: Final = "model_request_error"
MODEL_RATE_LIMITED: Final = "model_rate_limited"
MODEL_SERVER_ERROR: Final = "model_server_error"
MODEL_TRANSPORT_ERROR: Final = "model_transport_error"
MODEL_AUTH_ERROR: Final = "model_auth_error"
CONTENT_FILTER: Final = "content_filter"
AGENT_MAX_TURNS: Final = "agent_max_turns"
AGENT_ABORTED: Final = "agent_aborted"
AGENT_TIMEOUT: Final = "agent_timeout"
AGENT_CRASH: Final = "agent_crash"
CLEANUP_FAILURE: Final = "cleanup_failure"
UNKNOWN_ERROR: Final = "unknown_error"
FAILURE_KINDS: Final = (
    MODEL_CONTEXT_LIMIT,
    MODEL_OUTPUT_LIMIT,
    MODEL_REQUEST_ERROR,
    MODEL_RATE_LIMITED,
    MODEL_SERVER_ERROR,
    MODEL_TRANSPORT_ERROR,
    MODEL_AUTH_ERROR,
    CONTENT_FILTER,
    AGENT_MAX_TURNS,
    AGENT_ABORTED,
    AGENT_TIMEOUT,
    AGENT_CRASH,
    CLEANUP_FAILURE,
    UNKNOWN_ERROR,
)
TRANSIENT_KINDS: Final = frozenset(
    {MODEL_RATE_LIMITED, MODEL_SERVER_ERROR, MODEL_TRANSPORT_ERROR, AGENT_TIMEOUT, AGENT_CRASH}
)
"""Kinds that say nothing about the policy and may end differently on a retry."""
INCOMPLETE_KINDS: Final = frozenset({MODEL_CONTEXT_LIMIT, MODEL_OUTPUT_LIMIT, AGENT_MAX_TURNS})
"""Kinds where the policy ran out of room: the run is incomplete and its partial work is kept."""


TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "total_tokens", "cached_tokens")
"""Token counts of a trajectory model call (`token_stats`)."""

CAPTURED_TOKEN_FIELDS = {
    "tokens_in": "prompt_tokens",
    "tokens_out": "completion_tokens",
    "tokens_reasoning": "reasoning_tokens",
    "tokens_total": "total_tokens",
    "cached_tokens": "cached_tokens",
}
"""Token counts of a captured call (`ModelCallRecord`, capture metrics) -> the trajectory's name for each."""


def token_count(value: Any) -> int | None:
    """``value`` when it is a real token count, else None (unknown).

    `type(...) is int`, not isinstance: True is an int to Python but never a count.
    """
    return value if type(value) is int and value >= 0 else None


def all_token_counts(values: list[Any]) -> bool:
    """Whether every one of ``values`` is a real token count (`token_count`), told in C: the common case."""
    return set(map(type, values)) <= {int} and min(values, default=0) >= 0
