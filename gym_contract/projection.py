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

from gym_contract._vocabulary import CAPTURE, CAPTURED_TOKEN_FIELDS, OBSERVATIONS, TRAJECTORY, token_count
from gym_contract.capture import PAYLOAD_KEYS
from gym_contract.join import dedupe_gaps
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
from gym_contract.rollout_ids import rollout_id_from_run_body

__all__ = ["attach_trajectory", "build_trajectory", "project", "trajectory_identity"]

_METADATA_FIELDS = (
    "response_id",
    "model_ref",
    "model",
    "dialect",
    "status_code",
    "response_status",
    "finish_reason",
    "error_category",
    "latency_ttft_ms",
)


def trajectory_identity(row: Mapping[str, Any]) -> tuple[str, str]:
    """(task_id, rollout_id) of the input row (2.2): the collector's ids are canonical, not the producer's."""
    task = next((row[key] for key in ("task_id", "problem_id", "instance_id") if row.get(key) is not None), None)
    task_id = str(task) if task is not None else str(row["_ng_task_index"])
    rollout_id = rollout_id_from_run_body(row) or f"{row['_ng_task_index']}-{row['_ng_rollout_index']}"
    return task_id, rollout_id


def _gap(code: str, invocation_id: str | None = None, detail: str | None = None) -> ObservationGap:
    return ObservationGap(code=code, invocation_id=invocation_id, detail=detail)


def _projected_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A captured ModelCallRecord dump as a trajectory model call (2.3.4)."""
    metadata = {key: call[key] for key in _METADATA_FIELDS if call.get(key) is not None}
    response = call.get("response")
    if "response_status" not in metadata and isinstance(response, dict) and isinstance(response.get("status"), str):
        metadata["response_status"] = response["status"]
    return {
        "model_call_id": call.get("model_call_id"),
        "started_at": call.get("started_at"),
        "completed_at": call.get("completed_at"),
        "duration_ms": call.get("latency_total_ms"),
        "request": call["request"] if call.get("request") is not None else call.get("request_raw"),
        "response": response if response is not None else call.get("response_raw"),
        "response_metadata": metadata,
        "token_stats": {
            name: call[key] for key, name in CAPTURED_TOKEN_FIELDS.items() if token_count(call.get(key)) is not None
        },
    }


def _merge_calls(producer: list[TrajectoryModelCall], captured: list[dict[str, Any]]) -> list[TrajectoryModelCall]:
    """Captured calls merged into the producer's by exact `model_call_id`, each producer call at most once."""
    merged = list(producer)
    open_ids: dict[str, int] = {}
    for position, call in enumerate(producer):
        if call.model_call_id:
            open_ids.setdefault(call.model_call_id, position)
    appended = []
    for call in captured:
        projected = _projected_call(call)
        position = open_ids.pop(projected["model_call_id"], None) if projected["model_call_id"] else None
        if position is None:
            appended.append(TrajectoryModelCall.model_validate(projected))
            continue
        base = merged[position].model_dump(mode="json")
        base["response_metadata"].update(projected.pop("response_metadata"))
        base["token_stats"].update(projected.pop("token_stats"))
        base.update({key: value for key, value in projected.items() if value is not None})
        merged[position] = TrajectoryModelCall.model_validate(base)
    return merged + appended


def _merge_tools(
    tools: list[TrajectoryToolCall], observed: list[ToolCallObservation], invocations: list[AgentInvocation]
) -> list[TrajectoryToolCall]:
    """Observed tool calls overlaid on the producer's by (invocation, tool call id), outputs from conversations."""
    outputs = {
        (invocation.invocation_id, item.call_id): item.output
        for invocation in invocations
        for item in invocation.conversation
        if getattr(item, "type", None) == "function_call_output"
    }
    merged = list(tools)
    positions: dict[tuple[str, str], int] = {}
    for position, tool in enumerate(merged):
        positions.setdefault((tool.invocation_id, tool.tool_call_id), position)
    for observation in observed:
        key = (observation.invocation_id, observation.tool_call_id)
        position = positions.get(key)
        fields = merged[position].model_dump(mode="json") if position is not None else {}
        overlay = {name: value for name, value in observation.model_dump(mode="json").items() if value is not None}
        if overlay.get("status") == "unknown" and fields.get("status", "unknown") != "unknown":
            del overlay["status"]  # an observation that does not know the status keeps a known one
        fields.update(overlay)
        if key in outputs:
            fields["output"] = outputs[key]
        tool = TrajectoryToolCall.model_validate(fields)
        if position is None:
            positions[key] = len(merged)
            merged.append(tool)
        else:
            merged[position] = tool
    return merged


def _reference_invariants(record: TrajectoryRecord) -> None:
    """The reference's TrajectoryRecord validator (1.13): raised like it, as a Pydantic ValidationError."""
    problems = []
    invocation_ids = [invocation.invocation_id for invocation in record.invocations]
    if len(invocation_ids) != len(set(invocation_ids)):
        problems.append("invocation_id values must be unique")
    call_ids = [call.model_call_id for call in record.model_calls if call.model_call_id]
    if len(call_ids) != len(set(call_ids)):
        problems.append("model_call_id values must be unique")
    if any(turn.task_id != record.task_id or turn.rollout_id != record.rollout_id for turn in record.turns):
        problems.append("turn task_id and rollout_id must equal the trajectory's")
    turn_keys = [(turn.invocation_id, turn.turn_no) for turn in record.turns]
    if len(turn_keys) != len(set(turn_keys)):
        problems.append("(invocation_id, turn_no) must be unique")
    if problems:
        error = ValueError("; ".join(problems))
        raise ValidationError.from_exception_data(
            "TrajectoryRecord", [{"type": "value_error", "loc": (), "input": None, "ctx": {"error": error}}]
        )


def build_trajectory(row: Mapping[str, Any], result: Mapping[str, Any]) -> TrajectoryRecord:
    """The `ng_trajectory` of one rollout (2.3); raises when the evidence cannot form a valid record."""
    task_id, rollout_id = trajectory_identity(row)
    identity_gaps: list[ObservationGap] = []
    producer_gaps: list[ObservationGap] = []
    invocations: list[AgentInvocation] = []
    turns: list[TrajectoryTurn] = []
    model_calls: list[TrajectoryModelCall] = []
    tools: list[TrajectoryToolCall] = []
    producer = result.get(TRAJECTORY)
    if isinstance(producer, dict):
        try:
            given = TrajectoryRecord.model_validate(producer)
            _reference_invariants(given)
        except Exception as error:  # the producer's data is discarded, and the gap says why
            identity_gaps.append(_gap("producer_trajectory_invalid", detail=type(error).__name__))
        else:
            mismatched = [
                name
                for name, canonical in (("task_id", task_id), ("rollout_id", rollout_id))
                if getattr(given, name) != canonical
            ]
            if mismatched:
                identity_gaps.append(_gap("producer_trajectory_identity_mismatch", detail=",".join(mismatched)))
            turns = [turn.model_copy(update={"task_id": task_id, "rollout_id": rollout_id}) for turn in given.turns]
            producer_gaps, invocations = list(given.gaps), list(given.invocations)
            tools, model_calls = list(given.tool_calls), list(given.model_calls)

    observation_gaps: list[ObservationGap] = []
    observations = result.get(OBSERVATIONS)
    if observations is not None:
        try:
            bundle = AgentObservationBundle.model_validate(observations)
        except Exception as error:
            observation_gaps.append(_gap("agent_observations_invalid", detail=type(error).__name__))
        else:
            observation_gaps = list(bundle.gaps)
            known = {invocation.invocation_id for invocation in invocations}
            for record in bundle.records:
                if isinstance(record, AgentInvocation) and record.invocation_id not in known:
                    known.add(record.invocation_id)
                    invocations.append(record)
            observed = [record for record in bundle.records if isinstance(record, ToolCallObservation)]
            if observed:
                tools = _merge_tools(tools, observed, invocations)

    turns.sort(key=lambda turn: (turn.timestamp, turn.invocation_id, turn.turn_no))
    capture = result.get(CAPTURE)
    capture_gaps: list[ObservationGap] = []
    if isinstance(capture, dict):
        calls = capture.get("calls")
        captured = [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
        model_calls = _merge_calls(model_calls, captured)
        for gap in capture.get("gaps") or []:
            try:
                capture_gaps.append(ObservationGap.model_validate(gap))
            except ValidationError:
                capture_gaps.append(_gap("model_call_capture_gap_invalid"))

    completeness = []
    if not model_calls:
        completeness.append(_gap("model_calls_unavailable"))
    if not turns:
        completeness.append(_gap("turns_unavailable"))
    if not any(invocation.conversation for invocation in invocations):
        completeness.append(_gap("conversation_unavailable"))
    gaps = dedupe_gaps([*identity_gaps, *producer_gaps, *observation_gaps, *capture_gaps, *completeness])
    record = TrajectoryRecord(
        task_id=task_id,
        rollout_id=rollout_id,
        invocations=invocations,
        turns=turns,
        model_calls=model_calls,
        tool_calls=tools,
        gaps=gaps,
    )
    _reference_invariants(record)
    return record


def _failure_gap(error: BaseException) -> dict[str, Any]:
    return {"code": "trajectory_projection_failed", "detail": type(error).__name__}


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
        attached[TRAJECTORY] = build_trajectory(row, attached).model_dump(mode="json")
    except Exception as error:  # never escapes (2.4)
        attached.pop(TRAJECTORY, None)
        for key in (CAPTURE, OBSERVATIONS):
            if isinstance(attached.get(key), dict):
                holder = dict(attached[key])
                holder["gaps"] = [*(holder.get("gaps") or []), _failure_gap(error)]
                attached[key] = holder
                break
        else:
            attached[TRAJECTORY] = _minimal_record(row, error).model_dump(mode="json")
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
