"""Map a Codex rollout file (`session_meta`, `turn_context`, `response_item`, `event_msg`, `compacted`) to a session."""

from __future__ import annotations

from typing import Any, Final

from pydantic import TypeAdapter, ValidationError

from gym_contract._json_writing import python_text
from gym_contract._values import count, finite, integer, nonempty, obj, text
from gym_contract.models import ConversationItem
from gym_contract.producers._kit import gap, timestamp
from gym_contract.producers.codex._read import Artifact, Line
from gym_contract.producers.codex._session import Compaction, Session, ToolEnd
from gym_contract.reading._json_parsing import loads

_ITEM: Final[TypeAdapter[Any]] = TypeAdapter(ConversationItem)
_CALLS: Final = {"function_call": None, "custom_tool_call": None, "local_shell_call": "local_shell"}
_OUTPUTS: Final = frozenset({"function_call_output", "custom_tool_call_output"})
# Kept in the rollout for Codex's own undo, never shown to the model.
_NOT_MODEL_VISIBLE: Final = frozenset({"ghost_snapshot"})
_STARTED: Final = frozenset({"task_started", "turn_started"})
_COMPLETED: Final = frozenset({"task_complete", "turn_complete"})
SPAWN_TOOL: Final = "spawn_agent"


def map_rollout(artifact: Artifact) -> Session:
    """The session one rollout file records; what cannot be read becomes a gap of that session.

    A forked session's file copies its parent's rollout before its own lines: those copied lines are
    context the session's model was given (they stay in its conversation), not work it did, so no tool
    call, turn, compaction, token count or outcome event of theirs is the session's.
    """
    session = Session(session_id=_session_id(artifact), file=artifact.file)
    spawns: dict[str, str] = {}  # `spawn_agent` call id → its invocation, awaiting the output naming the child
    pending: Compaction | None = None
    copied = _copied_lines(artifact, session.session_id)
    for index, line in enumerate(artifact.lines):
        kind, payload = text(line.event.get("type")), obj(line.event.get("payload"))
        at = timestamp(line.event.get("timestamp"))
        if payload is not None and index in copied:
            _copied_line(session, line, kind, payload)
            continue
        session.seen(at)
        session.events.append(line.event)
        if payload is None:
            session.gaps.append(gap("invalid_transcript_record", session.session_id, line.where))
            continue
        if kind == "session_meta":
            _meta(session, payload)
        elif kind == "response_item":
            _response_item(session, line, payload, at, spawns)
        elif kind == "compacted":
            pending = Compaction(at, nonempty(payload.get("message")))
            session.compactions.append(pending)
        elif kind == "event_msg":
            merged = _event(session, payload, at, pending)
            pending = None if merged or text(payload.get("type")) in _STARTED else pending
    return session


def _copied_lines(artifact: Artifact, session_id: str) -> range:
    """The lines of a forked session's file that are its parent's rollout, copied when the session was forked.

    The copy starts with the parent's `session_meta` (an id not the file's own) and ends with the
    `function_call_output` Codex adds for the parent's `spawn_agent` call that forked the session: the
    first output of a copied `spawn_agent` call that names no `agent_id` (a spawn's own output names
    the agent it started). A copied parent that was itself forked nests a copy of its own, closed the
    same way. A copy that never closes (a fork Codex did not make by `spawn_agent`) cannot be told
    from the session's own lines: the range is then empty and every line is read as the session's.
    """
    start: int | None = None
    open_copies = 0
    spawn_calls: set[str] = set()
    for index, line in enumerate(artifact.lines):
        kind, payload = line.event.get("type"), obj(line.event.get("payload"))
        if payload is None:
            continue
        if kind == "session_meta" and nonempty(payload.get("id")) not in (None, session_id):
            start = index if start is None else start
            open_copies += 1
            continue
        call_id = nonempty(payload.get("call_id")) if kind == "response_item" and open_copies else None
        if call_id is None:
            continue
        if payload.get("type") == "function_call" and payload.get("name") == SPAWN_TOOL:
            spawn_calls.add(call_id)
        elif payload.get("type") == "function_call_output" and call_id in spawn_calls:
            spawn_calls.discard(call_id)
            if _spawned_child(payload.get("output")) is None:
                open_copies -= 1
                if not open_copies and start is not None:
                    return range(start, index + 1)
    return range(0)


def _copied_line(session: Session, line: Line, kind: str | None, payload: dict[str, Any]) -> None:
    """Take a line of the parent's copied rollout: its items as the conversation's context, its last token totals."""
    if kind == "response_item" and text(payload.get("type")) not in _NOT_MODEL_VISIBLE:
        item = _conversation_item(session, line, payload, text(payload.get("type")))
        if item is not None:
            session.conversation.append(item)
    elif kind == "event_msg" and payload.get("type") == "token_count":
        totals = _totals(payload)
        if totals is not None:
            session.copied_tokens = totals


def _session_id(artifact: Artifact) -> str:
    """The first `session_meta.id`: a forked session's file repeats its parent's meta after its own."""
    for line in artifact.lines:
        payload = obj(line.event.get("payload"))
        if line.event.get("type") == "session_meta" and payload is not None:
            found = nonempty(payload.get("id"))
            if found is not None:
                return found
    return artifact.file


def _meta(session: Session, payload: dict[str, Any]) -> None:
    if nonempty(payload.get("id")) != session.session_id:
        return  # the parent's meta a forked session repeats: not this session's facts
    session.version = nonempty(payload.get("cli_version"))
    subagent = obj((obj(payload.get("source")) or {}).get("subagent"))
    spawn = obj((subagent or {}).get("thread_spawn"))
    session.parent_id = nonempty(spawn.get("parent_thread_id")) if spawn is not None else None


def _response_item(
    session: Session, line: Line, payload: dict[str, Any], at: float | None, spawns: dict[str, str]
) -> None:
    kind = text(payload.get("type"))
    owner = session.session_id
    if kind in _NOT_MODEL_VISIBLE:
        return
    call_id = nonempty(payload.get("call_id"))
    if call_id is None and (kind in _CALLS or kind in _OUTPUTS):
        # Neither the conversation (which pairs calls by id) nor the tool records can hold it.
        session.gaps.append(gap("tool_call_id_missing" if kind in _CALLS else "tool_result_id_missing", owner))
        return
    item = _conversation_item(session, line, payload, kind)
    if item is not None:
        session.conversation.append(item)
    if call_id is None:
        return
    if kind in _CALLS:
        tool = session.tool(call_id)
        tool.name = nonempty(payload.get("name")) or _CALLS[kind]
        tool.starts.append(at)
        if tool.name == SPAWN_TOOL:
            spawns[call_id] = owner
    elif kind in _OUTPUTS:
        output = payload.get("output")
        session.tool(call_id).outputs.append((at, _output_status(output)))
        child = _spawned_child(output) if call_id in spawns else None
        if child is not None:
            session.spawned[child] = call_id


def _conversation_item(
    session: Session, line: Line, payload: dict[str, Any], kind: str | None
) -> dict[str, Any] | None:
    """The Responses item the payload is, in the contract's shape; None (with a gap) when it is not one."""
    item = dict(payload)
    # Codex writes no ids for these items; each is named by its place in the file instead.
    if kind in ("reasoning", "local_shell_call", "web_search_call") or (
        kind == "message" and item.get("role") == "assistant"
    ):
        item["id"] = nonempty(item.get("id")) or f"{session.session_id}:{line.number}"
    if kind == "reasoning" and item.get("summary") is None:
        item["summary"] = []
    if kind == "message" and item.get("role") == "assistant" and isinstance(item.get("content"), list):
        item["content"] = [
            {**part, "annotations": []}
            if isinstance(part, dict) and part.get("type") == "output_text" and "annotations" not in part
            else part
            for part in item["content"]
        ]
    if kind == "function_call" and not isinstance(item.get("arguments"), str) and "arguments" in item:
        item["arguments"] = python_text(item["arguments"], sort_keys=True)
    if kind not in ("message", "reasoning", "web_search_call", *_CALLS, *_OUTPUTS):
        session.gaps.append(gap("unsupported_assistant_content_block", session.session_id, str(kind)))
        return None
    try:
        _ITEM.validate_python(item)
    except (ValidationError, ValueError, TypeError, RecursionError):
        session.gaps.append(gap("invalid_transcript_record", session.session_id, line.where))
        return None
    return item


def _output_status(output: Any) -> str:
    """`failed` when the output states a nonzero `metadata.exit_code` (Codex's shell and apply_patch outputs)."""
    parsed = _json(output)
    metadata = obj(parsed.get("metadata")) if isinstance(parsed, dict) else None
    code = integer(metadata.get("exit_code")) if metadata is not None else None
    return "failed" if code not in (None, 0) else "completed"


def _spawned_child(output: Any) -> str | None:
    """The thread a `spawn_agent` call started, as its output names it (`agent_id`)."""
    parsed = _json(output)
    return nonempty(parsed.get("agent_id")) if isinstance(parsed, dict) else None


def _json(value: Any) -> Any:
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return None
    try:
        return loads(value)
    except ValueError:
        return None


def _event(session: Session, payload: dict[str, Any], at: float | None, pending: Compaction | None) -> bool:
    """Take one `event_msg`; True when it was the `context_compacted` event of the compaction just recorded."""
    kind = text(payload.get("type"))
    if kind in _STARTED:
        session.turns_started += 1
        session.turn_failed = False
    elif kind in _COMPLETED or kind == "turn_aborted":
        if kind == "turn_aborted":
            session.turns_aborted += 1
        else:
            session.turns_completed += 1
        duration = finite(payload.get("duration_ms"))
        if duration is not None and duration >= 0:
            session.turn_durations_ms.append(duration)
    elif kind == "error" and not session.turn_failed:  # a turn ends on its first fatal error: counted once
        session.turns_failed += 1
        session.turn_failed = True
    elif kind == "token_count":
        totals = _totals(payload)
        if totals is not None:
            if session.tokens is None and session.copied_tokens is not None:
                session.tokens_include_copied = _carries_on(session.copied_tokens, totals, _totals(payload, "last"))
            session.tokens = totals
    elif kind == "context_compacted":
        if pending is not None and not pending.merged_event:
            pending.merged_event = True
            return True
        session.compactions.append(Compaction(at, None, merged_event=True))
    elif kind in _ENDS:
        _end(session, kind, payload, at)
    return False


_TOKEN_KEYS: Final = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")


def _totals(payload: dict[str, Any], which: str = "total") -> dict[str, int | None] | None:
    """A `token_count` event's `info.total_token_usage` (or `last_token_usage`), by the keys the summary adds."""
    info = obj(payload.get("info"))
    usage = obj(info.get(f"{which}_token_usage")) if info is not None else None
    return {key: count(usage.get(key)) for key in _TOKEN_KEYS} if usage is not None else None


def _carries_on(
    copied: dict[str, int | None], first: dict[str, int | None], usage: dict[str, int | None] | None
) -> bool:
    """Whether a fork's first own totals continue the copied ones (newer Codex seeds them) rather than start at 0.

    Carried on, they are the copied totals, alone or plus the call's own usage; started afresh, they are that usage.
    """

    def plus(extra: dict[str, int | None] | None) -> bool:
        return all(
            (base := copied.get(key)) is not None
            and (value := first.get(key)) is not None
            and value == base + ((extra or {}).get(key) or 0)
            for key in _TOKEN_KEYS
        )

    return plus(None) or (usage is not None and plus(usage))


_ENDS: Final = frozenset({"exec_command_end", "mcp_tool_call_end", "patch_apply_end", "web_search_end"})


def _end(session: Session, kind: str | None, payload: dict[str, Any], at: float | None) -> None:
    call_id = nonempty(payload.get("call_id"))
    if call_id is None:
        session.gaps.append(gap("tool_result_id_missing", session.session_id))
        return
    tool = session.tool(call_id)
    duration = _duration_ms(payload.get("duration"))
    if kind == "exec_command_end":
        code = integer(payload.get("exit_code"))
        if payload.get("status") == "declined":
            tool.ends.append(ToolEnd(at, duration, "cancelled", "declined"))
        elif code is None:
            tool.ends.append(ToolEnd(at, duration, "unknown"))
        else:
            tool.ends.append(ToolEnd(at, duration, "completed" if code == 0 else "failed", _exit(code)))
    elif kind == "mcp_tool_call_end":
        result = obj(payload.get("result")) or {}
        ok = obj(result.get("Ok"))
        failed = "Err" in result or (ok is not None and ok.get("isError") is True)
        tool.ends.append(ToolEnd(at, duration, "failed" if failed else "completed" if ok is not None else "unknown"))
    elif kind == "patch_apply_end":
        success = payload.get("success")
        tool.ends.append(
            ToolEnd(at, None, "completed" if success is True else "failed" if success is False else "unknown")
        )
    else:  # web_search_end: the search ran at the provider; the rollout records only its end
        tool.name = tool.name or "web_search"
        tool.ends.append(ToolEnd(at, None, "completed"))


def _exit(code: int) -> str | None:
    return None if code == 0 else f"exit_code_{code}"


def _duration_ms(value: Any) -> float | None:
    """Milliseconds of a Rust `Duration` as Codex writes it: `{secs, nanos}`."""
    fields = obj(value)
    if fields is None:
        return None
    secs, nanos = count(fields.get("secs")), count(fields.get("nanos"))
    seconds = finite(secs) if secs is not None else None
    fraction = finite(nanos) if nanos is not None else None
    if seconds is None or fraction is None:
        return None
    return finite(round(seconds * 1000 + fraction / 1_000_000, 6))
