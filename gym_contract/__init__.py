"""gym-contract: the versioned data contract for AI-agent rollout evidence, its models and its engine."""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gym_contract.capture import Capture, aggregate_metrics, capture_attachment, derive_record, read_capture
    from gym_contract.checking import check_files
    from gym_contract.collection import collect, merge_capture
    from gym_contract.coverage import (
        CoverageMatrix,
        CriterionVerdict,
        RolloutCoverage,
        coverage_matrix,
        rollout_coverage,
    )
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
    from gym_contract.outcome import (
        Decision,
        Policy,
        classify_claude_code,
        classify_codex,
        classify_opencode,
        decide,
    )
    from gym_contract.producers.claude_code import ClaudeCodeRun
    from gym_contract.projection import attach_trajectory, build_trajectory, project
    from gym_contract.report import Report
    from gym_contract.rollout_ids import rollout_id_from_run_body
    from gym_contract.schemas import CONTRACT_VERSION
    from gym_contract.validation import KINDS, detect_kind, is_valid, iter_diagnostics, validate

# Each public name, and the module it comes from. They are imported when first used, so that a
# command that needs a few of them (`gym-contract validate`) does not pay for all the models.
_SOURCES: dict[str, str] = {
    **dict.fromkeys(
        ("Capture", "aggregate_metrics", "capture_attachment", "derive_record", "read_capture"), "gym_contract.capture"
    ),
    **dict.fromkeys(("check_files",), "gym_contract.checking"),
    **dict.fromkeys(("collect", "merge_capture"), "gym_contract.collection"),
    **dict.fromkeys(
        ("CoverageMatrix", "CriterionVerdict", "RolloutCoverage", "coverage_matrix", "rollout_coverage"),
        "gym_contract.coverage",
    ),
    **dict.fromkeys(("ContractError", "Diagnostic"), "gym_contract.diagnostics"),
    **dict.fromkeys(("join",), "gym_contract.join"),
    **dict.fromkeys(
        (
            "FINGERPRINT_VERSION",
            "CallStamp",
            "Lineage",
            "LineageIndex",
            "Resolution",
            "assistant_fingerprint",
            "chain",
            "conversation_digest",
            "stamp",
        ),
        "gym_contract.lineage",
    ),
    **dict.fromkeys(
        (
            "AgentInvocation",
            "AgentObservationBundle",
            "AgentObservationRecord",
            "AgentOutcome",
            "CaptureExchange",
            "CaptureMetrics",
            "ContextCompactionObservation",
            "ConversationItem",
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
        ),
        "gym_contract.models",
    ),
    **dict.fromkeys(
        ("Decision", "Policy", "classify_claude_code", "classify_codex", "classify_opencode", "decide"),
        "gym_contract.outcome",
    ),
    **dict.fromkeys(("ClaudeCodeRun",), "gym_contract.producers.claude_code"),
    **dict.fromkeys(("attach_trajectory", "build_trajectory", "project"), "gym_contract.projection"),
    **dict.fromkeys(("Report",), "gym_contract.report"),
    **dict.fromkeys(("rollout_id_from_run_body",), "gym_contract.rollout_ids"),
    **dict.fromkeys(("CONTRACT_VERSION",), "gym_contract.schemas"),
    **dict.fromkeys(("KINDS", "detect_kind", "is_valid", "iter_diagnostics", "validate"), "gym_contract.validation"),
}


def __getattr__(name: str) -> Any:
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"module 'gym_contract' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain lookup
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_SOURCES})


class _Package(types.ModuleType):
    """This package, whose public names stay what `_SOURCES` says when a submodule of the same name loads."""

    def __setattr__(self, name: str, value: Any) -> None:
        # Loading `gym_contract.join` sets the attribute `join` to the module; the public `join` is the function.
        if isinstance(value, types.ModuleType) and name in _SOURCES:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


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
    "classify_codex",
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
