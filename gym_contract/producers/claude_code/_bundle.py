"""Settle the Claude Code invocation tree and assemble the observation bundle's records and gaps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gym_contract._parent_links import LinkForest
from gym_contract._values import finite
from gym_contract.models import ContextCompactionObservation, ObservationGap
from gym_contract.producers._kit import gap, tool_call_record, tool_interval
from gym_contract.producers.claude_code._mapping import Compaction, Mapped, ToolEnds


@dataclass(frozen=True)
class RootFacts:
    """What the stream says about the root invocation, when it says anything."""

    session_id: str | None = None
    status: str | None = None
    error_type: str | None = None
    duration_ms: float | None = None
    attempts: tuple[str, ...] = ()  # outcomes of the stream's compaction attempts that left no boundary


@dataclass
class Assembled:
    records: list[dict[str, Any]] = field(default_factory=list)
    gaps: list[ObservationGap] = field(default_factory=list)
    parents: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # child → (parent, tool call, status)


_CHILD_STATUS = {
    "completed": "completed",
    "failed": "failed",
    "timeout": "incomplete",
    "cancelled": "incomplete",
    "unknown": "unknown",  # linked by a sidecar, but the spawning call never returned a result
}


def _settle_links(mapped: Mapped, gaps: list[ObservationGap]) -> dict[str, tuple[str, str, str]]:
    """Accept each child's one claimed parent, in the order the claims were seen, unless it makes a cycle."""
    claims: dict[str, set[tuple[str, str]]] = {}
    for child, parent, call_id, _status in mapped.links:
        if child == parent:
            gaps.append(gap("cyclic_subagent_parent", child, parent))
        else:
            claims.setdefault(child, set()).add((parent, call_id))
    conflicting = {child for child, claimed in claims.items() if len(claimed) > 1}
    gaps += [gap("conflicting_subagent_parent", child) for child in claims if child in conflicting]
    accepted: dict[str, tuple[str, str, str]] = {}
    links = LinkForest()  # the accepted links, so that a chain of any depth is not walked again per child
    for child, parent, call_id, status in mapped.links:
        if child == parent or child in conflicting or child in accepted:
            continue
        if not links.link(child, parent):
            gaps.append(gap("cyclic_subagent_parent", child, parent))
            conflicting.add(child)  # one report per child
            continue
        accepted[child] = (parent, call_id, status)
    return accepted


def assemble(mapped: Mapped, model_ref: dict[str, Any] | None, root: RootFacts | None) -> Assembled:
    out = Assembled()
    link_gaps: list[ObservationGap] = []
    out.parents = _settle_links(mapped, link_gaps)
    claimed = {child for child, *_ in mapped.links}
    invocation_gaps: list[ObservationGap] = []
    for invocation in mapped.invocations.values():
        record: dict[str, Any] = {
            "kind": "agent_invocation",
            "invocation_id": invocation.invocation_id,
            "parent_invocation_id": None,
            "spawned_by_tool_call_id": None,
            "status": "unknown",
            "duration_ms": None,
            "error_type": None,
            "model_calls": [{"model_ref": model_ref, "response_id": r} for r in invocation.response_ids]
            if model_ref is not None
            else [],
            "conversation": invocation.conversation,
        }
        owner = invocation.invocation_id
        link = out.parents.get(owner)
        if link is not None:
            parent, call_id, status = link
            record["parent_invocation_id"], record["spawned_by_tool_call_id"] = parent, call_id
            record["status"] = _CHILD_STATUS.get(status, "incomplete")
            record["error_type"] = status if status in ("failed", "timeout", "cancelled") else None
            if not invocation.has_events:
                invocation_gaps.append(gap("subagent_transcript_missing", owner))
            if record["status"] == "unknown":
                invocation_gaps.append(gap("invocation_outcome_unavailable", owner))
        elif invocation.is_subagent:
            if owner not in claimed:
                invocation_gaps.append(gap("subagent_parent_unavailable", owner))
            invocation_gaps.append(gap("invocation_outcome_unavailable", owner))
        elif root is not None and root.status is not None and _is_the_root(owner, mapped, root):
            record["status"], record["error_type"] = root.status, root.error_type
            record["duration_ms"] = root.duration_ms
        else:
            invocation_gaps.append(gap("invocation_outcome_unavailable", owner))
        out.records.append(record)
    tool_records, tool_gaps = _tools(mapped.tools)
    out.records += tool_records
    compaction_records, compaction_gaps = _compactions(mapped.compactions, model_ref)
    out.records += compaction_records
    attempt_records, attempt_gaps = _attempts(mapped, root)
    out.records += attempt_records
    out.gaps = link_gaps + invocation_gaps + tool_gaps + compaction_gaps + attempt_gaps
    return out


def roots(mapped: Mapped) -> list[str]:
    return [i.invocation_id for i in mapped.invocations.values() if not i.is_subagent]


def _is_the_root(invocation_id: str, mapped: Mapped, root: RootFacts) -> bool:
    """The stream speaks for the session it names, or for the only root when it names none."""
    if root.session_id is not None:
        return invocation_id == root.session_id
    return roots(mapped) == [invocation_id]


def _tools(tools: dict[tuple[str, str], ToolEnds]) -> tuple[list[dict[str, Any]], list[ObservationGap]]:
    records: list[dict[str, Any]] = []
    gaps: list[ObservationGap] = []
    for (owner, call_id), ends in tools.items():
        if len(ends.starts) > 1 or len(ends.finishes) > 1:
            gaps.append(gap("ambiguous_tool_artifact", owner, call_id))
            continue
        started = ends.starts[0] if ends.starts else None
        finished, status = ends.finishes[0] if ends.finishes else (None, "incomplete")
        finished, interval_gaps = tool_interval(
            owner,
            call_id,
            started=started,
            finished=finished,
            start_seen=bool(ends.starts),
            end_seen=bool(ends.finishes),
        )
        gaps.extend(interval_gaps)
        # Two finite instants can still be further apart than a double counts in milliseconds.
        duration = finite((finished - started) * 1000) if started is not None and finished is not None else None
        records.append(
            tool_call_record(
                owner,
                call_id,
                ends.name,
                started=started,
                completed=finished,
                duration_ms=round(duration, 3) if duration is not None else None,
                status=status,
            )
        )
    return records, gaps


def _ref(model_ref: dict[str, Any] | None, response_id: str | None) -> dict[str, Any] | None:
    if model_ref is None or response_id is None:
        return None
    return {"model_ref": model_ref, "response_id": response_id}


def _compaction_record(invocation_id: str, outcome: str, **fields: Any) -> dict[str, Any]:
    """A compaction with every key, the contract's defaults filling what the transcript did not say."""
    record = ContextCompactionObservation.model_validate(
        {"kind": "context_compaction", "invocation_id": invocation_id, "outcome": outcome}
    )
    return {**record.model_dump(mode="json"), **fields}


def _compactions(
    compactions: list[Compaction], model_ref: dict[str, Any] | None
) -> tuple[list[dict[str, Any]], list[ObservationGap]]:
    records: list[dict[str, Any]] = []
    gaps: list[ObservationGap] = []
    for found in compactions:
        owner = found.invocation_id
        before, after = _ref(model_ref, found.before), _ref(model_ref, found.after)
        record = _compaction_record(
            owner,
            found.outcome,
            observed_at=found.observed_at,
            trigger=found.trigger,
            tokens_before=found.tokens_before,
            tokens_after=found.tokens_after,
            summary=found.summary,
            before_model_call=before,
            after_model_call=after,
        )
        records.append(record)
        if before is None:
            gaps.append(gap("compaction_before_model_call_unavailable", owner))
        if after is None:
            gaps.append(gap("compaction_after_model_call_unavailable", owner))
        gaps.append(gap("compaction_model_call_reference_unavailable", owner))
        if found.outcome == "unknown":
            gaps.append(gap("compaction_outcome_unavailable", owner))
        if found.observed_at is None:
            gaps.append(gap("compaction_timestamp_missing", owner))
    return records, gaps


def _attempts(mapped: Mapped, root: RootFacts | None) -> tuple[list[dict[str, Any]], list[ObservationGap]]:
    """Stream compaction attempts that failed or never closed: bare compactions of the stream's session."""
    if root is None or not root.attempts:
        return [], []
    owner = root.session_id if root.session_id in mapped.invocations else None
    if owner is None and root.session_id is None and len(roots(mapped)) == 1:
        owner = roots(mapped)[0]
    if owner is None:
        return [], []  # the stream names a session the transcripts never show; nothing to attach to
    records: list[dict[str, Any]] = []
    gaps: list[ObservationGap] = []
    for outcome in root.attempts:
        records.append(_compaction_record(owner, outcome))
        gaps += [
            gap("compaction_before_model_call_unavailable", owner),
            gap("compaction_after_model_call_unavailable", owner),
            gap("compaction_model_call_reference_unavailable", owner),
        ]
        if outcome == "unknown":
            gaps.append(gap("compaction_outcome_unavailable", owner))
        gaps.append(gap("compaction_timestamp_missing", owner))
    return records, gaps
