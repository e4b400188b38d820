"""Merging one rollout's evidence by exact ids: invocations, tool calls and model calls, contradictions named by gaps.

The reference's merge rules (CONTRACT 2.3) are followed wherever they give a consistent record.
Where two pieces of evidence contradict each other and the reference would write a record that
contradicts itself (or fail the whole projection), the contradiction is resolved the way the gap
registry describes it and named by that gap: a parent link that would close a cycle is dropped
(`cyclic_subagent_parent`), a tool call observed twice with different facts is flagged
(`duplicate_tool_call`), a finish earlier than the start is dropped (`tool_timing_invalid`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gym_contract._parent_links import LinkForest
from gym_contract._values import obj, text
from gym_contract._vocabulary import CAPTURED_TOKEN_FIELDS, token_count
from gym_contract.models import (
    AgentInvocation,
    FunctionCallOutput,
    ObservationGap,
    ToolCallObservation,
    TrajectoryModelCall,
    TrajectoryToolCall,
)

__all__ = ["Gaps", "merge_calls", "merge_invocations", "merge_tools"]

CYCLIC_PARENT = "cyclic_subagent_parent"
DUPLICATE_TOOL = "duplicate_tool_call"
TIMING_INVALID = "tool_timing_invalid"

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


# The fields of a trajectory model call that hold a payload: any JSON value.
_PAYLOADS = ("request", "response")


class Gaps(list[ObservationGap]):
    """The gaps a projection collects, in the order the evidence is taken."""

    def add(self, code: str, invocation_id: str | None = None, detail: str | None = None) -> None:
        self.append(ObservationGap(code=code, invocation_id=invocation_id, detail=detail))


# ------------------------------------------------------------------------------------------ invocations


def merge_invocations(
    producer: list[AgentInvocation], observed: list[AgentInvocation], gaps: Gaps
) -> list[AgentInvocation]:
    """Producer invocations win wholesale; an observed one is added when its id is new (2.3.2).

    Each source's tree is acyclic (a source whose tree is not is refused before this), but the two
    together may not be: the parent link that would close a cycle is dropped, with its gap.
    """
    merged = list(producer)
    known = {invocation.invocation_id: invocation for invocation in producer}
    links = LinkForest()
    for invocation_id, invocation in known.items():
        if invocation.parent_invocation_id is not None:
            links.link(invocation_id, invocation.parent_invocation_id)
    for invocation in observed:
        if invocation.invocation_id in known:
            continue
        parent = invocation.parent_invocation_id
        if parent is not None and not links.link(invocation.invocation_id, parent):
            gaps.add(CYCLIC_PARENT, invocation.invocation_id, parent)
            invocation = invocation.model_copy(update={"parent_invocation_id": None, "spawned_by_tool_call_id": None})
        known[invocation.invocation_id] = invocation
        merged.append(invocation)
    return merged


# ------------------------------------------------------------------------------------------ tool calls


def _facts(observation: ToolCallObservation) -> dict[str, Any]:
    """What an observation states: its fields that are set (a status of `unknown` states nothing)."""
    dumped = observation.model_dump(mode="python")
    return {
        name: value for name, value in dumped.items() if value is not None and (name, value) != ("status", "unknown")
    }


def _combined(observed: list[ToolCallObservation], gaps: Gaps) -> dict[tuple[str, str], dict[str, Any]]:
    """What the observations of each tool call state together, the later ones winning, keys in first-seen order.

    The reference overlays the observations of one call one after the other; taken together first,
    the result is the same, and re-projecting a projection gives it again. Observations of one call
    that state different values are named by a `duplicate_tool_call` gap.
    """
    combined: dict[tuple[str, str], dict[str, Any]] = {}
    for observation in observed:
        key = (observation.invocation_id, observation.tool_call_id)
        facts = _facts(observation)
        earlier = combined.get(key)
        if earlier is not None and any(name in earlier and earlier[name] != value for name, value in facts.items()):
            gaps.add(DUPLICATE_TOOL, observation.invocation_id, observation.tool_call_id)
        combined[key] = {**(earlier or {}), **facts}
    return combined


def merge_tools(
    tools: list[TrajectoryToolCall],
    observed: list[ToolCallObservation],
    invocations: list[AgentInvocation],
    gaps: Gaps,
) -> list[TrajectoryToolCall]:
    """Observed tool calls overlaid on the producer's by (invocation, tool call id), outputs from conversations.

    As the reference does, what the observations state replaces the producer's values (a status the
    observations do not know keeps the producer's), on the last producer record of its key; the
    model-visible output comes from the conversations. A result whose finish falls before its start
    loses the finish, named by a `tool_timing_invalid` gap.
    """
    outputs = {
        (invocation.invocation_id, item.call_id): item.output
        for invocation in invocations
        for item in invocation.conversation
        if isinstance(item, FunctionCallOutput)
    }
    merged = list(tools)
    # A dict keeps the last position of a repeated key: the reference overlays the last duplicate.
    positions = {(tool.invocation_id, tool.tool_call_id): position for position, tool in enumerate(merged)}
    for key, facts in _combined(observed, gaps).items():
        position = positions.get(key)
        fields = merged[position].model_dump(mode="python") if position is not None else {}
        fields.update(facts)
        if key in outputs:
            fields["output"] = outputs[key]
        started, completed = fields.get("started_at"), fields.get("completed_at")
        if started is not None and completed is not None and completed < started:
            gaps.add(TIMING_INVALID, *key)
            fields["completed_at"] = None
        tool = TrajectoryToolCall.model_validate(fields)
        if position is None:
            positions[key] = len(merged)
            merged.append(tool)
        else:
            merged[position] = tool
    return merged


# ------------------------------------------------------------------------------------------ model calls


def projected_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A captured ModelCallRecord dump as a trajectory model call (2.3.4)."""
    metadata = {key: call[key] for key in _METADATA_FIELDS if call.get(key) is not None}
    response = call.get("response")
    status = text((obj(response) or {}).get("status"))
    if "response_status" not in metadata and status is not None:
        metadata["response_status"] = status
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


def merge_calls(producer: list[TrajectoryModelCall], captured: list[dict[str, Any]]) -> list[TrajectoryModelCall]:
    """Captured calls merged into the producer's by exact `model_call_id`, each producer call at most once.

    A captured call without an id, or whose id no unmerged producer call has, is appended.
    """
    merged = list(producer)
    # The reference keys every id that is not null (an empty one too), the last producer call of an id winning.
    open_ids = {
        call.model_call_id: position for position, call in enumerate(producer) if call.model_call_id is not None
    }
    appended = []
    for call in captured:
        projected = projected_call(call)
        call_id = projected["model_call_id"]
        position = open_ids.pop(call_id, None) if isinstance(call_id, str) else None
        if position is None:
            appended.append(TrajectoryModelCall.model_validate(projected))
            continue
        metadata, tokens = projected.pop("response_metadata"), projected.pop("token_stats")
        taken = {key: value for key, value in projected.items() if value is not None}
        # The payloads are most of a call and any value is one: those the capture leaves are kept as they
        # are, not copied out and validated again; what the capture replaces is not copied out at all.
        kept = {key: getattr(merged[position], key) for key in _PAYLOADS if key not in taken}
        base = merged[position].model_dump(mode="python", exclude=set(taken) | set(kept))
        base["response_metadata"].update(metadata)
        base["token_stats"].update(tokens)
        base.update(taken)
        merged[position] = TrajectoryModelCall.model_validate(base).model_copy(update=kept)
    return merged + appended
