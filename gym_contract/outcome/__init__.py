"""Agent outcomes: classify how a harness run ended (`ng_agent_outcome`) and decide to grade, retry or exclude it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Final, Literal

from pydantic import ValidationError

from gym_contract._values import preview
from gym_contract._vocabulary import (
    AGENT_ABORTED,
    AGENT_CRASH,
    AGENT_MAX_TURNS,
    AGENT_TIMEOUT,
    CLEANUP_FAILURE,
    CONTENT_FILTER,
    FAILURE_KINDS,
    INCOMPLETE_KINDS,
    MODEL_AUTH_ERROR,
    MODEL_CONTEXT_LIMIT,
    MODEL_OUTPUT_LIMIT,
    MODEL_RATE_LIMITED,
    MODEL_REQUEST_ERROR,
    MODEL_SERVER_ERROR,
    MODEL_TRANSPORT_ERROR,
    TRANSIENT_KINDS,
    UNKNOWN_ERROR,
)
from gym_contract.diagnostics import ContractError, Diagnostic
from gym_contract.models import AgentOutcome
from gym_contract.outcome._base import MAX_ERROR_MESSAGE, ClaudeCodeError, OpenCodeError
from gym_contract.outcome._claude_code import CLAUDE_CODE_TESTED_VERSION, classify_claude_code
from gym_contract.outcome._codex import CODEX_TESTED_VERSION, classify_codex
from gym_contract.outcome._opencode import OPENCODE_TESTED_VERSION, classify_opencode
from gym_contract.validation import iter_diagnostics

__all__ = [
    "ACTIONS",
    "AGENT_ABORTED",
    "AGENT_CRASH",
    "AGENT_MAX_TURNS",
    "AGENT_TIMEOUT",
    "CLAUDE_CODE_TESTED_VERSION",
    "CLEANUP_FAILURE",
    "CODEX_TESTED_VERSION",
    "CONTENT_FILTER",
    "FAILURE_KINDS",
    "INCOMPLETE_KINDS",
    "MAX_ERROR_MESSAGE",
    "MODEL_AUTH_ERROR",
    "MODEL_CONTEXT_LIMIT",
    "MODEL_OUTPUT_LIMIT",
    "MODEL_RATE_LIMITED",
    "MODEL_REQUEST_ERROR",
    "MODEL_SERVER_ERROR",
    "MODEL_TRANSPORT_ERROR",
    "OPENCODE_TESTED_VERSION",
    "TRANSIENT_KINDS",
    "UNKNOWN_ERROR",
    "Action",
    "ClaudeCodeError",
    "Decision",
    "OpenCodeError",
    "Policy",
    "classify_claude_code",
    "classify_codex",
    "classify_opencode",
    "decide",
]

Action = Literal["grade", "retry", "exclude"]
ACTIONS: Final[tuple[Action, ...]] = ("grade", "retry", "exclude")

# Failures that are nobody's doing the policy can learn from, and that a retry is not known to fix.
_EXCLUDED: Final = {
    MODEL_AUTH_ERROR: "the provider refused the credentials or the account; not the policy's doing, not transient",
    CLEANUP_FAILURE: "the harness failed around the run, not in it; an infrastructure failure is never scored",
    CONTENT_FILTER: "a provider filter stopped the run; whether the policy or the task set it off is not established",
    AGENT_ABORTED: "the run was cancelled from outside; that says nothing about the policy",
}
_LIMITS: Final = {
    MODEL_CONTEXT_LIMIT: "the policy filled the context window",
    MODEL_OUTPUT_LIMIT: "the policy hit the output-token limit",
    AGENT_MAX_TURNS: "the policy used up its turns",
}


@dataclass(frozen=True)
class Policy:
    """What `decide` does with the outcomes that are a matter of choice."""

    max_retries: int = 2
    """Retries allowed after the first attempt for a transient failure; when used up, the rollout is excluded."""
    grade_request_errors: bool = True
    """Grade `model_request_error` (the provider rejected a request the policy shaped); exclude it when False."""

    def __post_init__(self) -> None:
        if not isinstance(self.max_retries, int) or isinstance(self.max_retries, bool) or self.max_retries < 0:
            raise ValueError(f"max_retries must be a whole number >= 0, not {preview(self.max_retries)}")
        if not isinstance(self.grade_request_errors, bool):
            raise ValueError(f"grade_request_errors must be true or false, not {preview(self.grade_request_errors)}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Policy:
        """A policy from JSON-like data; unknown keys are an error, missing ones take their defaults."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a policy is a JSON object, not {type(data).__name__}")
        known = {field.name for field in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown policy key(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**data)


@dataclass(frozen=True)
class Decision:
    """What to do with one rollout, and why."""

    action: Action
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"action": self.action, "reason": self.reason}


def decide(outcome: AgentOutcome | Mapping[str, Any], policy: Policy | None = None, *, attempt: int = 1) -> Decision:
    """Grade, retry or exclude one rollout, from its outcome alone (never from its error text).

    ``attempt`` is the 1-based number of the attempt that produced ``outcome``: a transient failure is
    retried while ``attempt <= policy.max_retries``, then excluded. A transient failure — a transient
    `failure_kind`, or any failure marked `retryable` — is never graded.

    Raises `ContractError`, carrying the diagnostics of ``iter_diagnostics(outcome, "agent_outcome")``,
    when ``outcome`` is not an `AgentOutcome` and not a valid `ng_agent_outcome`; ValueError for an
    ``attempt`` that is not a whole number of at least 1.
    """
    policy = policy if policy is not None else Policy()
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        raise ValueError(f"attempt is the 1-based number of the attempt, not {preview(attempt)}")
    if not isinstance(outcome, AgentOutcome):
        outcome = _valid_outcome(outcome)
    kind, status = outcome.failure_kind, outcome.response_status

    if kind is None:
        if status == "completed":
            return Decision("grade", "completed: the run finished")
        return Decision(
            "exclude", f"{status} without a failure_kind: the outcome does not say why, so it is not scored"
        )
    if kind in TRANSIENT_KINDS or outcome.retryable:
        why = "transient" if kind in TRANSIENT_KINDS else "marked retryable"
        if attempt <= policy.max_retries:
            return Decision(
                "retry", f"{kind}: {why}, says nothing about the policy (retry {attempt} of {policy.max_retries})"
            )
        return Decision("exclude", f"{kind}: {why}, and the {policy.max_retries} retries are used up; not scored")
    if kind in _LIMITS:
        return Decision("grade", f"{kind}: {_LIMITS[kind]}; an incomplete run is gradable")
    if kind == MODEL_REQUEST_ERROR:
        if policy.grade_request_errors:
            return Decision("grade", f"{kind}: the provider rejected a request the policy shaped; grade_request_errors")
        return Decision("exclude", f"{kind}: the provider rejected the request; grade_request_errors is off")
    if kind in _EXCLUDED:
        return Decision("exclude", f"{kind}: {_EXCLUDED[kind]}")
    return Decision(
        "exclude", f"{kind}: the artifacts establish no failure kind; never graded, not known to be transient"
    )


def _valid_outcome(data: Any) -> AgentOutcome:
    """``data`` as an `AgentOutcome`, or the `ContractError` that says everything wrong with it."""
    try:
        return AgentOutcome.model_validate(data)
    except ValidationError as error:
        refusal = error
    diagnostics = list(iter_diagnostics(data, "agent_outcome"))
    if not any(diagnostic.severity == "error" for diagnostic in diagnostics):
        # The model and the schema disagree only on what JSON cannot hold (a tuple, a key that is not
        # a string); say what the model refused.
        first = refusal.errors()[0]
        pointer = "".join(f"/{part}" for part in first["loc"])
        diagnostics.append(Diagnostic.of("schema_violation", f"{first['msg']} ({preview(first['input'])})", pointer))
    raise ContractError(diagnostics)
