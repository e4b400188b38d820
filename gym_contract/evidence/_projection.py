"""The projection of a rollout's evidence to its `ng_trajectory` record (CONTRACT 2.2–2.4).

A producer's own trajectory, the harness's observations and the captured model calls are merged
by exact ids only: producer invocations win, observed tool calls overlay producer ones by
(invocation, tool call id), captured calls merge into producer calls by `model_call_id`. What is
missing becomes a gap. Nothing escapes as an exception: a projection that fails is recorded as a
`trajectory_projection_failed` gap.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from gym_contract._deep_values import python_str
from gym_contract._values import objects, preview
from gym_contract._vocabulary import CAPTURE, OBSERVATIONS, TRAJECTORY
from gym_contract.evidence._capture import PAYLOAD_KEYS
from gym_contract.evidence._join import dedupe_gaps
from gym_contract.evidence._projection_merge import Gaps, merge_calls, merge_invocations, merge_tools
from gym_contract.evidence._rollout_ids import TASK_INDEX_KEY, id_text, rollout_id_from_run_body
from gym_contract.models import (
    AgentInvocation,
    AgentObservationBundle,
    ObservationGap,
    ToolCallObservation,
    TrajectoryModelCall,
    TrajectoryRecord,
    TrajectoryToolCall,
    TrajectoryTurn,
)
from gym_contract.validation import rule_errors
from gym_contract.validation._rules import ROLLOUT_ID_PATTERN

__all__ = ["ContradictoryEvidenceError", "attach_trajectory", "build_trajectory", "project", "trajectory_identity"]


class ContradictoryEvidenceError(ValueError):
    """The evidence cannot form a record that keeps the contract's rules; ``code`` names the rule it breaks."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def trajectory_identity(row: Mapping[str, Any]) -> tuple[str, str]:
    """(task_id, rollout_id) of the input row (2.2): the collector's ids are canonical, not the producer's.

    Raises (KeyError, ValueError) when the row has no usable identity: no indices, ids that are
    arrays or objects, or indices that make a rollout id the contract's pattern refuses.
    """
    key = next((key for key in ("task_id", "problem_id", "instance_id") if row.get(key) is not None), TASK_INDEX_KEY)
    task_id = id_text(key, row[key])
    # The indices may be any JSON value, nested as deep as the readers allow: written without recursion.
    rollout_id = rollout_id_from_run_body(row) or (
        f"{python_str(row['_ng_task_index'])}-{python_str(row['_ng_rollout_index'])}"
    )
    if not ROLLOUT_ID_PATTERN.fullmatch(rollout_id):
        shown = preview(rollout_id)
        raise ValueError(f"the row's indices make the rollout id {shown}, which breaks the contract's pattern")
    return task_id, rollout_id


def _refusal(raw: dict[str, Any], kind: str, ignored: frozenset[str] = frozenset()) -> str | None:
    """Why a producer's record cannot be taken: a semantic rule it breaks (the models checked its structure)."""
    errors = [diagnostic.code for diagnostic in rule_errors(raw, kind) if diagnostic.code not in ignored]
    return errors[0] if errors else None


# A producer's own rollout id is replaced by the canonical one, so its form does not matter here.
_PRODUCER_IGNORED = frozenset({"rollout_id_invalid"})


def _producer_trajectory(raw: Any, gaps: Gaps) -> TrajectoryRecord | None:
    """The producer's trajectory when it keeps the contract (2.3.1); otherwise a gap says why it was discarded."""
    if not isinstance(raw, dict):
        return None
    try:
        given = TrajectoryRecord.model_validate(raw)
    except Exception as error:  # any shape at all: the reference records the exception's class
        gaps.add("producer_trajectory_invalid", detail=type(error).__name__)
        return None
    refused = _refusal(raw, "trajectory", _PRODUCER_IGNORED)
    if refused is not None:
        gaps.add("producer_trajectory_invalid", detail=refused)
        return None
    return given


def observations_refusal(raw: Any) -> tuple[AgentObservationBundle | None, str | None]:
    """The bundle, or why it cannot be used: the exception that validating it raised, or the rule it breaks.

    A bundle that breaks the reference's own checks (unique invocation ids, no parent cycle, no
    finish before a start) is refused as the reference refuses it; so is one that breaks our other
    error-level rules.
    """
    try:
        bundle = AgentObservationBundle.model_validate(raw)
    except Exception as error:  # any shape at all: the reference records the exception's class
        return None, type(error).__name__
    refused = _refusal(raw, "bundle")
    return (None, refused) if refused is not None else (bundle, None)


def build_trajectory(row: Mapping[str, Any], result: Mapping[str, Any]) -> TrajectoryRecord:
    """The `ng_trajectory` of one rollout (2.3), checked against the contract's rules before it is returned.

    Evidence that would make the record contradict itself is resolved and named by a gap where the
    gap registry says how; otherwise the projection is refused. Raises `ContradictoryEvidenceError`
    naming the rule the evidence breaks (two captured calls sharing a `model_call_id`), KeyError or
    ValueError when the row has no usable identity, and pydantic's ValidationError when a captured
    call cannot be a trajectory model call. `project` and `attach_trajectory` never raise: they record
    any of these as a `trajectory_projection_failed` gap.
    """
    task_id, rollout_id = trajectory_identity(row)
    gaps = Gaps()
    invocations: list[AgentInvocation] = []
    turns: list[TrajectoryTurn] = []
    model_calls: list[TrajectoryModelCall] = []
    tools: list[TrajectoryToolCall] = []
    given = _producer_trajectory(result.get(TRAJECTORY), gaps)
    if given is not None:
        mismatched = [
            name
            for name, canonical in (("task_id", task_id), ("rollout_id", rollout_id))
            if getattr(given, name) != canonical
        ]
        if mismatched:
            gaps.add("producer_trajectory_identity_mismatch", detail=",".join(mismatched))
        turns = [turn.model_copy(update={"task_id": task_id, "rollout_id": rollout_id}) for turn in given.turns]
        gaps.extend(given.gaps)
        invocations, tools, model_calls = list(given.invocations), list(given.tool_calls), list(given.model_calls)

    observations = result.get(OBSERVATIONS)
    if observations is not None:
        bundle, refused = observations_refusal(observations)
        if bundle is None:
            gaps.add("agent_observations_invalid", detail=refused)
        else:
            gaps.extend(bundle.gaps)
            observed = [record for record in bundle.records if isinstance(record, AgentInvocation)]
            invocations = merge_invocations(invocations, observed, gaps)
            observed_tools = [record for record in bundle.records if isinstance(record, ToolCallObservation)]
            if observed_tools:
                tools = merge_tools(tools, observed_tools, invocations, gaps)

    turns.sort(key=lambda turn: (turn.timestamp, turn.invocation_id, turn.turn_no))
    capture = result.get(CAPTURE)
    if isinstance(capture, dict):
        model_calls = merge_calls(model_calls, objects(capture.get("calls")))
        for gap in capture.get("gaps") or []:
            if not isinstance(gap, dict):
                continue
            try:
                gaps.append(ObservationGap.model_validate(gap))
            except ValidationError:
                gaps.add("model_call_capture_gap_invalid")

    if not model_calls:
        gaps.add("model_calls_unavailable")
    if not turns:
        gaps.add("turns_unavailable")
    if not any(invocation.conversation for invocation in invocations):
        gaps.add("conversation_unavailable")
    record = TrajectoryRecord(
        task_id=task_id,
        rollout_id=rollout_id,
        invocations=invocations,
        turns=turns,
        model_calls=model_calls,
        tool_calls=tools,
        gaps=dedupe_gaps(gaps),
    )
    errors = rule_errors(record.model_dump(mode="python"), "trajectory")
    if errors:
        raise ContradictoryEvidenceError(errors[0].code, errors[0].message)
    return record


def _failure_gap(error: BaseException) -> dict[str, Any]:
    """The gap of a failed projection: the rule the evidence breaks, or the class of what was raised."""
    detail = error.code if isinstance(error, ContradictoryEvidenceError) else type(error).__name__
    return {"code": "trajectory_projection_failed", "detail": detail}


def _minimal_record(row: Mapping[str, Any], error: BaseException) -> TrajectoryRecord:
    try:
        task_id, rollout_id = trajectory_identity(row)
    except Exception:
        task_id = rollout_id = "unknown"  # the row has no identity either; the gap says what failed
    return TrajectoryRecord(task_id=task_id, rollout_id=rollout_id, gaps=[ObservationGap(**_failure_gap(error))])


def project(row: Mapping[str, Any], result: Mapping[str, Any]) -> TrajectoryRecord:
    """The `ng_trajectory` of one rollout; on failure a minimal record that carries the failure as a gap."""
    try:
        return build_trajectory(row, result)
    except Exception as error:  # never escapes: the failure is evidence too (2.4)
        return _minimal_record(row, error)


def attach_trajectory(row: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """A new result with `ng_trajectory` attached as the collector attaches it (2.4).

    On success the capture's copies of request and response payloads are dropped (the trajectory
    owns them). On failure `ng_trajectory` is removed and a `trajectory_projection_failed` gap is
    added to the capture attachment, else to the observations, else written as a minimal trajectory.
    """
    attached = dict(result)
    if not any(key in attached for key in (CAPTURE, OBSERVATIONS, TRAJECTORY)):
        return attached
    try:
        # Python-mode dumps: the JSON-mode serializer stops at 254 levels; payloads may nest deeper.
        attached[TRAJECTORY] = build_trajectory(row, attached).model_dump(mode="python")
    except Exception as error:  # never escapes (2.4)
        attached.pop(TRAJECTORY, None)
        holder = next((attached[key] for key in (CAPTURE, OBSERVATIONS) if isinstance(attached.get(key), dict)), None)
        if holder is not None and isinstance(holder.get("gaps", []), list):
            key = CAPTURE if holder is attached.get(CAPTURE) else OBSERVATIONS
            attached[key] = {**holder, "gaps": [*holder.get("gaps", []), _failure_gap(error)]}
        else:
            attached[TRAJECTORY] = _minimal_record(row, error).model_dump(mode="python")
        return attached
    capture = attached.get(CAPTURE)
    if isinstance(capture, dict) and isinstance(capture.get("calls"), list):
        stripped = copy.copy(capture)
        stripped["calls"] = [
            {key: value for key, value in call.items() if key not in PAYLOAD_KEYS} if isinstance(call, dict) else call
            for call in capture["calls"]
        ]
        attached[CAPTURE] = stripped
    return attached
