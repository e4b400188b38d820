"""OpenClaw producer: a home or state folder (session stores and transcripts) to observations, outcome, summary."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from gym_contract.models import AgentObservationBundle, AgentOutcome, ObservationGap
from gym_contract.outcome._base import check_process_facts
from gym_contract.producers._kit import (
    MAX_LINE_BYTES,
    ArtifactForm,
    Observed,
    Producer,
    Rating,
    RunSummary,
    UnrecognisedArtifactError,
    gap,
    is_stdin,
    readable_name,
    unreadable,
)
from gym_contract.producers._pi_session import PiRun, is_session_line
from gym_contract.producers.openclaw._bundle import Host, Transcript, outcome, read_transcript, session_records
from gym_contract.producers.openclaw._store import (
    Layout,
    Session,
    holds_sessions,
    is_pinchbench,
    layout,
    loose_transcripts,
    pinchbench_layout,
    stores,
    tree,
)
from gym_contract.reading._sources import uncompressed_name

__all__ = ["PINCHBENCH_FORM", "PRODUCER", "SOURCE", "observe", "observe_pinchbench"]

SOURCE: Final = "openclaw"


@dataclass
class _Run:
    """What was read so far: records, gaps, and per session its facts (for the summary) and whether it is a root."""

    records: list[dict[str, Any]] = field(default_factory=list)
    gaps: list[ObservationGap] = field(default_factory=list)
    sessions: list[tuple[PiRun, bool]] = field(default_factory=list)
    outcome: AgentOutcome | None = None
    form: str = "none"


def observe(
    path: str | os.PathLike[str],
    *,
    model_ref: str | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Observed:
    """Read an OpenClaw home (`~` holding `.openclaw/`), state folder (holding `agents/`) or agents folder.

    Every session store `agents/<id>/sessions/sessions.json` is read; each session is one invocation,
    keyed by its session key, its parent named by `spawnedBy` or `parentSessionKey`, its transcript
    the store entry's `sessionFile` or `<sessionId>.jsonl` beside the store. A PinchBench output
    folder and a single transcript file are read too (the form is told from the content; the file may be
    "-" for stdin, and gzip or zstd compressed, as `validate` reads it). Links and
    paths that lead out of the folder are never followed (gaps). ``exit_code`` and ``timed_out``
    are what the host saw of the process, applied to the root sessions. Damaged stores and
    transcripts become gaps, each damaged line named by its number. Raises `UnrecognisedArtifactError`
    for a path that is none of the forms (nothing there, a folder without an `agents/<id>/sessions/`
    folder or PinchBench's, a file none of whose lines is a Pi session's header or entry) and for a
    transcript file that cannot be read; TypeError or ValueError only for an ``exit_code`` that is not
    an integer within 64 bits.
    """
    check_process_facts(exit_code, None)
    found = layout(Path(path))
    if found.form == "none":
        there = os.path.lexists(path)
        raise UnrecognisedArtifactError(path, "not a regular file" if there else "no such file or directory")
    if found.agents is not None and found.form != "pinchbench" and not holds_sessions(found.agents):
        raise UnrecognisedArtifactError(path, "no agents/<id>/sessions/ folder in it, nor PinchBench's output folders")
    return observe_layout(Path(path), found, model_ref, Host(exit_code, timed_out), max_line_bytes)


def observe_pinchbench(
    path: str | os.PathLike[str],
    *,
    model_ref: str | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Observed:
    """Read ``path`` as a PinchBench output folder, whatever else it holds: `observe` tells the form from the content.

    PinchBench runs OpenClaw in a sandbox and keeps the run's transcript in `0001_transcripts/` and
    the session stores in `openclaw_sessions/`. The root is the store entry whose `sessionId` the
    transcript's `session` entry names (else the transcript's file name), read with its subagents;
    without a store, or without that entry, the transcript alone is read and the gap
    `subagent_hierarchy_unavailable` says why. The bundle is OpenClaw's: the folder gives the same
    bundle as the store it holds. Raises `UnrecognisedArtifactError` for a path that is no folder, or a
    folder holding neither `0001_transcripts/` nor `openclaw_sessions/`.
    """
    check_process_facts(exit_code, None)
    folder = Path(path)
    if not folder.is_dir():
        raise UnrecognisedArtifactError(path, "not a directory")
    if not is_pinchbench(folder):
        raise UnrecognisedArtifactError(path, "neither 0001_transcripts/ nor openclaw_sessions/ in the folder")
    found = pinchbench_layout(folder)
    return observe_layout(folder, found, model_ref, Host(exit_code, timed_out), max_line_bytes)


def observe_layout(
    path: Path, found: Layout, model_ref: str | None, host: Host, max_line_bytes: int = MAX_LINE_BYTES
) -> Observed:
    """The document of a folder whose form is known (`pinchbench` reads the PinchBench form alone)."""
    server = {"type": "responses_api_models", "name": model_ref} if model_ref is not None else None
    run = _Run(gaps=list(found.gaps), form=found.form)
    if found.form == "transcript" and found.transcript is not None:
        read = read_transcript(found.transcript, max_line_bytes)
        if read.failure is not None:  # the one file given, unread: nothing of the run is left to read
            raise unreadable(path, read.failure)
        if not any(is_session_line(line) for _, line in read.objects):
            why = "the file is empty" if not read.lines else "no line is a Pi session's header or entry"
            raise UnrecognisedArtifactError(path, why)
        _single(run, found.transcript, server, host, max_line_bytes, read)
    elif found.agents is not None:
        entries = stores(path, found.agents, run.gaps)
        sessions = tree(path, entries, run.gaps) if entries else []
        if found.form == "pinchbench":
            sessions = _pinchbench_tree(run, sessions, found.transcript, max_line_bytes)
        if sessions:
            for session in sessions:
                _session(run, session, server, host, max_line_bytes)
        elif found.form == "pinchbench" and found.transcript is not None:
            _single(run, found.transcript, server, host, max_line_bytes)
        elif not entries and found.form != "pinchbench" and (loose := loose_transcripts(path, found.agents, run.gaps)):
            # No store lists the sessions (none was written, or none could be read): each transcript alone.
            for transcript in loose:
                _single(run, transcript, server, host, max_line_bytes)
        else:
            run.gaps += [gap("subagent_hierarchy_unavailable"), gap("agent_transcript_unavailable")]
    else:
        run.gaps.append(gap("agent_transcript_unavailable"))
    bundle = AgentObservationBundle.model_validate({"source": SOURCE, "records": run.records, "gaps": run.gaps})
    return Observed(bundle, run.outcome, _summary(run))


def _pinchbench_tree(run: _Run, sessions: list[Session], transcript: Path | None, max_line_bytes: int) -> list[Session]:
    """The run's session and its descendants: the root is the store entry of the session the transcript names."""
    if transcript is None:
        return sessions if sum(1 for session in sessions if session.parent is None) == 1 else []
    read = read_transcript(transcript, max_line_bytes)
    header = next((line for _, line in read.objects if line.get("type") == "session"), {})
    root_id = header.get("id") if isinstance(header.get("id"), str) and header.get("id") else transcript.stem
    roots = [session for session in sessions if session.session_id == root_id]
    if len(roots) != 1:
        if sessions:
            detail = "root_session_not_found" if not roots else "root_session_ambiguous"
            run.gaps.append(gap("subagent_hierarchy_unavailable", detail=detail))
        return []
    kept = {roots[0].key}
    for session in sessions:  # tree order: a parent comes before its children
        if session.parent in kept:
            kept.add(session.key)
    return [
        Session(session.key, None if session is roots[0] else session.parent, session.session_id, session.transcript)
        for session in sessions
        if session.key in kept
    ]


def _single(
    run: _Run,
    path: Path,
    server: dict[str, Any] | None,
    host: Host,
    max_line_bytes: int,
    read: Transcript | None = None,
) -> None:
    """One transcript without its store: the invocation is the session its header names, the hierarchy unknown."""
    read = read if read is not None else read_transcript(path, max_line_bytes)
    run.gaps += read.gaps
    if not read.objects:
        run.gaps.append(gap("agent_transcript_unavailable", detail=read.name))
        return
    header = next((line for _, line in read.objects if line.get("type") == "session"), {})
    key = header["id"] if isinstance(header.get("id"), str) and header["id"] else _named_key(path)
    if any(record.get("invocation_id") == key for record in run.records if record["kind"] == "agent_invocation"):
        run.gaps.append(gap("agent_session_identity_ambiguous", detail=key))  # two files of one session
        return
    run.gaps.append(gap("subagent_hierarchy_unavailable", key))
    _take(run, key, None, read, server, host)


def _named_key(path: Path) -> str:
    """The key of a transcript whose header names no session: its file's name, which OpenClaw makes
    `<sessionId>.jsonl` (a compression's suffix dropped); "root" for stdin, which has no name."""
    name = "" if is_stdin(path) else Path(uncompressed_name(path.name)).stem
    return readable_name(name) or "root"


def _session(run: _Run, session: Session, server: dict[str, Any] | None, host: Host, max_line_bytes: int) -> None:
    if session.transcript is not None:
        read = read_transcript(session.transcript, max_line_bytes)
        run.gaps += read.gaps
        if not read.readable:
            run.gaps.append(gap("agent_transcript_unavailable", session.key, session.session_id))
    else:
        read = Transcript("")
    if session.transcript is not None and read.readable and not _has_messages(read):
        run.gaps.append(gap("agent_transcript_unavailable", session.key, session.session_id))
    if not _has_messages(read):
        run.gaps.append(gap("context_compaction_unavailable", session.key))
    _take(run, session.key, session.parent, read, server, host)


def _has_messages(read: Transcript) -> bool:
    return any(line.get("type") == "message" for _, line in read.objects)


def _take(run: _Run, key: str, parent: str | None, read: Transcript, server: dict[str, Any] | None, host: Host) -> None:
    root = parent is None
    records, gaps, facts = session_records(key, parent, read, server, host if root else None)
    run.records += records
    run.gaps += gaps
    run.sessions.append((facts, root))
    roots = sum(1 for _, is_root in run.sessions if is_root)
    if root:
        # The run's outcome is its root session's; a folder of several runs names no one outcome.
        run.outcome = outcome(read, host) if roots == 1 and read.objects else None


def _summary(run: _Run) -> RunSummary:
    tools = [record for record in run.records if record["kind"] == "tool_call"]
    read = bool(run.sessions)
    usage: Counter[str] = Counter()
    for facts, _ in run.sessions:
        usage.update(facts.usage)
    prompt = [usage.get(key) for key in ("input", "cacheRead", "cacheWrite")]
    roots = [facts for facts, is_root in run.sessions if is_root]
    stops = Counter(stop.stop_reason or "none" for facts in roots for stop in facts.stops)
    return RunSummary(
        tool_calls=len(tools) if read else None,
        tool_errors=sum(1 for record in tools if record["status"] in ("failed", "timeout")) if read else None,
        main_turns=sum(len(facts.stops) for facts in roots) if read else None,
        subagent_turns=sum(len(facts.stops) for facts, is_root in run.sessions if not is_root) if read else None,
        subagent_calls=len(run.sessions) - len(roots) if read else None,
        compactions=sum(len(facts.compactions) for facts, _ in run.sessions) if read else None,
        input_tokens=sum(tokens or 0 for tokens in prompt) if any(t is not None for t in prompt) else None,
        output_tokens=usage.get("output"),
        cached_tokens=usage.get("cacheRead"),
        extra={
            "artifact_form": run.form if read else None,
            "sessions": len(run.sessions),
            "stop_reasons": dict(sorted(stops.items())),
        },
    )


PINCHBENCH_FORM: Final = ArtifactForm(
    "PinchBench output folder",
    "`0001_transcripts/<task>.jsonl` (the run's transcript, whose `session` entry names the root session) "
    "beside `openclaw_sessions/agents/<id>/sessions/` (the session stores and transcripts copied from the sandbox)",
)

_FORMS: Final = (
    ArtifactForm(
        "home or state folder",
        "an OpenClaw home (holding `.openclaw/agents/`), its state folder `.openclaw/` (holding `agents/`) or the "
        "`agents/` folder itself: every `<id>/sessions/sessions.json` and the transcripts beside it",
    ),
    PINCHBENCH_FORM,
    ArtifactForm(
        "session transcript",
        "one `<sessionId>.jsonl` in the Pi session format, read without its store: no subagent tree",
    ),
)


def capability() -> dict[str, Rating]:
    """C1–C7 as the OpenClaw artifacts reach them, in whichever form they were read."""
    return {
        "C1": Rating(
            "V",
            "each distinct `responseId` of an assistant message becomes a (model_ref, response_id) reference the "
            "join resolves; a message without one leaves the calls unowned (a gap)",
        ),
        "C2": Rating("V", "token counts come from the captured calls the references resolve to"),
        "C3": Rating("X", "no turns: a harness does not know the task's turns, question, answer or resolution"),
        "C4": Rating(
            "O",
            "the conversation from the transcript's messages with each compaction's summary and first kept entry; "
            "a transcript that branches (a `parentId` with two children) is reported, not rebuilt",
        ),
        "C5": Rating(
            "V",
            "each call's output and status from its `toolResult` (`isError`, `details.status`); its end from the "
            "result's `timestamp` and its start from `details.durationMs`",
        ),
        "C6": Rating(
            "V", "each call is timed by its own result's time and measured duration, so parallel calls are apart"
        ),
        "C7": Rating(
            "V",
            "the subagent tree from the stores' `spawnedBy` / `parentSessionKey`, each session's end from its last "
            "stop reason; the tool call that spawned a subagent is not recorded (a gap)",
        ),
    }


PRODUCER: Final = Producer(
    name="openclaw",
    source=SOURCE,
    summary="an OpenClaw run: its home, state or agents folder (session stores and transcripts), or one transcript",
    forms=_FORMS,
    capability=capability(),
    observe=observe,
    docs="guides/openclaw.md",
)
