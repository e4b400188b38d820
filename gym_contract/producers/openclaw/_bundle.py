"""One OpenClaw session's transcript (the Pi session format) to its invocation, tool calls, compactions and gaps."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from gym_contract._values import finite
from gym_contract.models import AgentOutcome, ContextCompactionObservation, ObservationGap
from gym_contract.outcome._pi import classify_pi
from gym_contract.producers._kit import artifact_name, gap, numbered_lines, tool_call_record
from gym_contract.producers._pi_session import STATUS_BY_STOP, Compaction, PiRun, ToolCall, read_session
from gym_contract.reading._json_parsing import loads

# OpenClaw's `details.status` of a tool result → the call's status (anything else: `isError` decides).
_TOOL_STATUS: Final = {
    "error": "failed",
    "failed": "failed",
    "completed": "completed",
    "success": "completed",
    "ok": "completed",
    "timeout": "timeout",
}


@dataclass
class Transcript:
    """One transcript file: its lines parsed (None for a damaged one), and the gaps reading it left."""

    name: str
    lines: list[dict[str, Any] | None] = field(default_factory=list)
    gaps: list[ObservationGap] = field(default_factory=list)
    failure: OSError | None = None
    """Why the file could not be read, when it could not."""

    @property
    def readable(self) -> bool:
        return self.failure is None

    @property
    def objects(self) -> list[tuple[int, dict[str, Any]]]:
        return [(number, line) for number, line in enumerate(self.lines, 1) if line is not None]


def read_transcript(path: Path, max_line_bytes: int) -> Transcript:
    """The file's entries; a line that is not a JSON object is a gap naming `<file>:<line>`, never an exception."""
    found = Transcript(artifact_name(path))
    try:
        for number, raw in numbered_lines(path, max_line_bytes):
            if raw is not None and not raw.strip():
                found.lines.append(None)
                continue
            try:
                value = loads(raw) if raw is not None else None
            except orjson.JSONDecodeError:
                value = None
            if not isinstance(value, dict):
                found.gaps.append(gap("agent_artifact_record_unparseable", detail=f"{found.name}:{number}"))
            found.lines.append(value if isinstance(value, dict) else None)
    except OSError as error:
        found.failure = error
    return found


@dataclass(frozen=True)
class Host:
    """What the host saw of the process: applied to the run's root sessions, which the process ran."""

    exit_code: int | None
    timed_out: bool


def outcome(transcript: Transcript, host: Host) -> AgentOutcome:
    """The root session's outcome: the Pi classifier's verdict on its stop reasons, told as OpenClaw's."""
    verdict = classify_pi([line for _, line in transcript.objects], exit_code=host.exit_code, timed_out=host.timed_out)
    return verdict.model_copy(update={"harness": "openclaw"})


def session_records(
    key: str,
    parent: str | None,
    transcript: Transcript,
    model_ref: dict[str, Any] | None,
    host: Host | None,
) -> tuple[list[dict[str, Any]], list[ObservationGap], PiRun]:
    """The invocation ``key`` and its tool calls and compactions; ``host`` is given for a root session only."""
    run = read_session(transcript.objects, transcript.name, "openclaw")
    gaps = [found if found.invocation_id else found.model_copy(update={"invocation_id": key}) for found in run.gaps]
    status, error_type = _ending(run, transcript, host)
    if status == "unknown":
        gaps.append(gap("invocation_outcome_unavailable", key))
    response_ids = list(dict.fromkeys(run.response_ids))
    invocation = {
        "kind": "agent_invocation",
        "invocation_id": key,
        "parent_invocation_id": parent,
        "spawned_by_tool_call_id": None,
        "status": status,
        "duration_ms": None,
        "error_type": error_type,
        "model_calls": [{"model_ref": model_ref, "response_id": rid} for rid in response_ids] if model_ref else [],
        "conversation": run.conversation,
    }
    if model_ref is None or not response_ids or run.unreferenced_responses:
        gaps.append(gap("model_call_ownership_unavailable", key))
    if parent is not None:
        gaps.append(gap("subagent_spawn_tool_unavailable", key))
    records: list[dict[str, Any]] = [invocation]
    for call in run.tools.values():
        record, found = _tool(key, call)
        records += [record] if record is not None else []
        gaps += found
    for compaction in run.compactions:
        record, found = _compaction(key, compaction)
        records.append(record)
        gaps += found
    return records, gaps, run


def _ending(run: PiRun, transcript: Transcript, host: Host | None) -> tuple[str, str | None]:
    """The status the last assistant message's `stopReason` states; a root's host facts where it states none."""
    if host is not None and host.timed_out:
        return "incomplete", "timeout"
    terminal = run.terminal
    reason = terminal.stop_reason if terminal is not None else None
    if reason in STATUS_BY_STOP:
        if reason == "stop":
            return "completed", None
        kind = outcome(transcript, host or Host(None, False)).failure_kind
        return STATUS_BY_STOP[reason], kind or reason
    if host is not None and host.exit_code not in (None, 0):
        return "failed", f"process_exit_{host.exit_code}"
    return "unknown", None


def _tool(owner: str, call: ToolCall) -> tuple[dict[str, Any] | None, list[ObservationGap]]:
    """One call and its result: timed by the result's time and `details.durationMs`; no record if either is not one."""
    if call.calls > 1:
        return None, [gap("tool_call_identity_ambiguous", owner, call.call_id)]
    if call.calls == 0:
        return None, [gap("tool_result_unowned", owner, call.call_id)]
    gaps = [gap("tool_result_unowned", owner, call.call_id)] * max(0, call.results - 1)
    finished = call.reported_at if call.reported_at is not None else call.completed_at
    started: float | None = None
    duration: float | None = None
    if call.results and finished is not None and call.duration_ms is not None:
        duration, started = call.duration_ms, finished - call.duration_ms / 1000
    elif call.results and finished is not None and call.called_at is not None and finished >= call.called_at:
        # No measured duration: the call ran at most from its message's end to its result.
        duration, started = finite((finished - call.called_at) * 1000), call.called_at
    if started is not None and started < 0:  # a duration longer than the epoch: no instant the call began at
        started = duration = None
    if not call.results or started is None:
        finished = None
        gaps.append(gap("tool_timing_unavailable", owner, call.call_id))
    status = _status(call)
    if call.results and status == "unknown":
        gaps.append(gap("tool_outcome_unavailable", owner, call.call_id))
    # Without a start there is no end either (above): the record is timed by both or by neither.
    record = tool_call_record(
        owner,
        call.call_id,
        call.name,
        started=started,
        completed=finished,
        duration_ms=round(duration, 3) if duration is not None and started is not None else None,
        status=status,
    )
    return record, gaps


def _status(call: ToolCall) -> str:
    if not call.results:
        return "incomplete"
    native = _TOOL_STATUS.get(call.native_status or "")
    if call.is_error is True or native == "failed":
        return "failed"
    if native is not None:
        return native
    return "completed" if call.is_error is False else "unknown"


def _compaction(owner: str, found: Compaction) -> tuple[dict[str, Any], list[ObservationGap]]:
    """A `compaction` entry: OpenClaw writes one when a compaction completed; it names no model call around it."""
    defaults = ContextCompactionObservation.model_validate(
        {"kind": "context_compaction", "invocation_id": owner, "outcome": "completed"}
    ).model_dump(mode="json")
    record = {
        **defaults,
        "observed_at": found.observed_at,
        "trigger": found.reason,
        "tokens_before": found.tokens_before,
        "tokens_after": found.tokens_after,
        "summary": found.summary,
        "first_kept_item_id": found.first_kept_item_id,
        "before_model_call": None,
        "after_model_call": None,
    }
    gaps = [gap("compaction_model_call_boundary_unavailable", owner)]
    if found.summary is None:
        gaps.append(gap("compaction_summary_unavailable", owner))
    if found.tokens_after is None:
        gaps.append(gap("compaction_tokens_after_unavailable", owner))
    return record, gaps
