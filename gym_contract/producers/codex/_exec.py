"""Map a captured `codex exec --json` stdout (`thread.started`, `turn.*`, `item.*`, `error`) to a session."""

from __future__ import annotations

from typing import Any, Final

from gym_contract._values import count, integer, nonempty, obj, text
from gym_contract.producers.claude_code._files import gap
from gym_contract.producers.codex._read import Artifact
from gym_contract.producers.codex._session import Session, ToolEnd

# Items that are tool calls, and the status each item status means once the item is no longer running.
TOOL_ITEMS: Final = frozenset({"command_execution", "mcp_tool_call", "file_change", "web_search", "collab_tool_call"})
_STATUS: Final = {"completed": "completed", "failed": "failed", "declined": "cancelled", "in_progress": "incomplete"}


def map_exec(artifact: Artifact) -> Session:
    """The session an `exec --json` stream shows: its thread, the agent's messages and reasoning, its tool items.

    The stream has no time, no response id, no prompt and no raw tool call: tool calls are timeless,
    and the conversation holds only what the agent said and its reasoning summaries.
    """
    thread = next(
        (
            nonempty(line.event.get("thread_id"))
            for line in artifact.lines
            if line.event.get("type") == "thread.started" and nonempty(line.event.get("thread_id"))
        ),
        None,
    )
    session = Session(session_id=thread or artifact.file, file=artifact.file)
    session.gaps.append(gap("conversation_partial", session.session_id))
    latest: dict[str, dict[str, Any]] = {}  # item id → its last state, in the order items first appeared
    for line in artifact.lines:
        event = line.event
        session.events.append(event)
        kind = text(event.get("type"))
        if kind == "turn.started":
            session.turns_started += 1
        elif kind == "turn.completed":
            session.turns_completed += 1
            usage = obj(event.get("usage"))
            if usage is not None:  # each turn.completed states the thread's running totals: the last one counts
                session.tokens = {
                    "input_tokens": count(usage.get("input_tokens")),
                    "cached_input_tokens": count(usage.get("cached_input_tokens")),
                    "output_tokens": count(usage.get("output_tokens")),
                    "reasoning_output_tokens": count(usage.get("reasoning_output_tokens")),
                }
        elif kind == "turn.failed":
            session.turns_failed += 1
        elif kind in ("item.started", "item.updated", "item.completed"):
            item = obj(event.get("item"))
            item_id = nonempty(item.get("id")) if item is not None else None
            if item is None or item_id is None:
                session.gaps.append(gap("invalid_transcript_record", session.session_id, line.where))
                continue
            latest.setdefault(item_id, item)
            latest[item_id] = {**item, "_completed": kind == "item.completed"}
    for item_id, item in latest.items():
        _item(session, item_id, item)
    return session


def _item(session: Session, item_id: str, item: dict[str, Any]) -> None:
    kind = text(item.get("type"))
    if kind == "agent_message" and isinstance(item.get("text"), str):
        session.conversation.append(
            {
                "type": "message",
                "role": "assistant",
                "id": item_id,
                "status": "completed",
                "content": [{"type": "output_text", "text": item["text"], "annotations": []}],
            }
        )
    elif kind == "reasoning" and isinstance(item.get("text"), str):
        session.conversation.append(
            {"type": "reasoning", "id": item_id, "summary": [{"type": "summary_text", "text": item["text"]}]}
        )
    elif kind in TOOL_ITEMS:
        tool = session.tool(item_id)
        tool.name = _tool_name(kind, item)
        tool.timeless = True
        tool.starts.append(None)
        tool.ends.append(_end(kind, item))


def _tool_name(kind: str, item: dict[str, Any]) -> str:
    if kind == "mcp_tool_call":
        server, name = nonempty(item.get("server")), nonempty(item.get("tool"))
        return f"{server}.{name}" if server and name else name or kind
    if kind == "collab_tool_call":
        return nonempty(item.get("tool")) or kind
    return kind


def _end(kind: str, item: dict[str, Any]) -> ToolEnd:
    """How a tool item ended, from its last state; an item never completed is `incomplete`."""
    raw = text(item.get("status"))
    status = _STATUS.get(raw or "", "unknown") if item.get("_completed") else "incomplete"
    if kind == "web_search" and item.get("_completed"):
        status = "completed"  # a web search item carries no status: its completion is its result
    if kind == "mcp_tool_call" and obj(item.get("error")) is not None:
        status = "failed"
    error_type: str | None = "declined" if raw == "declined" else None
    code = integer(item.get("exit_code")) if kind == "command_execution" else None
    if code is not None and code != 0:
        status, error_type = "failed", f"exit_code_{code}"
    return ToolEnd(None, None, status, error_type)
