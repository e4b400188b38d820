"""The contract's public model classes, generated from schemas/v1 and re-exported under stable names."""

from __future__ import annotations

import typing
from typing import TypeAlias

from gym_contract._generated.v1.agent_invocation_schema import (
    AgentInvocation,
    EasyInputMessage,
    FunctionCall,
    FunctionCallOutput,
    InputMessage,
    OutputMessage,
    Reasoning,
)
from gym_contract._generated.v1.agent_observations_schema import AgentObservationBundle
from gym_contract._generated.v1.agent_outcome_schema import AgentOutcome, Classifier, Signal
from gym_contract._generated.v1.capture_exchange_schema import CaptureExchange
from gym_contract._generated.v1.common_schema import ModelServerRef
from gym_contract._generated.v1.context_compaction_schema import ContextCompactionObservation
from gym_contract._generated.v1.model_call_record_schema import (
    CapturedToolCall,
    CaptureMetrics,
    ModelCallCapture,
    ModelCallRecord,
)
from gym_contract._generated.v1.model_call_ref_schema import ModelCallRef
from gym_contract._generated.v1.observation_gap_schema import ObservationGap
from gym_contract._generated.v1.sandbox_observation_schema import SandboxObservation
from gym_contract._generated.v1.tool_call_observation_schema import ToolCallObservation
from gym_contract._generated.v1.trajectory_schema import (
    TrajectoryModelCall,
    TrajectoryRecord,
    TrajectoryResponseMetadata,
    TrajectoryTokenStats,
    TrajectoryToolCall,
    TrajectoryTurn,
)

__all__ = [
    "AgentInvocation",
    "AgentObservationBundle",
    "AgentObservationRecord",
    "AgentOutcome",
    "CaptureExchange",
    "CaptureMetrics",
    "CapturedToolCall",
    "Classifier",
    "ContextCompactionObservation",
    "ConversationItem",
    "EasyInputMessage",
    "FunctionCall",
    "FunctionCallOutput",
    "InputMessage",
    "ModelCallCapture",
    "ModelCallRecord",
    "ModelCallRef",
    "ModelServerRef",
    "ObservationGap",
    "OutputMessage",
    "Reasoning",
    "SandboxObservation",
    "Signal",
    "ToolCallObservation",
    "TrajectoryModelCall",
    "TrajectoryRecord",
    "TrajectoryResponseMetadata",
    "TrajectoryTokenStats",
    "TrajectoryToolCall",
    "TrajectoryTurn",
]


def _item_type(list_annotation: object) -> object:
    """The element type of a generated ``list[...]`` field (optionally wrapped in a union)."""
    for arm in (list_annotation, *typing.get_args(list_annotation)):
        if typing.get_origin(arm) is list:
            return typing.get_args(arm)[0]
    raise TypeError(f"not a list annotation: {list_annotation!r}")


# The unions are taken from the generated fields so that they cannot drift from the schemas.
ConversationItem: TypeAlias = _item_type(AgentInvocation.model_fields["conversation"].annotation)  # type: ignore[valid-type]
"""One Responses-API item of a model-visible conversation (schema `conversation_item`)."""

AgentObservationRecord: TypeAlias = _item_type(AgentObservationBundle.model_fields["records"].annotation)  # type: ignore[valid-type]
"""One record of an observation bundle, told apart by `kind`."""
