"""Claude Code producer: session transcripts and stream-json output to observations, outcome and run summary."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from gym_contract._values import finite, preview, text
from gym_contract.models import AgentObservationBundle, AgentOutcome
from gym_contract.outcome._base import check_process_facts
from gym_contract.outcome._claude_code import classify_claude_code
from gym_contract.producers.claude_code._bundle import RootFacts, assemble, roots
from gym_contract.producers.claude_code._files import MAX_LINE_BYTES, gap, read_transcripts, stream_events
from gym_contract.producers.claude_code._mapping import Mapped, map_events

__all__ = ["SUMMARY_FIELDS", "ClaudeCodeRun", "observe", "outcome", "read_run", "run_summary"]

SOURCE: Final = "claude_code"
SUMMARY_FIELDS: Final = (
    "result_success",
    "result_error",
    "result_missing",
    "context_overflow",
    "duration_s",
    "main_turns",
    "subagent_turns",
    "subagent_calls",
    "tool_calls",
    "tool_errors",
    "unknown_tool_calls",
)
"""The run summary's numbers (PRODUCERS R), in order; `internal_agents` follows them."""

Stream = str | os.PathLike[str] | Iterable[Any] | None


@dataclass(frozen=True)
class ClaudeCodeRun:
    """Everything one Claude Code run says: its observations, how it ended, and the run summary."""

    observations: AgentObservationBundle
    outcome: AgentOutcome | None  # None without a stream: how the run ended is not in the transcripts
    summary: dict[str, Any]

    def document(self) -> dict[str, Any]:
        """The `gym-contract observe claude-code` output: one JSON-ready object."""
        # Python mode: a signal may hold a number no double holds (NumberText), which the JSON writer keeps.
        return {
            "ng_agent_observations": self.observations.model_dump(mode="python"),
            "ng_agent_outcome": self.outcome.model_dump(mode="python") if self.outcome is not None else None,
            "run_summary": self.summary,
        }


def read_run(
    config_dir: str | os.PathLike[str],
    stream: Stream = None,
    model_ref: str | None = None,
    *,
    exit_code: int | None = None,
    timed_out: bool = False,
    measured_duration_s: float | None = None,
    sandboxed: bool | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> ClaudeCodeRun:
    """Read a run's `CLAUDE_CONFIG_DIR` and optionally its `claude -p --output-format stream-json --verbose` stdout.

    ``model_ref`` names the model server that served the run (`ModelServerRef.name`); without it no
    model-call references are made. ``exit_code``, ``timed_out`` and ``measured_duration_s`` are what
    the host saw of the process; ``sandboxed=False`` says the agent ran on the host without a sandbox
    (gap `no_sandbox_runtime`), which no transcript can tell. Unreadable or malformed input becomes
    gaps, never an exception. Raises ValueError only for a ``measured_duration_s`` that is not a
    number of seconds of at least 0 whose milliseconds a double holds, and TypeError or ValueError
    for an ``exit_code`` that is not an integer within 64 bits.
    """
    check_process_facts(exit_code, None)
    if measured_duration_s is not None and not _is_duration(measured_duration_s):
        shown = preview(measured_duration_s)
        raise ValueError(f"measured_duration_s must be a number of seconds of at least 0, not {shown}")
    lines = _stream_lines(stream)
    events = stream_events(lines) if lines is not None else None
    read = read_transcripts(config_dir, max_line_bytes)
    mapped = map_events(read.events, read.sidecars)
    server = {"type": "responses_api_models", "name": model_ref} if model_ref is not None else None
    facts = _root_facts(events, exit_code, timed_out, measured_duration_s) if events is not None else None
    assembled = assemble(mapped, server, facts)
    gaps = read.gaps + mapped.gaps + assembled.gaps
    if not mapped.invocations:
        gaps.append(gap("agent_transcript_unavailable"))
    if server is None:
        gaps.append(gap("model_call_ownership_unavailable"))
    if sandboxed is False:
        gaps.append(gap("no_sandbox_runtime"))
    bundle = AgentObservationBundle.model_validate({"source": SOURCE, "records": assembled.records, "gaps": gaps})
    ended = classify_claude_code(lines, exit_code=exit_code, timed_out=timed_out) if lines is not None else None
    summary = _summary(mapped, assembled.parents, events, ended, measured_duration_s)
    return ClaudeCodeRun(bundle, ended, summary)


def observe(
    config_dir: str | os.PathLike[str], stream: Stream = None, model_ref: str | None = None, **process: Any
) -> AgentObservationBundle:
    """The `ng_agent_observations` bundle of one run (`source: "claude_code"`); see `read_run`."""
    return read_run(config_dir, stream, model_ref, **process).observations


def run_summary(config_dir: str | os.PathLike[str], stream: Stream = None, **process: Any) -> dict[str, Any]:
    """The run's plain numbers (PRODUCERS R); a number the evidence cannot give is None."""
    return read_run(config_dir, stream, **process).summary


def outcome(stream: Stream = None, exit_code: int | None = None, timed_out: bool = False) -> AgentOutcome:
    """The run's `ng_agent_outcome`, from the stream and the process facts (the Claude Code classifier)."""
    return classify_claude_code(_stream_lines(stream), exit_code=exit_code, timed_out=timed_out)


def _stream_lines(stream: Stream) -> list[Any] | None:
    """The stream as a list of raw lines or parsed events, so that line numbers stay those of the stdout."""
    if stream is None:
        return None
    if isinstance(stream, (str, os.PathLike)):
        try:
            with open(stream, "rb") as handle:
                return handle.read().splitlines()
        except OSError:
            return []  # an unreadable stdout file says as much as an empty one: no result event
    return list(stream)


def _is_duration(seconds: Any) -> bool:
    # The bundle records milliseconds: those must be finite too.
    milliseconds = finite(seconds)
    return milliseconds is not None and milliseconds >= 0 and finite(milliseconds * 1000) is not None


def _last_result(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((e for e in reversed(events) if e.get("type") == "result"), None)


def _root_facts(
    events: list[dict[str, Any]], exit_code: int | None, timed_out: bool, measured_duration_s: float | None
) -> RootFacts:
    session_id: str | None = None
    attempts: list[str] = []
    open_attempt = False
    for event in events:
        session_id = session_id if session_id is not None else text(event.get("session_id"))
        if event.get("type") != "system" or event.get("subtype") != "status":
            continue
        if event.get("compact_result") in ("success", "failed"):
            if event["compact_result"] == "failed":
                attempts.append("failed")
            open_attempt = False
        elif event.get("status") == "compacting":
            if open_attempt:
                attempts.append("unknown")
            open_attempt = True
    if open_attempt:
        attempts.append("unknown")
    result = _last_result(events)
    status, error_type = _root_status(result, exit_code, timed_out)
    duration = _duration_ms(result)
    if duration is None:
        duration = measured_duration_s * 1000 if measured_duration_s is not None else None
    return RootFacts(session_id, status, error_type, duration, tuple(attempts))


def _duration_ms(result: dict[str, Any] | None) -> float | None:
    """The result's `duration_ms` as written (an int stays one) when it is a finite number of at least 0."""
    duration = result.get("duration_ms") if result is not None else None
    milliseconds = finite(duration)
    return duration if milliseconds is not None and milliseconds >= 0 else None


def _root_status(result: dict[str, Any] | None, exit_code: int | None, timed_out: bool) -> tuple[str, str | None]:
    subtype = result.get("subtype") if result is not None else None
    subtype = subtype if isinstance(subtype, str) else None
    if timed_out:
        return "incomplete", "timeout"
    if subtype == "error_max_turns":
        return "incomplete", subtype
    if result is not None and (result.get("is_error") is True or (subtype or "").startswith("error_")):
        return "failed", subtype if (subtype or "").startswith("error_") else "agent_error"
    if exit_code not in (None, 0):
        return "failed", f"process_exit_{exit_code}"
    if subtype == "success":
        return "completed", None
    return "incomplete", "result_missing"


def _summary(
    mapped: Mapped,
    parents: dict[str, tuple[str, str, str]],
    events: list[dict[str, Any]] | None,
    ended: AgentOutcome | None,
    measured_duration_s: float | None,
) -> dict[str, Any]:
    main = set(roots(mapped))
    main_turns = sum(len(i.response_ids) for i in mapped.invocations.values() if i.invocation_id in main)
    subagent_turns = sum(len(i.response_ids) for i in mapped.invocations.values() if i.invocation_id not in main)
    started = [key for key, ends in mapped.tools.items() if ends.starts]
    failed = [key for key, ends in mapped.tools.items() if any(status == "failed" for _, status in ends.finishes)]
    spawned = {(parent, call_id) for _, parent, call_id, _ in mapped.links}
    summary: dict[str, Any] = {
        "result_success": None,
        "result_error": None,
        "result_missing": None,
        "context_overflow": None,
        "duration_s": measured_duration_s,
        "main_turns": main_turns,
        "subagent_turns": subagent_turns,
        "subagent_calls": len(spawned),
        "tool_calls": len(started),
        "tool_errors": len(failed),
        "unknown_tool_calls": None,
    }
    if events is not None:
        result = _last_result(events)
        subtype = result.get("subtype") if result is not None else None
        is_error = result is not None and (
            result.get("is_error") is True or (isinstance(subtype, str) and subtype.startswith("error_"))
        )
        summary["result_success"] = result is not None and subtype == "success" and not is_error
        summary["result_error"] = is_error
        summary["result_missing"] = result is None
        summary["context_overflow"] = ended is not None and ended.failure_kind == "model_context_limit"
        duration = _duration_ms(result)
        if duration is not None:
            summary["duration_s"] = duration / 1000
        summary["unknown_tool_calls"] = _unknown_tool_calls(mapped, events)
    summary["internal_agents"] = dict(sorted(mapped.internal_agents.items()))
    return summary


def _unknown_tool_calls(mapped: Mapped, events: list[dict[str, Any]]) -> int | None:
    """Refused calls naming a tool absent from the `system/init` tool list; unknown without that list."""
    init = next((e for e in events if e.get("type") == "system" and e.get("subtype") == "init"), None)
    tools = init.get("tools") if init is not None else None
    if not isinstance(tools, list):
        return None
    offered = {name for name in tools if isinstance(name, str)}
    return sum(
        1
        for ends in mapped.tools.values()
        if ends.starts and ends.name not in offered and any(status == "failed" for _, status in ends.finishes)
    )
