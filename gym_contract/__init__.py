"""gym-contract: the versioned data contract for AI-agent rollout evidence, its models and its engine."""

from __future__ import annotations

from gym_contract.capture import Capture, aggregate_metrics, capture_attachment, derive_record, read_capture
from gym_contract.checking import check_files
from gym_contract.collection import collect, merge_capture
from gym_contract.coverage import CoverageMatrix, CriterionVerdict, RolloutCoverage, coverage_matrix, rollout_coverage
from gym_contract.diagnostics import ContractError, Diagnostic
from gym_contract.join import join
from gym_contract.lineage import (
    FINGERPRINT_VERSION,
    CallStamp,
    Lineage,
    LineageIndex,
    Resolution,
    assistant_fingerprint,
    chain,
    conversation_digest,
    stamp,
)
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
from gym_contract.outcome import Decision, Policy, classify_claude_code, classify_opencode, decide
from gym_contract.producers.claude_code import ClaudeCodeRun
from gym_contract.projection import attach_trajectory, build_trajectory, project
from gym_contract.report import Report
from gym_contract.rollout_ids import rollout_id_from_run_body
from gym_contract.schemas import CONTRACT_VERSION
from gym_contract.validation import KINDS, detect_kind, is_valid, iter_diagnostics, validate

__version__ = "0.1.0"

__all__ = [
    "CONTRACT_VERSION",
    "FINGERPRINT_VERSION",
    "KINDS",
    "AgentInvocation",
    "AgentObservationBundle",
    "AgentObservationRecord",
    "AgentOutcome",
    "CallStamp",
    "Capture",
    "CaptureExchange",
    "CaptureMetrics",
    "ClaudeCodeRun",
    "ContextCompactionObservation",
    "ContractError",
    "ConversationItem",
    "CoverageMatrix",
    "CriterionVerdict",
    "Decision",
    "Diagnostic",
    "Lineage",
    "LineageIndex",
    "ModelCallCapture",
    "ModelCallRecord",
    "ModelCallRef",
    "ModelServerRef",
    "ObservationGap",
    "Policy",
    "Report",
    "Resolution",
    "RolloutCoverage",
    "SandboxObservation",
    "ToolCallObservation",
    "TrajectoryModelCall",
    "TrajectoryRecord",
    "TrajectoryResponseMetadata",
    "TrajectoryTokenStats",
    "TrajectoryToolCall",
    "TrajectoryTurn",
    "__version__",
    "aggregate_metrics",
    "assistant_fingerprint",
    "attach_trajectory",
    "build_trajectory",
    "capture_attachment",
    "chain",
    "check_files",
    "classify_claude_code",
    "classify_opencode",
    "collect",
    "conversation_digest",
    "coverage_matrix",
    "decide",
    "derive_record",
    "detect_kind",
    "is_valid",
    "iter_diagnostics",
    "join",
    "merge_capture",
    "project",
    "read_capture",
    "rollout_coverage",
    "rollout_id_from_run_body",
    "stamp",
    "validate",
]
