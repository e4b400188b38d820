"""Turn what a recorder holds into bundle records, the gaps they imply and the run summary; build its outcome."""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gym_contract._parent_links import LinkForest
from gym_contract._vocabulary import FAILURE_KINDS, UNKNOWN_ERROR
from gym_contract.models import AgentObservationBundle, AgentOutcome, Classifier
from gym_contract.outcome._base import Evidence, kind_for_status, status_code
from gym_contract.producers._kit import RunSummary
from gym_contract.recorder._state import CompactionState, InvocationState, Moment, ToolState, known

__all__ = ["RECORDER_CLASSIFIER", "Assembled", "assemble", "outcome_of"]

RECORDER_CLASSIFIER = Classifier(name="gym_contract.recorder", version="1")

Gap = tuple[str, str | None, str | None]


@dataclass
class Assembled:
    """The records, the gaps only the whole run shows, the misuse found in it, and the run summary."""

    source: str
    records: list[dict[str, Any]] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    problems: list[tuple[str, str | None]] = field(default_factory=list)
    summary: RunSummary = field(default_factory=RunSummary)

    def bundle(self, gaps: list[Gap]) -> AgentObservationBundle:
        """The `ng_agent_observations` of the run, with ``gaps`` (the recorded ones and these)."""
        written = [{"code": code, "invocation_id": owner, "detail": detail} for code, owner, detail in gaps]
        return AgentObservationBundle.model_validate({"source": self.source, "records": self.records, "gaps": written})


def assemble(
    source: str,
    invocations: Mapping[str, InvocationState],
    tools: list[ToolState],
    compactions: list[CompactionState],
    sandboxes: list[dict[str, Any]],
    recorded: list[Gap],
) -> Assembled:
    out = Assembled(source)
    named = {tool.invocation_id for tool in tools} | {compaction.invocation_id for compaction in compactions}
    present = {
        invocation_id
        for invocation_id, state in invocations.items()
        if state.started or state.calls or invocation_id in named
    }
    # In the order they started, then those only named by other records, in the order they were named.
    ordered = sorted((state for state in invocations.values() if state.started), key=_started)
    ordered += [state for state in invocations.values() if not state.started and state.invocation_id in present]
    links = _settle_links(ordered, present, out)
    calls = {state.invocation_id: sorted(state.calls, key=_when) for state in ordered}
    for state in ordered:
        out.records.append(_invocation(state, links.get(state.invocation_id), calls[state.invocation_id], out))
    out.records += [_tool(tool) for tool in tools]
    out.records += [_compaction(compaction, calls.get(compaction.invocation_id, []), out) for compaction in compactions]
    out.records += [dict(sandbox) for sandbox in sandboxes]
    out.summary = _summary(invocations, present, links, tools, compactions)
    return out


def _when(call: tuple[Moment, dict[str, Any] | None]) -> Moment:
    return call[0]


def _started(state: InvocationState) -> int:
    return state.start[1] if state.start is not None else -1


def _settle_links(
    ordered: list[InvocationState], present: set[str], out: Assembled
) -> dict[str, tuple[str, str | None]]:
    """Each invocation's accepted (parent, spawning call), in order; a link that would close a cycle is dropped."""
    forest = LinkForest()
    accepted: dict[str, tuple[str, str | None]] = {}
    for state in ordered:
        invocation_id, parent = state.invocation_id, state.parent
        if parent is None:
            continue
        if parent == invocation_id or not forest.link(invocation_id, parent):
            out.gaps.append(("cyclic_subagent_parent", invocation_id, parent))
            out.problems.append((f"invocation {invocation_id!r} names {parent!r} as parent: a cycle; dropped", parent))
            continue
        accepted[invocation_id] = (parent, state.spawned_by)
        if parent not in present:
            out.gaps.append(("subagent_parent_unavailable", invocation_id, parent))
            out.problems.append((f"invocation {invocation_id!r} names parent {parent!r}, never started", invocation_id))
        if state.unattributed:
            out.gaps.append(("subagent_spawn_unattributed", invocation_id, None))
    return accepted


def _invocation(
    state: InvocationState,
    link: tuple[str, str | None] | None,
    calls: list[tuple[Moment, dict[str, Any] | None]],
    out: Assembled,
) -> dict[str, Any]:
    owner = state.invocation_id
    if not state.started:
        out.gaps.append(("invocation_outcome_unavailable", owner, None))
        out.problems.append((f"invocation {owner!r} was named by records but never started", owner))
    duration = None
    if state.start is not None and state.end is not None:
        if state.end < state.start:
            out.problems.append((f"invocation {owner!r} ends before it starts; its duration is dropped", owner))
        else:
            duration = _milliseconds(state.end[0] - state.start[0])
    return {
        "kind": "agent_invocation",
        "invocation_id": owner,
        "parent_invocation_id": link[0] if link is not None else None,
        "spawned_by_tool_call_id": link[1] if link is not None else None,
        "status": state.status,
        "duration_ms": duration,
        "error_type": state.error_type,
        "model_calls": [ref for _, ref in calls if ref is not None],
        "conversation": [],
    }


def _milliseconds(seconds: float) -> float | None:
    # Two finite instants can still be further apart than a double counts in milliseconds.
    duration = seconds * 1000
    return round(duration, 3) if math.isfinite(duration) else None


def _tool(tool: ToolState) -> dict[str, Any]:
    started, completed = tool.started_at, tool.completed_at
    duration = _milliseconds(completed - started) if started is not None and completed is not None else None
    return {
        "kind": "tool_call",
        "invocation_id": tool.invocation_id,
        "tool_call_id": tool.tool_call_id,
        "sandbox_id": tool.sandbox_id,
        "tool_name": tool.name,
        "started_at": started,
        "completed_at": completed,
        "duration_ms": duration,
        "timing_source": tool.timing_source if started is not None or completed is not None else None,
        "status": tool.status,
        "error_type": tool.error_type,
    }


def _compaction(
    compaction: CompactionState, calls: list[tuple[Moment, dict[str, Any] | None]], out: Assembled
) -> dict[str, Any]:
    """The compaction with its model calls: the last before it, those while it was open, the first after it."""
    owner = compaction.invocation_id
    moments = [when for when, _ in calls]
    first_after_start = bisect.bisect_right(moments, compaction.start)
    before = calls[first_after_start - 1][1] if first_after_start else None
    during: list[dict[str, Any]] = []
    after = None
    if compaction.end is not None:
        first_after_end = bisect.bisect_right(moments, compaction.end)
        during = [ref for _, ref in calls[first_after_start:first_after_end] if ref is not None]
        after = calls[first_after_end][1] if first_after_end < len(calls) else None
    if before is None:
        out.gaps.append(("compaction_before_model_call_unavailable", owner, None))
    if after is None:
        out.gaps.append(("compaction_after_model_call_unavailable", owner, None))
    return {
        "kind": "context_compaction",
        "invocation_id": owner,
        "observed_at": known(compaction.start[0]),
        "trigger": compaction.trigger,
        "tokens_before": compaction.tokens_before,
        "tokens_after": compaction.tokens_after,
        "outcome": compaction.outcome,
        "summary": compaction.summary,
        "first_kept_item_id": compaction.first_kept_item_id,
        "before_model_call": before,
        "model_calls": during,
        "after_model_call": after,
    }


def _summary(
    invocations: Mapping[str, InvocationState],
    present: set[str],
    links: Mapping[str, tuple[str, str | None]],
    tools: list[ToolState],
    compactions: list[CompactionState],
) -> RunSummary:
    main_turns = sum(len(invocations[i].calls) for i in present if i not in links)
    subagent_turns = sum(len(invocations[i].calls) for i in present if i in links)
    moments = [
        moment[0]
        for state in invocations.values()
        for moment in (state.start, state.end)
        if moment is not None and math.isfinite(moment[0])
    ]
    moments += [t for tool in tools for t in (tool.started_at, tool.completed_at) if t is not None]
    return RunSummary(
        tool_calls=len(tools),
        tool_errors=sum(1 for tool in tools if tool.status in ("failed", "timeout")),
        main_turns=main_turns,
        subagent_turns=subagent_turns,
        subagent_calls=sum(1 for parent, spawned_by in links.values() if spawned_by is not None),
        compactions=len(compactions),
        duration_s=_span(moments),
    )


def _span(moments: list[float]) -> float | None:
    """Seconds from the first moment recorded to the last; None without any, or beyond what a double holds."""
    if not moments:
        return None
    span = max(moments) - min(moments)
    return span if math.isfinite(span) else None


def outcome_of(
    harness: str,
    failure_kind: Any,
    status: Any,
    error_name: Any,
    message: Any,
    retryable: Any,
    harness_version: Any,
) -> tuple[AgentOutcome, str | None]:
    """The outcome a harness states, and the misuse in what it gave (an unknown kind, a value of the wrong type)."""
    evidence = Evidence(harness, RECORDER_CLASSIFIER)
    problems: list[str] = []

    def kept(value: Any, what: str, wanted: type) -> Any:
        if value is None or (isinstance(value, wanted) and not (wanted is int and isinstance(value, bool))):
            return value
        problems.append(f"{what} must be {wanted.__name__} or None, not {type(value).__name__}; left out")
        return None

    evidence.harness_version = kept(harness_version, "harness_version", str)
    name, text, transient = (
        kept(error_name, "error_name", str),
        kept(message, "message", str),
        kept(retryable, "retryable", bool),
    )
    code = status_code(kept(status, "status_code", int))
    if status is not None and code is None and not problems:
        problems.append(f"status_code {status!r} is no HTTP status within 64 bits; left out")
    kind = kept(failure_kind, "failure_kind", str)
    if kind is not None and kind not in FAILURE_KINDS:
        problems.append(f"failure_kind must be one of {', '.join(FAILURE_KINDS)}, not {kind!r}; unknown_error kept")
        kind = UNKNOWN_ERROR
    if kind is not None:
        evidence.signal("recorder", "failure_kind", kind)
    elif code is not None:
        kind = kind_for_status(code) or UNKNOWN_ERROR
        evidence.signal("recorder", "status_code", code)
    elif name is not None or text is not None:
        kind = UNKNOWN_ERROR
        evidence.signal("recorder", "error_name" if name is not None else "message", name or text)
    built = evidence.outcome(kind, status_code=code, error_name=name, message=text, retryable=transient)
    return built, "; ".join(problems) or None
