"""Claude Code producer: session transcripts and stream-json output to observations, outcome and run summary."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Final

from gym_contract._values import count, finite, obj, preview, text
from gym_contract.models import AgentObservationBundle, AgentOutcome
from gym_contract.outcome._base import check_process_facts
from gym_contract.outcome._claude_code import classify_claude_code
from gym_contract.producers._kit import (
    COMMON_SUMMARY_FIELDS,
    MAX_LINE_BYTES,
    ArtifactForm,
    Observed,
    Producer,
    Rating,
    RunSummary,
    UnrecognisedArtifactError,
    gap,
)
from gym_contract.producers.claude_code._bundle import RootFacts, assemble, roots
from gym_contract.producers.claude_code._files import read_transcripts, stream_events
from gym_contract.producers.claude_code._mapping import Mapped, map_events

__all__ = ["PRODUCER", "SUMMARY_FIELDS", "ClaudeCodeRun", "observe", "outcome", "read_run", "run_summary"]

SOURCE: Final = "claude_code"
_OWN_SUMMARY_FIELDS: Final = (
    "result_success",
    "result_error",
    "result_missing",
    "context_overflow",
    "unknown_tool_calls",
)
SUMMARY_FIELDS: Final = COMMON_SUMMARY_FIELDS + _OWN_SUMMARY_FIELDS
"""The run summary's numbers in document order: every producer's, then Claude Code's own; `internal_agents` follows."""

Stream = str | os.PathLike[str] | Iterable[Any] | None


ClaudeCodeRun = Observed
"""What `read_run` returns: the `Observed` every producer returns (the name is kept for existing callers)."""


def observe(
    config_dir: str | os.PathLike[str],
    *,
    model_ref: str | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    stream: Stream = None,
    measured_duration_s: float | None = None,
    sandboxed: bool | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Observed:
    """Read a run's `CLAUDE_CONFIG_DIR` and optionally its `claude -p --output-format stream-json --verbose` stdout.

    ``model_ref`` names the model server that served the run (`ModelServerRef.name`); without it no
    model-call references are made. ``stream`` is the stdout: a path, raw lines or parsed events;
    without it there is no outcome, since the transcripts do not say how the run ended.
    ``exit_code``, ``timed_out`` and ``measured_duration_s`` are what the host saw of the process;
    ``sandboxed=False`` says the agent ran on the host without a sandbox (gap
    `no_sandbox_runtime`), which no transcript can tell. A config directory is a folder holding
    `projects/`; one whose `projects/` holds no session of the run is read (gap
    `agent_transcript_unavailable`), and malformed transcripts and streams, or one unreadable
    transcript among others, become gaps. Raises `UnrecognisedArtifactError` when ``config_dir`` is
    no folder, holds no `projects/` folder, or its transcripts cannot be read at all (`projects/`
    cannot be listed, or no transcript in it opens); ValueError for a ``measured_duration_s`` that is
    not a number of seconds of at least 0 whose milliseconds a double holds, and TypeError or
    ValueError for an ``exit_code`` that is not an integer within 64 bits.
    """
    check_process_facts(exit_code, None)
    if not os.path.isdir(config_dir):
        raise UnrecognisedArtifactError(config_dir, "not a directory")
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
    compactions = sum(1 for record in bundle.records if record.kind == "context_compaction")
    summary = _summary(mapped, events, ended, measured_duration_s, compactions)
    return Observed(bundle, ended, summary)


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
) -> Observed:
    """`observe` with the stream and the model server also taken by position, as this producer first took them."""
    return observe(
        config_dir,
        model_ref=model_ref,
        exit_code=exit_code,
        timed_out=timed_out,
        stream=stream,
        measured_duration_s=measured_duration_s,
        sandboxed=sandboxed,
        max_line_bytes=max_line_bytes,
    )


def run_summary(config_dir: str | os.PathLike[str], stream: Stream = None, **process: Any) -> dict[str, Any]:
    """The run's plain numbers (PRODUCERS R) as the document writes them; a number the evidence cannot give is None."""
    return observe(config_dir, stream=stream, **process).summary.as_dict()


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
    events: list[dict[str, Any]] | None,
    ended: AgentOutcome | None,
    measured_duration_s: float | None,
    compactions: int,
) -> RunSummary:
    main = set(roots(mapped))
    main_turns = sum(len(i.response_ids) for i in mapped.invocations.values() if i.invocation_id in main)
    subagent_turns = sum(len(i.response_ids) for i in mapped.invocations.values() if i.invocation_id not in main)
    started = [key for key, ends in mapped.tools.items() if ends.starts]
    failed = [key for key, ends in mapped.tools.items() if any(status == "failed" for _, status in ends.finishes)]
    spawned = {(parent, call_id) for _, parent, call_id, _ in mapped.links}
    extra: dict[str, Any] = {
        "result_success": None,
        "result_error": None,
        "result_missing": None,
        "context_overflow": None,
        "unknown_tool_calls": None,
    }
    duration_s = measured_duration_s
    tokens: dict[str, int | None] = {}
    if events is not None:
        result = _last_result(events)
        subtype = result.get("subtype") if result is not None else None
        is_error = result is not None and (
            result.get("is_error") is True or (isinstance(subtype, str) and subtype.startswith("error_"))
        )
        extra["result_success"] = result is not None and subtype == "success" and not is_error
        extra["result_error"] = is_error
        extra["result_missing"] = result is None
        extra["context_overflow"] = ended is not None and ended.failure_kind == "model_context_limit"
        duration = _duration_ms(result)
        if duration is not None:
            duration_s = duration / 1000
        extra["unknown_tool_calls"] = _unknown_tool_calls(mapped, events)
        tokens = _result_tokens(result)
    extra["internal_agents"] = dict(sorted(mapped.internal_agents.items()))
    return RunSummary(
        tool_calls=len(started),
        tool_errors=len(failed),
        main_turns=main_turns,
        subagent_turns=subagent_turns,
        subagent_calls=len(spawned),
        compactions=compactions,
        duration_s=duration_s,
        extra=extra,
        **tokens,
    )


def _result_tokens(result: dict[str, Any] | None) -> dict[str, int | None]:
    """The session's token totals from the final result's `usage`; transcript lines repeat usage, so never those."""
    usage = obj(result.get("usage")) if result is not None else None
    if usage is None:
        return {}
    fresh, read, written = (count(usage.get(key)) for key in _PROMPT_TOKENS)
    # Anthropic counts cache reads and writes apart from input_tokens; the summary's input counts them all.
    prompt = fresh + read + written if fresh is not None and read is not None and written is not None else None
    return {"input_tokens": prompt, "output_tokens": count(usage.get("output_tokens")), "cached_tokens": read}


_PROMPT_TOKENS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


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


PRODUCER: Final = Producer(
    name="claude-code",
    source=SOURCE,
    summary="a Claude Code run: its CLAUDE_CONFIG_DIR, and optionally its stream-json stdout (--stream)",
    forms=(
        ArtifactForm(
            "config directory",
            "CLAUDE_CONFIG_DIR with the session transcripts under projects/ (subagents and tool-result sidecars too)",
        ),
        ArtifactForm(
            "stream-json stdout",
            "`claude -p --output-format stream-json --verbose` output, given with --stream: how the run ended",
        ),
    ),
    capability={
        "C1": Rating(
            "V",
            "every model response becomes a (model_ref, response_id) reference the join resolves to "
            "the captured call; a compaction's summary call is hidden from the transcripts (O then)",
        ),
        "C2": Rating("V", "token counts come from the captured calls the references resolve to"),
        "C3": Rating("X", "no turns: a harness does not know the task's turns, question, answer or resolution"),
        "C4": Rating(
            "V", "the conversation of the session and of every subagent, with compactions, from the transcripts"
        ),
        "C5": Rating("V", "tool_use and tool_result pairs give each call's output, status, start, end and duration"),
        "C6": Rating("V", "each call is timed by its own tool_use and tool_result lines, parallel calls included"),
        "C7": Rating(
            "V", "invocations and the subagent hierarchy from the transcripts; how each ended needs the stream"
        ),
    },
    observe=observe,
    docs="guides/claude-code.md",
)
