"""Pi producer: a session file (v1, v2, v3) or a captured `pi --mode json` stdout to observations, outcome, summary."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from gym_contract.models import AgentObservationBundle, AgentOutcome, ObservationGap
from gym_contract.outcome._base import check_process_facts
from gym_contract.outcome._pi import classify_pi, receipt
from gym_contract.producers._kit import (
    MAX_LINE_BYTES,
    ArtifactForm,
    Observed,
    Producer,
    Rating,
    RunSummary,
    UnrecognisedArtifactError,
    artifact_name,
    gap,
    is_stdin,
    numbered_lines,
    unreadable,
)
from gym_contract.producers._pi_session import STATUS_BY_STOP, PiRun, is_session_line, read_session
from gym_contract.producers.pi._bundle import Ending, assemble
from gym_contract.producers.pi._stream import STREAM_EVENTS, read_stream
from gym_contract.reading._json_parsing import loads

__all__ = ["PRODUCER", "observe", "read_session", "read_stream"]

SOURCE: Final = "pi"
ROOT: Final = "root"
"""The invocation's id when the artifact names no session (a stream from before Pi printed its header)."""


@dataclass
class _Artifact:
    """One file's lines: per line its parsed object, b"" for a blank line, None for a damaged one."""

    name: str
    lines: list[Any] = field(default_factory=list)
    gaps: list[ObservationGap] = field(default_factory=list)
    whole: bool = True
    """False when reading broke off: what the rest held cannot be told, and the gap says so."""


def observe(
    path: str | os.PathLike[str],
    *,
    model_ref: str | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    sandboxed: bool | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Observed:
    """Read a Pi session file or a captured `pi --mode json` stdout; which one is told from the content.

    ``path`` may be "-" for stdin, and the file gzip or zstd compressed, as `validate` reads it.

    A capture may wrap each line as ``{"t": <epoch seconds received>, "line": <event>}``: then its
    tool calls are timed from the receipts, otherwise they have no timing (gap
    `tool_timing_unavailable`). A session file times each call from its assistant message's entry
    to its result's entry. ``model_ref`` names the model server that served the run; without it no
    model-call references are made. ``exit_code`` and ``timed_out`` are what the host saw of the
    process; ``sandboxed=False`` says the agent ran on the host (gap `no_sandbox_runtime`).
    A damaged file becomes gaps, each damaged line named by its number, as does one whose reading
    broke off after some lines. Raises `UnrecognisedArtifactError` when ``path`` is no regular file,
    a file that cannot be read at all, or one none of whose lines is a session's header or entry or a
    stream's event; TypeError or ValueError only for an ``exit_code`` that is not an integer within
    64 bits.
    """
    check_process_facts(exit_code, None)
    # A named pipe or a device would block or never end: only a regular file, or stdin ("-"), is opened.
    if not is_stdin(path) and not os.path.isfile(path):
        raise UnrecognisedArtifactError(path, _not_a_file(path))
    artifact = _read(path, max_line_bytes)
    objects = [(number, line) for number, line in enumerate(artifact.lines, 1) if isinstance(line, dict)]
    if artifact.whole and not any(_is_pi_line(line) for _, line in objects):
        raise UnrecognisedArtifactError(path, _not_pi(artifact))
    run = _facts(artifact, objects)
    server = {"type": "responses_api_models", "name": model_ref} if model_ref is not None else None
    ended = classify_pi(artifact.lines, exit_code=exit_code, timed_out=timed_out) if objects else None
    gaps = list(artifact.gaps)
    records: list[dict[str, Any]] = []
    if run.entries:
        owner = run.session_id or ROOT
        records, found = assemble(run, owner, server, _ending(run, ended, exit_code, timed_out))
        gaps += found
    else:
        gaps += [found for found in run.gaps if found.invocation_id is None]
        gaps.append(gap("agent_transcript_unavailable"))
    if sandboxed is False:
        gaps.append(gap("no_sandbox_runtime"))
    bundle = AgentObservationBundle.model_validate({"source": SOURCE, "records": records, "gaps": gaps})
    return Observed(bundle, ended, _summary(run))


def _not_a_file(path: str | os.PathLike[str]) -> str:
    if os.path.isdir(path):
        return "a folder, not a file"
    return "not a regular file" if os.path.lexists(path) else "no such file"


def _read(path: str | os.PathLike[str], max_line_bytes: int) -> _Artifact:
    """The file's lines, parsed; a file of which nothing can be read is refused, a file read in part is a gap."""
    artifact = _Artifact(artifact_name(path))
    try:
        for number, raw in numbered_lines(path, max_line_bytes):
            artifact.lines.append(_parsed(artifact, number, raw))
    except OSError as error:
        if not artifact.lines:  # gaps alone would pass the run off as one that left nothing
            raise unreadable(path, error) from None
        artifact.whole = False
        artifact.gaps.append(gap("transcript_unreadable", detail=artifact.name))
    return artifact


def _parsed(artifact: _Artifact, number: int, raw: bytes | None) -> Any:
    if raw is not None and not raw.strip():
        return b""
    try:
        value = loads(raw) if raw is not None else None
    except orjson.JSONDecodeError:
        value = None
    if raw is None or value is None:
        artifact.gaps.append(gap("malformed_transcript_line", detail=f"{artifact.name}:{number}"))
        return None
    if not isinstance(value, dict):
        artifact.gaps.append(gap("invalid_transcript_record", detail=f"{artifact.name}:{number}"))
        return None
    return value


def _facts(artifact: _Artifact, objects: list[tuple[int, dict[str, Any]]]) -> PiRun:
    """The session's or the stream's facts: a receipt wrapper or an event only a stream has makes it a stream."""
    unwrapped = [(number, *receipt(line)) for number, line in objects]
    if not any(at is not None or _type(event) in STREAM_EVENTS for _, at, event in unwrapped):
        return read_session(objects, artifact.name)
    events: list[tuple[float | None, dict[str, Any]]] = []
    for number, at, event in unwrapped:
        if isinstance(event, dict):
            events.append((at, event))
        else:
            artifact.gaps.append(gap("invalid_transcript_record", detail=f"{artifact.name}:{number}"))
    return read_stream(events)


def _is_pi_line(line: dict[str, Any]) -> bool:
    """Whether a line is a Pi artifact's: a session file's header or entry, or a stream's event (wrapped or not)."""
    event = receipt(line)[1]
    return isinstance(event, dict) and (_type(event) in STREAM_EVENTS or is_session_line(event))


def _not_pi(artifact: _Artifact) -> str:
    """What a file that is no Pi artifact holds instead, as the refusal says it."""
    if not any(line != b"" for line in artifact.lines):
        return "the file is empty"
    return "no line is a Pi session header or entry, or a `--mode json` event"


def _type(event: Any) -> Any:
    return event.get("type") if isinstance(event, dict) else None


def _ending(run: PiRun, ended: AgentOutcome | None, exit_code: int | None, timed_out: bool) -> Ending:
    """The invocation's status from the last assistant message's `stopReason`; the host's facts where it says none."""
    if timed_out:
        return Ending("incomplete", "timeout")
    terminal = run.terminal
    reason = terminal.stop_reason if terminal is not None else None
    if reason in STATUS_BY_STOP:
        kind = ended.failure_kind if ended is not None else None
        return Ending(STATUS_BY_STOP[reason], kind if kind is not None else (None if reason == "stop" else reason))
    if exit_code not in (None, 0):
        return Ending("failed", f"process_exit_{exit_code}")
    return Ending("unknown", None)


def _summary(run: PiRun) -> RunSummary:
    calls = [call for call in run.tools.values() if call.called_at is not None or call.starts or call.results]
    usage = run.usage
    prompt = [usage.get(key) for key in ("input", "cacheRead", "cacheWrite")]
    stops = Counter(stop.stop_reason or "none" for stop in run.stops)
    form = f"session v{run.version}" if run.form == "session" else "stream"
    return RunSummary(
        tool_calls=len(calls) if run.entries else None,
        tool_errors=sum(1 for call in calls if call.is_error is True) if run.entries else None,
        main_turns=len(run.stops) if run.entries else None,
        compactions=len(run.compactions) if run.entries else None,
        input_tokens=sum(tokens or 0 for tokens in prompt) if any(t is not None for t in prompt) else None,
        output_tokens=usage.get("output"),
        cached_tokens=usage.get("cacheRead"),
        extra={"artifact_form": form if run.entries else None, "stop_reasons": dict(sorted(stops.items()))},
    )


PRODUCER: Final = Producer(
    name="pi",
    source=SOURCE,
    summary="a Pi run: its session file, or its captured `pi --mode json` stdout (optionally with receipt times)",
    forms=(
        ArtifactForm(
            "session file",
            "~/.pi/agent/sessions/…/<timestamp>_<id>.jsonl in any layout Pi has written (v1, v2, v3)",
        ),
        ArtifactForm(
            "--mode json stdout",
            "`pi --print --mode json` output, either event generation; each line may be wrapped as "
            '{"t": <epoch seconds received>, "line": <event>} to time the tool calls',
        ),
    ),
    capability={
        "C1": Rating(
            "V",
            "every assistant message's `responseId` becomes a (model_ref, response_id) reference the join "
            "resolves; Pi releases that write no `responseId` leave the calls unowned (a gap)",
        ),
        "C2": Rating("V", "token counts come from the captured calls the references resolve to"),
        "C3": Rating("X", "no turns: a harness does not know the task's turns, question, answer or resolution"),
        "C4": Rating("V", "the conversation from the messages, with each compaction's summary and first kept entry"),
        "C5": Rating(
            "V",
            "each call's output and status from its result; its start and end from the session entries or "
            "from a capture's receipt times (a capture without them has no tool timing, a gap)",
        ),
        "C6": Rating(
            "O",
            "a timed capture times each call by its own execution events; a session file starts every call "
            "of one message at that message's end, so sibling calls run one after another share a start",
        ),
        "C7": Rating("V", "one invocation with its end from the last stop reason; Pi has no subagents to show"),
    },
    observe=observe,
    docs="guides/pi.md",
)
