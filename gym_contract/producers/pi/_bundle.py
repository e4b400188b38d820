"""Turn the facts of one Pi artifact into the bundle's records and gaps (HARNESSES 2.3, with artifact timing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from gym_contract._values import finite
from gym_contract.models import ContextCompactionObservation, ObservationGap
from gym_contract.producers._kit import gap, tool_call_record
from gym_contract.producers._pi_session import Compaction, PiRun, ToolCall

# Gaps about the file rather than the run's one invocation.
_FILE_GAPS: Final = frozenset({"malformed_transcript_line", "invalid_transcript_record", "transcript_unreadable"})


@dataclass(frozen=True)
class Ending:
    """How the invocation ended, as its record states it."""

    status: str
    error_type: str | None


def assemble(
    run: PiRun, owner: str, model_ref: dict[str, Any] | None, ending: Ending
) -> tuple[list[dict[str, Any]], list[ObservationGap]]:
    """The invocation, its tool calls and its compactions, and every gap, for the one invocation ``owner``."""
    gaps = [gap("subagent_hierarchy_unavailable", owner)]
    gaps += [
        found if found.code in _FILE_GAPS else found.model_copy(update={"invocation_id": owner}) for found in run.gaps
    ]
    invocation = {
        "kind": "agent_invocation",
        "invocation_id": owner,
        "parent_invocation_id": None,
        "spawned_by_tool_call_id": None,
        "status": ending.status,
        "duration_ms": None,
        "error_type": ending.error_type,
        "model_calls": [_ref(model_ref, response_id) for response_id in run.response_ids] if model_ref else [],
        "conversation": run.conversation,
    }
    if ending.status == "unknown":
        gaps.append(gap("invocation_outcome_unavailable", owner))
    if model_ref is None or not run.response_ids or run.unreferenced_responses:
        gaps.append(gap("model_call_ownership_unavailable", owner))
    records = [invocation]
    for call in run.tools.values():
        record, tool_gaps = _tool(run, owner, call)
        records.append(record)
        gaps += tool_gaps
    for compaction in run.compactions:
        record, compaction_gaps = _compaction(owner, compaction, model_ref)
        records.append(record)
        gaps += compaction_gaps
    return records, gaps


def _ref(model_ref: dict[str, Any] | None, response_id: str | None) -> dict[str, Any] | None:
    if model_ref is None or response_id is None:
        return None
    return {"model_ref": model_ref, "response_id": response_id}


def _tool_status(call: ToolCall, ended: bool) -> str:
    if call.is_error is not None:
        return "failed" if call.is_error else "completed"
    return "unknown" if ended else "incomplete"


def _tool(run: PiRun, owner: str, call: ToolCall) -> tuple[dict[str, Any], list[ObservationGap]]:
    """One call: a session times it from its message's end to its result; a stream from its execution events."""
    gaps: list[ObservationGap] = []
    if run.form == "session":
        ended = call.results > 0
        started, finished, source = call.called_at, call.completed_at if ended else None, "artifact"
    else:
        ended = call.ends > 0 or call.results > 0
        started, finished, source = call.started_at, call.completed_at if call.ends else None, "harness"
        if not run.timed:
            started = finished = None
    if started is None or finished is None:
        gaps.append(gap("tool_timing_unavailable", owner, call.call_id))
    elif finished < started:
        gaps.append(gap("tool_timing_invalid", owner, call.call_id))
        finished = None
    if ended and call.is_error is None:
        gaps.append(gap("tool_outcome_unavailable", owner, call.call_id))
    # Two finite instants can still be further apart than a double counts in milliseconds.
    duration = finite((finished - started) * 1000) if started is not None and finished is not None else None
    record = tool_call_record(
        owner,
        call.call_id,
        call.name,
        started=started,
        completed=finished,
        duration_ms=round(duration, 3) if duration is not None else None,
        status=_tool_status(call, ended),
        timing_source=source,
    )
    return record, gaps


def _compaction(
    owner: str, found: Compaction, model_ref: dict[str, Any] | None
) -> tuple[dict[str, Any], list[ObservationGap]]:
    before, after = _ref(model_ref, found.before), _ref(model_ref, found.after)
    defaults = ContextCompactionObservation.model_validate(
        {"kind": "context_compaction", "invocation_id": owner, "outcome": found.outcome}
    ).model_dump(mode="json")
    record = {
        **defaults,
        "observed_at": found.observed_at,
        "trigger": found.trigger,
        "tokens_before": found.tokens_before,
        "tokens_after": found.tokens_after,
        "summary": found.summary,
        "first_kept_item_id": found.first_kept_item_id,
        "before_model_call": before,
        "after_model_call": after,
    }
    gaps: list[ObservationGap] = []
    if not found.started:
        gaps.append(gap("compaction_start_unavailable", owner))
    if not found.has_result:
        gaps.append(gap("compaction_result_unavailable", owner))
    else:
        if found.tokens_before is None:
            gaps.append(gap("compaction_tokens_before_unavailable", owner))
        if found.summary is None:
            gaps.append(gap("compaction_summary_unavailable", owner))
        if found.first_kept_item_id is None:
            gaps.append(gap("compaction_boundary_unavailable", owner))
        if found.tokens_after is None:
            gaps.append(gap("compaction_tokens_after_unavailable", owner))
    if found.outcome == "unknown":
        gaps.append(gap("compaction_outcome_unavailable", owner))
    if found.observed_at is None:
        gaps.append(gap("compaction_timestamp_missing", owner))
    if before is None:
        gaps.append(gap("compaction_before_model_call_unavailable", owner))
    if after is None:
        gaps.append(gap("compaction_after_model_call_unavailable", owner))
    return record, gaps
