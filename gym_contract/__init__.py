"""gym-contract: the versioned data contract for AI-agent rollout evidence, its models and its engine."""

from __future__ import annotations

from gym_contract.diagnostics import ContractError, Diagnostic
from gym_contract.models import (
    AgentInvocation,
    AgentObservationBundle,
    AgentObservationRecord,
    AgentOutcome,
    CaptureExchange,
    CaptureMetrics,
    ContextCompactionObservation,
    ConversationItem,
    ModelCallCapture,
    ModelCallRecord,
    ModelCallRef,
    ModelServerRef,
    ObservationGap,
    SandboxObservation,
    ToolCallObservation,
    TrajectoryModelCall,
    TrajectoryRecord,
    TrajectoryResponseMetadata,
    TrajectoryTokenStats,
    TrajectoryToolCall,
    TrajectoryTurn,
)
from gym_contract.schemas import CONTRACT_VERSION
from gym_contract.validation import KINDS, detect_kind, is_valid, iter_diagnostics, validate

__version__ = "0.1.0"

__all__ = [
    "CONTRACT_VERSION",
    "KINDS",
    "AgentInvocation",
    "AgentObservationBundle",
    "AgentObservationRecord",
    "AgentOutcome",
    "CaptureExchange",
    "CaptureMetrics",
    "ContextCompactionObservation",
    "ContractError",
    "ConversationItem",
    "Diagnostic",
    "ModelCallCapture",
    "ModelCallRecord",
    "ModelCallRef",
    "ModelServerRef",
    "ObservationGap",
    "SandboxObservation",
    "ToolCallObservation",
    "TrajectoryModelCall",
    "TrajectoryRecord",
    "TrajectoryResponseMetadata",
    "TrajectoryTokenStats",
    "TrajectoryToolCall",
    "TrajectoryTurn",
    "__version__",
    "detect_kind",
    "is_valid",
    "iter_diagnostics",
    "validate",
]
