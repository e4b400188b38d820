"""The names the contract gives its attachments, record kinds and token counts, defined once."""

from __future__ import annotations

from typing import Any

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
