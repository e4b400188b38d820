# generated from schemas/v1/agent_outcome.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from gym_contract._model_base import ContractModel
from pydantic import ConfigDict, Field
from typing import Annotated, Any, Literal


class Classifier(ContractModel):
    """
    Name and version of a classifier.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    name: str
    """
    Classifier name.
    """
    version: str
    """
    Classifier version.
    """


class Signal(ContractModel):
    """
    One piece of evidence behind a verdict.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    artifact: str
    """
    Artifact read, e.g. `export`, `events`, `stream`, `process`.
    """
    field: str
    """
    Field or event within the artifact.
    """
    value: Any = None
    """
    Value seen (short).
    """


class AgentOutcome(ContractModel):
    """
    The `ng_agent_outcome` attachment: how a harness run ended, classified for a grade / retry / exclude decision.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    schema_version: Literal["1.0"] = "1.0"
    """
    Version of the outcome layout.
    """
    harness: str
    """
    Harness that ran, e.g. `opencode`, `claude_code`.
    """
    harness_version: str | None = None
    """
    Harness version the artifacts came from.
    """
    classifier: Classifier
    """
    Classifier that produced the verdict.
    """
    response_status: Literal["completed", "failed", "incomplete"]
    """
    Status of the run's response.
    """
    failure_kind: (
        Literal[
            "model_context_limit",
            "model_output_limit",
            "model_request_error",
            "model_rate_limited",
            "model_server_error",
            "model_transport_error",
            "model_auth_error",
            "content_filter",
            "agent_max_turns",
            "agent_aborted",
            "agent_timeout",
            "agent_crash",
            "cleanup_failure",
            "unknown_error",
        ]
        | None
    ) = None
    """
    Typed failure class; null when the run did not fail.
    """
    retryable: bool = False
    """
    Whether the failure is transient and says nothing about the policy.
    """
    partial_work_retained: bool = False
    """
    Whether the partial work of an incomplete run is kept.
    """
    status_code: int | None = None
    """
    HTTP status of the failing provider call, when known.
    """
    error_name: str | None = None
    """
    The harness's own error name or enum value, kept raw.
    """
    error_message: Annotated[str | None, Field(max_length=16000)] = None
    """
    Provider message and status only.
    """
    signals: Annotated[list[Signal], Field(validate_default=True)] = []
    """
    Which fields of which artifact led to the verdict.
    """
    warnings: list[str] = []
    """
    Warnings, e.g. an untested harness version.
    """
