"""Map OpenCode sessions, messages and parts to invocations, conversations, tool calls and compactions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from gym_contract._json_writing import dumps
from gym_contract._parent_links import LinkForest
from gym_contract._values import finite, nonempty, obj, text
from gym_contract.models import ObservationGap
from gym_contract.producers._kit import gap, tool_call_record
from gym_contract.producers.opencode._forms import Message, Part, Store

# OpenCode shows the model this text in place of a tool output it has pruned (the stored output stays).
PRUNED_OUTPUT: Final = "[Old tool result content cleared]"
_TOOL_STATUS: Final = {"completed": "completed", "error": "failed", "running": "incomplete", "pending": "incomplete"}


def seconds(milliseconds: Any) -> float | None:
    """OpenCode's epoch milliseconds as Unix seconds; a negative or non-numeric time is unknown."""
    value = finite(milliseconds)
    return value / 1000 if value is not None and value >= 0 else None


@dataclass
class ToolPart:
    """One `tool` part as a call: where it ran and what its state says."""

    owner: str
    call_id: str | None
    name: str | None
    status: str
    started_ms: float | None
    ended_ms: float | None
    child: str | None


@dataclass
class Mapped:
    """What the store says, before the invocation tree is settled."""

    conversations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    error_type: dict[str, str | None] = field(default_factory=dict)
    tools: list[ToolPart] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    gaps: list[ObservationGap] = field(default_factory=list)
    # message id → the first conversation item it produced, for a compaction's first kept item
    first_item: dict[tuple[str, str], str] = field(default_factory=dict)


def map_store(store: Store) -> Mapped:
    mapped = Mapped()
    for session in store.sessions:
        mapped.conversations.setdefault(session.session_id, [])
        mapped.status.setdefault(session.session_id, "unknown")
    summaries: dict[str, list[str]] = {}  # compaction message id → the summary messages that answer it
    summary_text: dict[str, list[str]] = {}
    for message in store.messages:
        _message_status(mapped, message)
        if message.info.get("summary") is True:
            summary_text[message.message_id] = []
            parent = nonempty(message.info.get("parentID"))
            if parent is not None:
                summaries.setdefault(parent, []).append(message.message_id)
    compaction_parts: list[tuple[str, Message, dict[str, Any]]] = []
    for message in store.messages:
        for part in message.parts:
            owner = part.session_id if part.session_id in mapped.conversations else None
            if owner is None:
                mapped.gaps.append(gap("agent_artifact_record_unowned", detail=part.part_id))
                continue
            kind = part.data.get("type")
            if kind == "compaction":
                compaction_parts.append((owner, message, part.data))
            elif kind == "text":
                _text(mapped, owner, message, part, summary_text)
            elif kind == "reasoning":
                _reasoning(mapped, owner, message, part)
            elif kind == "tool" and message.info.get("role") == "assistant":
                _tool(mapped, owner, message, part)
    for owner, message, compaction in compaction_parts:
        _compaction(mapped, owner, message, compaction, summaries.get(message.message_id, []), summary_text)
    return mapped


def _message_status(mapped: Mapped, message: Message) -> None:
    """An assistant error fails the session; otherwise a completed assistant message completes it."""
    owner = message.session_id
    if owner is None or owner not in mapped.status:
        mapped.gaps.append(gap("agent_artifact_record_unowned", detail=message.message_id))
        return
    if message.info.get("role") != "assistant":
        return
    error = obj(message.info.get("error"))
    if error is not None:
        mapped.status[owner] = "failed"
        mapped.error_type[owner] = nonempty(error.get("name")) or "error"
    time = obj(message.info.get("time")) or {}
    if mapped.status[owner] != "failed" and seconds(time.get("completed")) is not None:
        mapped.status[owner] = "completed"


def _text(mapped: Mapped, owner: str, message: Message, part: Part, summary_text: dict[str, list[str]]) -> None:
    said = part.data.get("text")
    if not isinstance(said, str) or not said.strip():
        return
    if message.message_id in summary_text:
        summary_text[message.message_id].append(said)
    role = message.info.get("role")
    if role == "user" and part.data.get("ignored") is not True:
        mapped.conversations[owner].append({"type": "message", "role": "user", "content": said})
    elif role == "assistant":
        item = {
            "type": "message",
            "id": part.part_id,
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": said, "annotations": []}],
        }
        mapped.conversations[owner].append(item)
        mapped.first_item.setdefault((owner, message.message_id), part.part_id)


def _reasoning(mapped: Mapped, owner: str, message: Message, part: Part) -> None:
    said = part.data.get("text")
    if message.info.get("role") != "assistant" or not isinstance(said, str) or not said.strip():
        return
    item = {"type": "reasoning", "id": part.part_id, "summary": [{"type": "summary_text", "text": said}]}
    mapped.conversations[owner].append(item)
    mapped.first_item.setdefault((owner, message.message_id), part.part_id)


def _arguments(value: Any) -> str:
    if value is None:
        return "{}"
    return value if isinstance(value, str) else dumps(value, sort_keys=True).decode()


def _tool(mapped: Mapped, owner: str, message: Message, part: Part) -> None:
    """A function call and its output in the conversation, and the call with its artifact timing."""
    state = obj(part.data.get("state")) or {}
    native = state.get("status")
    call_id = nonempty(part.data.get("callID"))
    if call_id is None:
        mapped.gaps.append(gap("tool_call_identity_unavailable", owner, part.part_id))
    # Without OpenCode's call id the part's own id keeps the call and its output paired in the conversation.
    item_id = call_id or part.part_id
    answered = "completed" if native == "completed" else "incomplete"
    name = text(part.data.get("tool"))
    conversation = mapped.conversations[owner]
    conversation.append(
        {
            "type": "function_call",
            "id": item_id,
            "call_id": item_id,
            "name": name or "",
            "arguments": _arguments(state.get("input")),
            "status": answered,
        }
    )
    mapped.first_item.setdefault((owner, message.message_id), item_id)
    time = obj(state.get("time")) or {}
    if native == "completed" and time.get("compacted") is not None:
        output: Any = PRUNED_OUTPUT
    else:
        output = state.get("output") if state.get("output") is not None else state.get("error")
    if output is not None:
        shown = output if isinstance(output, str) else dumps(output, sort_keys=True).decode()
        conversation.append({"type": "function_call_output", "call_id": item_id, "output": shown, "status": answered})
    metadata = obj(state.get("metadata")) or {}
    if not metadata:
        metadata = obj(part.data.get("metadata")) or {}
    started, ended = finite(time.get("start")), finite(time.get("end"))
    mapped.tools.append(
        ToolPart(
            owner,
            call_id,
            name,
            _TOOL_STATUS.get(native, "unknown") if isinstance(native, str) else "unknown",
            started if started is not None and started >= 0 else None,
            ended if ended is not None and ended >= 0 else None,
            nonempty(metadata.get("sessionId")),
        )
    )


def _compaction(
    mapped: Mapped,
    owner: str,
    message: Message,
    part: dict[str, Any],
    summary_ids: list[str],
    summary_text: dict[str, list[str]],
) -> None:
    """A `compaction` part: trigger, the one summary that answers it, and the first item of the kept tail."""
    summary = "\n".join(summary_text.get(summary_ids[0], [])) if len(summary_ids) == 1 else None
    if len(summary_ids) > 1:
        mapped.gaps.append(gap("compaction_summary_ambiguous", owner))
    trigger = "overflow" if part.get("overflow") is True else "automatic" if part.get("auto") is True else "manual"
    tail = nonempty(part.get("tail_start_id"))
    first_kept = mapped.first_item.get((owner, tail)) if tail is not None else None
    time = obj(message.info.get("time")) or {}
    mapped.compactions.append(
        {
            "kind": "context_compaction",
            "invocation_id": owner,
            "observed_at": seconds(time.get("created")),
            "trigger": trigger,
            "tokens_before": None,
            "tokens_after": None,
            "outcome": "completed" if summary else "unknown",
            "summary": summary or None,
            "first_kept_item_id": first_kept,
            "before_model_call": None,
            "model_calls": [],
            "after_model_call": None,
        }
    )
    if tail is not None and first_kept is None:
        mapped.gaps.append(gap("compaction_first_kept_item_unavailable", owner, tail))
    if not summary:
        mapped.gaps.append(gap("compaction_summary_unavailable", owner))
    mapped.gaps.append(gap("compaction_token_counts_unavailable", owner))
    mapped.gaps.append(gap("compaction_model_call_boundary_unavailable", owner))


def tool_records(mapped: Mapped) -> tuple[list[dict[str, Any]], list[ObservationGap]]:
    """One record per tool part with a call id; a call id a session repeats gives none, and a gap."""
    records: list[dict[str, Any]] = []
    gaps: list[ObservationGap] = []
    seen: dict[tuple[str, str], int] = {}
    for tool in mapped.tools:
        if tool.call_id is not None:
            seen[(tool.owner, tool.call_id)] = seen.get((tool.owner, tool.call_id), 0) + 1
    reported: set[tuple[str, str]] = set()
    for tool in mapped.tools:
        if tool.call_id is None:
            continue
        key = (tool.owner, tool.call_id)
        if seen[key] > 1:
            if key not in reported:
                reported.add(key)
                gaps.append(gap("tool_call_identity_ambiguous", tool.owner, tool.call_id))
            continue
        started, ended = tool.started_ms, tool.ended_ms
        if started is not None and ended is not None and ended < started:
            gaps.append(gap("tool_timing_invalid", tool.owner, tool.call_id))
            ended = None
        if started is None or (tool.status in ("completed", "failed") and ended is None):
            gaps.append(gap("tool_timing_unavailable", tool.owner, tool.call_id))
        duration = finite(ended - started) if started is not None and ended is not None else None
        records.append(
            tool_call_record(
                tool.owner,
                tool.call_id,
                tool.name,
                started=seconds(started),
                completed=seconds(ended),
                duration_ms=duration,
                status=tool.status,
                error_type="tool_error" if tool.status == "failed" else None,
            )
        )
    return records, gaps


def invocation_records(
    store: Store, mapped: Mapped, ending: tuple[str, str | None] | None
) -> tuple[list[dict[str, Any]], list[ObservationGap]]:
    """One invocation per session with its parent and spawning call; ``ending`` is the process's word on the roots."""
    spawners: dict[str, list[str]] = {}
    spawned_status: dict[str, str] = {}
    for tool in mapped.tools:
        if tool.child is not None and tool.call_id is not None:
            if tool.call_id not in spawners.setdefault(tool.child, []):
                spawners[tool.child].append(tool.call_id)
            spawned_status[tool.child] = tool.status
    known = {session.session_id for session in store.sessions}
    links = LinkForest()
    records: list[dict[str, Any]] = []
    gaps: list[ObservationGap] = []
    for session in store.sessions:
        owner, parent = session.session_id, session.parent_id
        if parent is not None and parent not in known:
            gaps.append(gap("subagent_parent_unavailable", owner, parent))
        elif parent is not None and not links.link(owner, parent):
            gaps.append(gap("cyclic_subagent_parent", owner, parent))
            parent = None
        candidates = spawners.get(owner, [])
        if len(candidates) > 1:
            gaps.append(gap("subagent_spawn_ambiguous", owner))
        elif parent is not None and not candidates:
            gaps.append(gap("subagent_spawn_tool_unavailable", owner))
        status = mapped.status.get(owner, "unknown")
        error_type = mapped.error_type.get(owner) if status == "failed" else None
        if status == "unknown" and owner in spawned_status:
            status = spawned_status[owner]
            error_type = "tool_error" if status == "failed" else None
        if parent is None and ending is not None:
            status, error_type = ending
        records.append(
            {
                "kind": "agent_invocation",
                "invocation_id": owner,
                "parent_invocation_id": parent,
                "spawned_by_tool_call_id": candidates[0] if len(candidates) == 1 else None,
                "status": status,
                "duration_ms": None,
                "error_type": error_type,
                "model_calls": [],
                "conversation": mapped.conversations.get(owner, []),
            }
        )
    return records, gaps
