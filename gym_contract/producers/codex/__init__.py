"""Codex producer: rollout files and `codex exec --json` stdout to observations, outcome and run summary."""

from __future__ import annotations

import os
from typing import Any, Final

from gym_contract._parent_links import LinkForest
from gym_contract.models import AgentObservationBundle, AgentOutcome, ObservationGap
from gym_contract.outcome._base import check_process_facts
from gym_contract.outcome._codex import classify_codex
from gym_contract.producers._kit import MAX_LINE_BYTES, ArtifactForm, Observed, Producer, Rating, RunSummary, gap
from gym_contract.producers.codex._exec import map_exec
from gym_contract.producers.codex._read import read
from gym_contract.producers.codex._rollout import SPAWN_TOOL, map_rollout
from gym_contract.producers.codex._session import Session, compaction_records, tool_records

__all__ = ["PRODUCER", "SOURCE", "observe"]

SOURCE: Final = "codex"
_STATUS_OF: Final = {"completed": "completed", "failed": "failed", "incomplete": "incomplete"}


def observe(
    path: str | os.PathLike[str],
    *,
    model_ref: str | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Observed:
    """Read a Codex run: a rollout file, a directory of rollout files (a `CODEX_HOME`), or an `exec --json` stdout.

    The form is told from the content; the one file may be "-" for stdin, and gzip or zstd compressed,
    as `validate` reads it. Each session becomes an invocation, a subagent one linked to
    the session that spawned it. ``exit_code`` and ``timed_out`` are what the host saw of the
    process; they shape the outcome of the run's one root session (with several roots, as in a
    `CODEX_HOME` of many runs, there is no one run and the outcome is None). Codex writes no
    model response ids, so ``model_ref`` cannot make references and no invocation lists model calls.
    Malformed input becomes gaps, each damaged line named by its number, and so does an unreadable
    file among others that were read. Raises `UnrecognisedArtifactError` for a path that is no Codex
    artifact (nothing there, no regular file, a folder without a `rollout-*.jsonl`, a file none of
    whose lines is a rollout line or an exec event other than `error`) or that cannot be read at all;
    TypeError or ValueError only for an ``exit_code`` that is not an integer within 64 bits.
    """
    check_process_facts(exit_code, None)
    found = read(path, max_line_bytes)
    sessions: dict[str, Session] = {}
    gaps: list[ObservationGap] = list(found.gaps)
    for artifact in found.artifacts:
        session = map_rollout(artifact) if artifact.form == "rollout" else map_exec(artifact)
        if session.session_id in sessions:
            gaps.append(gap("agent_session_identity_ambiguous", session.session_id, session.session_id))
            continue
        sessions[session.session_id] = session
    parents = _parents(sessions, gaps)
    roots = [session for session in sessions.values() if session.session_id not in parents]
    the_root = roots[0] if len(roots) == 1 else None
    records: list[dict[str, Any]] = []
    outcome: AgentOutcome | None = None
    for session in sessions.values():
        is_root = session is the_root
        ended = classify_codex(
            session.events,
            exit_code=exit_code if is_root else None,
            timed_out=timed_out and is_root,
            version=session.version,
        )
        if is_root:
            outcome = ended
        records.append(_invocation(session, parents.get(session.session_id), ended))
        gaps += session.gaps
    compactions = 0
    for session in sessions.values():
        tools, tool_gaps = tool_records(session)
        records += tools
        gaps += tool_gaps
    for session in sessions.values():
        compacted, compaction_gaps = compaction_records(session)
        records += compacted
        compactions += len(compacted)
        gaps += compaction_gaps
    if not sessions:
        gaps.append(gap("agent_transcript_unavailable"))
    gaps.append(gap("model_call_ownership_unavailable"))
    bundle = AgentObservationBundle.model_validate({"source": SOURCE, "records": records, "gaps": gaps})
    return Observed(bundle, outcome, _summary(sessions, parents, the_root, records, compactions))


def _parents(sessions: dict[str, Session], gaps: list[ObservationGap]) -> dict[str, tuple[str, str | None]]:
    """Each subagent session → (its parent session, the `spawn_agent` call that started it, when known)."""
    links: dict[str, tuple[str, str | None]] = {}
    forest = LinkForest()
    for session in sessions.values():
        child, parent_id = session.session_id, session.parent_id
        if parent_id is None:
            continue
        if parent_id == child or not forest.link(child, parent_id):
            gaps.append(gap("cyclic_subagent_parent", child, parent_id))
            continue
        parent = sessions.get(parent_id)
        call_id = parent.spawned.get(child) if parent is not None else None
        if parent is None:
            gaps.append(gap("subagent_parent_unavailable", child, parent_id))
        if call_id is None:
            gaps.append(gap("subagent_spawn_tool_unavailable", child))
        links[child] = (parent_id, call_id)
    return links


def _invocation(session: Session, link: tuple[str, str | None] | None, ended: AgentOutcome) -> dict[str, Any]:
    return {
        "kind": "agent_invocation",
        "invocation_id": session.session_id,
        "parent_invocation_id": link[0] if link is not None else None,
        "spawned_by_tool_call_id": link[1] if link is not None else None,
        "status": _STATUS_OF[ended.response_status],
        "duration_ms": session.duration_ms(),
        "error_type": ended.failure_kind,
        "model_calls": [],
        "conversation": session.conversation,
    }


def _summary(
    sessions: dict[str, Session],
    parents: dict[str, tuple[str, str | None]],
    root: Session | None,
    records: list[dict[str, Any]],
    compactions: int,
) -> RunSummary:
    tools = [record for record in records if record["kind"] == "tool_call"]
    main = [session for session in sessions.values() if session.session_id not in parents]
    children = [session for session in sessions.values() if session.session_id in parents]
    duration = root.duration_ms() if root is not None else None
    return RunSummary(
        tool_calls=sum(len(session.tools) for session in sessions.values()),
        tool_errors=sum(1 for record in tools if record["status"] == "failed"),
        main_turns=sum(session.turns_started for session in main),
        subagent_turns=sum(session.turns_started for session in children),
        subagent_calls=sum(1 for record in tools if record["tool_name"] == SPAWN_TOOL),
        compactions=compactions,
        duration_s=duration / 1000 if duration is not None else None,
        **_tokens(list(sessions.values())),
        extra={
            "sessions": len(sessions),
            "turns_completed": sum(session.turns_completed for session in sessions.values()),
            "turns_aborted": sum(session.turns_aborted for session in sessions.values()),
            "turns_failed": sum(session.turns_failed for session in sessions.values()),
        },
    )


def _tokens(sessions: list[Session]) -> dict[str, int | None]:
    """Each session's own last stated totals (Codex repeats them on every `token_count`), added across sessions."""
    stated = [tokens for session in sessions if (tokens := session.own_tokens()) is not None]
    if not stated:
        return {}

    def total(key: str) -> int | None:
        values = [tokens.get(key) for tokens in stated]
        return sum(value for value in values if value is not None) if all(v is not None for v in values) else None

    return {
        "input_tokens": total("input_tokens"),
        "cached_tokens": total("cached_input_tokens"),
        "output_tokens": total("output_tokens"),
        "reasoning_tokens": total("reasoning_output_tokens"),
    }


PRODUCER: Final = Producer(
    name="codex",
    source=SOURCE,
    summary="a Codex CLI run: its rollout file (or a directory of them), or its `codex exec --json` stdout",
    forms=(
        ArtifactForm(
            "rollout file",
            "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl: session_meta, turn_context, response_item, event_msg, "
            "compacted lines",
        ),
        ArtifactForm(
            "sessions directory",
            "a CODEX_HOME, its sessions/ or any folder: every rollout-*.jsonl under it, subagent sessions linked",
        ),
        ArtifactForm(
            "exec --json stdout",
            "`codex exec --json` output: thread.started, turn.*, item.*, error events (no timing, no prompt)",
        ),
    ),
    capability={
        "C1": Rating("X", "Codex writes no model response ids: no invocation can reference the calls it made"),
        "C2": Rating("O", "the session's token totals as token_count events state them, not per call"),
        "C3": Rating("X", "no turns: a harness does not know the task's turns, question, answer or resolution"),
        "C4": Rating(
            "V", "the conversation from the rollout's response items, with compactions; exec --json keeps only part"
        ),
        "C5": Rating(
            "V", "call and output items matched by call_id; exec_command_end gives the exit code and duration"
        ),
        "C6": Rating("V", "each call is timed by its own end event or its own call and output lines"),
        "C7": Rating("O", "sessions and subagent sessions with how each ended; no sandbox observation"),
    },
    observe=observe,
    docs="guides/codex.md",
)
