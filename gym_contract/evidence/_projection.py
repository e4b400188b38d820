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
from functools import cached_property
from typing import Any

from pydantic import ValidationError

from gym_contract._deep_values import python_str
from gym_contract._json_writing import dumps
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


class ProducerTrajectory:
    """A producer's own trajectory (2.3.1), validated at most once however many steps of a projection read it."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    @cached_property
    def checked(self) -> tuple[TrajectoryRecord | None, str | None]:
        """The trajectory when it keeps the contract; otherwise why it is discarded (None, None: there is none)."""
        if not isinstance(self.raw, dict):
            return None, None
        try:
            given = TrajectoryRecord.model_validate(self.raw)
        except Exception as error:  # any shape at all: the reference records the exception's class
            return None, type(error).__name__
        refused = _refusal(self.raw, "trajectory", _PRODUCER_IGNORED)
        return (None, refused) if refused is not None else (given, None)

    @cached_property
    def invocations(self) -> dict[str, tuple[Any, AgentInvocation]]:
        """The trajectory's invocations by id, each with the JSON it was validated from; empty without one."""
        try:
            given = self.checked[0]
        except Exception:  # raised again, and recorded, where the projection reads the trajectory
            return {}
        if given is None:
            return {}
        raws = self.raw.get("invocations")
        if not isinstance(raws, list) or len(raws) != len(given.invocations):
            return {}
        pairs = zip(raws, given.invocations, strict=True)
        return {invocation.invocation_id: (json, invocation) for json, invocation in pairs}


def _producer_trajectory(producer: ProducerTrajectory, gaps: Gaps) -> TrajectoryRecord | None:
    """The producer's trajectory when it keeps the contract (2.3.1); otherwise a gap says why it was discarded."""
    given, refused = producer.checked
    if refused is not None:
        gaps.add("producer_trajectory_invalid", detail=refused)
    return given


def observations_refusal(
    raw: Any, validated: Mapping[str, tuple[Any, AgentInvocation]] | None = None
) -> tuple[AgentObservationBundle | None, str | None]:
    """The bundle, or why it cannot be used: the exception that validating it raised, or the rule it breaks.

    A bundle that breaks the reference's own checks (unique invocation ids, no parent cycle, no
    finish before a start) is refused as the reference refuses it; so is one that breaks our other
    error-level rules. ``validated`` holds invocations validated already, by id, each with the JSON it
    was validated from (`ProducerTrajectory.invocations`): a record equal to that JSON is not validated again.
    """
    try:
        bundle = AgentObservationBundle.model_validate(_reusing(raw, validated) if validated else raw)
    except Exception as error:  # any shape at all: the reference records the exception's class
        return None, type(error).__name__
    refused = _refusal(raw, "bundle")
    return (None, refused) if refused is not None else (bundle, None)


def _reusing(raw: Any, validated: Mapping[str, tuple[Any, AgentInvocation]]) -> Any:
    """``raw`` with each invocation record equal to one validated already replaced by its model.

    A producer's trajectory and its observations usually hold the same invocations, conversations and
    all: validating a JSON value gives the same model wherever it stands, so the second is not validated.
    """
    records = raw.get("records") if isinstance(raw, dict) else None
    if not isinstance(records, list):
        return raw
    reused = [_validated(record, validated) for record in records]
    if all(new is old for new, old in zip(reused, records, strict=True)):
        return raw
    return {**raw, "records": reused}


def _validated(record: Any, validated: Mapping[str, tuple[Any, AgentInvocation]]) -> Any:
    """The model validated from a JSON value equal to ``record``, an invocation record; otherwise ``record``."""
    # Its own tag, not the model's: a record that lacks it is refused by the bundle's union.
    if not isinstance(record, dict) or record.get("kind") != "agent_invocation":
        return record
    invocation_id = record.get("invocation_id")
    found = validated.get(invocation_id) if type(invocation_id) is str else None
    return found[1] if found is not None and _same_json(found[0], record) else record


def _same_json(one: Any, other: Any) -> bool:
    """Whether two JSON values are one value, of the same types: `==` alone takes 1, 1.0 and true for one."""
    try:
        return bool(one == other) and dumps(one) == dumps(other)
    except (RecursionError, TypeError):  # nested deeper than `==` goes, or no JSON value: not taken as the same
        return False


def build_trajectory(row: Mapping[str, Any], result: Mapping[str, Any]) -> TrajectoryRecord:
    """The `ng_trajectory` of one rollout (2.3), checked against the contract's rules before it is returned.

    Evidence that would make the record contradict itself is resolved and named by a gap where the
    gap registry says how; otherwise the projection is refused. Raises `ContradictoryEvidenceError`
    naming the rule the evidence breaks (two captured calls sharing a `model_call_id`), KeyError or
    ValueError when the row has no usable identity, and pydantic's ValidationError when a captured
    call cannot be a trajectory model call. `project` and `attach_trajectory` never raise: they record
    any of these as a `trajectory_projection_failed` gap.
    """
    return _built(row, result, ProducerTrajectory(result.get(TRAJECTORY)))[0]


def _built(
    row: Mapping[str, Any], result: Mapping[str, Any], producer: ProducerTrajectory
) -> tuple[TrajectoryRecord, dict[str, Any]]:
    """`build_trajectory`'s record and its Python-mode dump, which the rules were checked on."""
    task_id, rollout_id = trajectory_identity(row)
    gaps = Gaps()
    invocations: list[AgentInvocation] = []
    turns: list[TrajectoryTurn] = []
    model_calls: list[TrajectoryModelCall] = []
    tools: list[TrajectoryToolCall] = []
    given = _producer_trajectory(producer, gaps)
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
        bundle, refused = observations_refusal(observations, producer.invocations)
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
    # Python-mode dumps: the JSON-mode serializer stops at 254 levels; payloads may nest deeper.
    dumped = record.model_dump(mode="python")
    errors = rule_errors(dumped, "trajectory")
    if errors:
        raise ContradictoryEvidenceError(errors[0].code, errors[0].message)
    return record, dumped


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
    return trajectory_attached(row, result, ProducerTrajectory(result.get(TRAJECTORY)))


def trajectory_attached(
    row: Mapping[str, Any], result: Mapping[str, Any], producer: ProducerTrajectory
) -> dict[str, Any]:
    """`attach_trajectory`, reading the producer's trajectory from ``producer`` (that of ``result``)."""
    attached = dict(result)
    if not any(key in attached for key in (CAPTURE, OBSERVATIONS, TRAJECTORY)):
        return attached
    if producer.raw is not attached.get(TRAJECTORY):
        producer = ProducerTrajectory(attached.get(TRAJECTORY))
    try:
        attached[TRAJECTORY] = _built(row, attached, producer)[1]
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
