"""What one Codex session says — conversation, tool calls, turns, tokens, compactions — and its bundle records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gym_contract._values import finite
from gym_contract.models import ContextCompactionObservation, ObservationGap
from gym_contract.producers._kit import gap, tool_call_record, tool_interval


@dataclass
class ToolEnd:
    """What an end event (`exec_command_end`, `mcp_tool_call_end`, `patch_apply_end`, an exec item) says of a call."""

    at: float | None
    duration_ms: float | None
    status: str
    error_type: str | None = None


@dataclass
class Tool:
    """One tool call: where it started (the model's call item), its output, and the end event that closed it."""

    name: str | None = None
    starts: list[float | None] = field(default_factory=list)
    outputs: list[tuple[float | None, str]] = field(default_factory=list)  # (when, status the output states)
    ends: list[ToolEnd] = field(default_factory=list)
    timeless: bool = False  # the artifact form records no time at all (`exec --json`)


@dataclass
class Compaction:
    observed_at: float | None
    summary: str | None
    merged_event: bool = False  # a `context_compacted` event was folded into it


@dataclass
class Session:
    """One Codex session (a thread): one invocation of the bundle."""

    session_id: str
    file: str
    version: str | None = None
    parent_id: str | None = None  # `session_meta.source.subagent.thread_spawn.parent_thread_id`
    conversation: list[dict[str, Any]] = field(default_factory=list)
    tools: dict[str, Tool] = field(default_factory=dict)
    spawned: dict[str, str] = field(default_factory=dict)  # child session id → the `spawn_agent` call id
    compactions: list[Compaction] = field(default_factory=list)
    turns_started: int = 0
    turns_completed: int = 0
    turns_aborted: int = 0
    turns_failed: int = 0
    turn_failed: bool = False  # the current turn has had its fatal error
    turn_durations_ms: list[float] = field(default_factory=list)
    first_at: float | None = None
    last_at: float | None = None
    tokens: dict[str, int | None] | None = None  # the last totals the session states
    copied_tokens: dict[str, int | None] | None = None  # a forked session's: the last totals of the copied history
    tokens_include_copied: bool = False  # Codex carried the copied totals on into the session's own
    events: list[dict[str, Any]] = field(default_factory=list)  # every line, for the outcome classifier
    gaps: list[ObservationGap] = field(default_factory=list)

    def tool(self, call_id: str) -> Tool:
        found = self.tools.get(call_id)
        if found is None:
            found = self.tools[call_id] = Tool()
        return found

    def seen(self, at: float | None) -> None:
        if at is None:
            return
        self.first_at = at if self.first_at is None else min(self.first_at, at)
        self.last_at = at if self.last_at is None else max(self.last_at, at)

    def own_tokens(self) -> dict[str, int | None] | None:
        """The totals of the session's own model calls: a fork's, less the copied totals Codex carried on into them."""
        if self.tokens is None or not self.tokens_include_copied or self.copied_tokens is None:
            return self.tokens
        own: dict[str, int | None] = {}
        for key, value in self.tokens.items():
            carried = self.copied_tokens.get(key)
            own[key] = value - carried if value is not None and carried is not None else None
        return own

    def duration_ms(self) -> float | None:
        """The turns' own durations when every started turn states one, else the span of the line timestamps."""
        if self.turns_started and len(self.turn_durations_ms) == self.turns_started:
            return finite(sum(self.turn_durations_ms))
        if self.first_at is not None and self.last_at is not None:
            return finite(round((self.last_at - self.first_at) * 1000, 3))
        return None


def tool_records(session: Session) -> tuple[list[dict[str, Any]], list[ObservationGap]]:
    """One `tool_call` record per call id, timed by its end event when it has one, else by its call and output lines."""
    records: list[dict[str, Any]] = []
    gaps: list[ObservationGap] = []
    owner = session.session_id
    for call_id, tool in session.tools.items():
        if len(tool.starts) > 1 or len(tool.outputs) > 1 or len(tool.ends) > 1:
            gaps.append(gap("ambiguous_tool_artifact", owner, call_id))
            continue
        end = tool.ends[0] if tool.ends else None
        output = tool.outputs[0] if tool.outputs else None
        started = tool.starts[0] if tool.starts else None
        finished = end.at if end is not None else output[0] if output is not None else None
        duration: float | None = None
        if tool.timeless:
            gaps.append(gap("tool_timing_unavailable", owner, call_id))
        elif (
            end is not None
            and end.at is not None
            and end.duration_ms is not None
            and _fits(end.at, end.duration_ms, started)
        ):
            # The executor timed the process itself: its start is the end, less that duration.
            duration, started = end.duration_ms, end.at - end.duration_ms / 1000
        else:
            if end is not None and end.duration_ms is not None:
                # A duration longer than the time since the call was made cannot be the call's.
                gaps.append(gap("tool_timing_invalid", owner, call_id))
            finished, interval_gaps = tool_interval(
                owner,
                call_id,
                started=started,
                finished=finished,
                start_seen=bool(tool.starts),
                end_seen=end is not None or output is not None,
            )
            gaps.extend(interval_gaps)
            if started is not None and finished is not None:
                duration = finite(round((finished - started) * 1000, 3))
        if end is not None:
            status, error_type = end.status, end.error_type
        elif output is not None:
            status, error_type = output[1], None
        else:
            status, error_type = "incomplete", None
        records.append(
            tool_call_record(
                owner,
                call_id,
                tool.name,
                started=started,
                completed=finished,
                duration_ms=duration,
                status=status,
                error_type=error_type,
            )
        )
    return records, gaps


_CLOCK_SLACK_S = 1.0
"""How much earlier than the call's own line the executor may place the process start: the two clocks differ."""


def _fits(ended_at: float, duration_ms: float, called_at: float | None) -> bool:
    """Whether the executor's start (the end, less its duration) is a time, and not before the call was made."""
    start = finite(ended_at - duration_ms / 1000)
    return start is not None and (called_at is None or start >= called_at - _CLOCK_SLACK_S)


def compaction_records(session: Session) -> tuple[list[dict[str, Any]], list[ObservationGap]]:
    """One `context_compaction` per compaction recorded; Codex writes no call ids, token counts or trigger for it."""
    records: list[dict[str, Any]] = []
    gaps: list[ObservationGap] = []
    owner = session.session_id
    for found in session.compactions:
        record = ContextCompactionObservation.model_validate(
            {"kind": "context_compaction", "invocation_id": owner, "outcome": "completed"}
        ).model_dump(mode="json")
        record.update(observed_at=found.observed_at, summary=found.summary)
        records.append(record)
        gaps.append(gap("compaction_model_call_boundary_unavailable", owner))
        gaps.append(gap("compaction_token_counts_unavailable", owner))
        gaps.append(gap("compaction_first_kept_item_unavailable", owner))
        if found.summary is None:
            gaps.append(gap("compaction_summary_unavailable", owner))
        if found.observed_at is None:
            gaps.append(gap("compaction_timestamp_missing", owner))
    return records, gaps
