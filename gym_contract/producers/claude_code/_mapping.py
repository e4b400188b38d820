"""Map Claude Code transcript events to invocations, conversations, tool calls and compactions (PRODUCERS 5.2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from gym_contract._json_writing import dumps
from gym_contract._values import count, first_text, nonempty, obj, text
from gym_contract.models import ObservationGap
from gym_contract.producers._kit import gap, timestamp
from gym_contract.producers.claude_code._files import TranscriptEvent

# Claude Code runs these helpers as agents of their own; they are not task subagents.
INTERNAL_AGENT_PREFIXES: Final = {"acompact-": "compaction_summariser", "aprompt_suggestion-": "prompt_suggestion"}
SYNTHETIC_MODEL: Final = "<synthetic>"
_TOOL_STATUSES: Final = frozenset({"completed", "failed", "timeout", "cancelled", "incomplete"})
_FAILED: Final = frozenset({"failed", "failure", "error"})
_ABORTED: Final = frozenset({"aborted", "cancelled", "canceled", "interrupted"})
_COMPLETED: Final = frozenset({"completed", "complete", "success", "succeeded"})


def internal_agent_kind(agent_id: str) -> str | None:
    return next((kind for prefix, kind in INTERNAL_AGENT_PREFIXES.items() if agent_id.startswith(prefix)), None)


def is_synthetic_error(event: dict[str, Any]) -> bool:
    """The CLI's API-error prose dressed as an assistant message: not model output."""
    message = event.get("message")
    if event.get("isApiErrorMessage") is True or event.get("is_api_error_message") is True:
        return True
    return isinstance(message, dict) and message.get("model") == SYNTHETIC_MODEL


@dataclass
class Invocation:
    invocation_id: str
    is_subagent: bool
    has_events: bool = False
    response_ids: list[str] = field(default_factory=list)
    conversation: list[dict[str, Any]] = field(default_factory=list)
    last_was_compaction: bool = False


@dataclass
class Compaction:
    invocation_id: str
    observed_at: float | None
    trigger: str | None
    tokens_before: int | None
    tokens_after: int | None
    outcome: str
    summary: str | None
    is_summary: bool
    is_boundary: bool
    before: str | None
    after: str | None = None
    after_seen: bool = False


@dataclass
class ToolEnds:
    name: str | None = None
    starts: list[float | None] = field(default_factory=list)
    finishes: list[tuple[float | None, str]] = field(default_factory=list)


@dataclass
class Mapped:
    """What the transcript events say, before the invocation tree is settled."""

    invocations: dict[str, Invocation] = field(default_factory=dict)
    tools: dict[tuple[str, str], ToolEnds] = field(default_factory=dict)
    compactions: list[Compaction] = field(default_factory=list)
    # (child, parent invocation, spawning tool call id, tool status) in the order the links were seen
    links: list[tuple[str, str, str, str]] = field(default_factory=list)
    internal_agents: dict[str, str] = field(default_factory=dict)
    synthetic_errors: int = 0
    gaps: list[ObservationGap] = field(default_factory=list)

    def invocation(self, invocation_id: str, is_subagent: bool) -> Invocation:
        found = self.invocations.get(invocation_id)
        if found is None:
            found = self.invocations[invocation_id] = Invocation(invocation_id, is_subagent)
        return found


def map_events(events: list[TranscriptEvent], sidecars: dict[str, dict[str, Any]] | None = None) -> Mapped:
    mapped = Mapped()
    for located in events:
        event = located.event
        agent_id = nonempty(event.get("agentId"))
        is_subagent = agent_id is not None
        invocation_id: str = agent_id if agent_id is not None else event["sessionId"]
        kind = internal_agent_kind(invocation_id) if is_subagent else None
        if kind is not None:
            mapped.internal_agents.setdefault(invocation_id, kind)
            continue
        invocation = mapped.invocation(invocation_id, is_subagent)
        invocation.has_events = True
        message = obj(event.get("message")) or {}
        role = first_text(message.get("role"), event.get("type"))
        if _is_compaction_evidence(event, message):
            _compaction(mapped, invocation, event, message)
            continue
        if role == "assistant":
            if is_synthetic_error(event):
                mapped.synthetic_errors += 1
                continue
            _assistant(mapped, invocation, event, message)
        elif role in ("user", "system", "developer") and "content" in message:
            _user(mapped, invocation, event, message, role)
        else:
            continue
        invocation.last_was_compaction = False
    _sidecar_links(mapped, sidecars or {})
    return mapped


def _sidecar_links(mapped: Mapped, sidecars: dict[str, dict[str, Any]]) -> None:
    """A sidecar's `toolUseId` links its subagent to the one invocation that made that tool call."""
    for child, sidecar in sidecars.items():
        call_id = nonempty(sidecar.get("toolUseId"))
        if call_id is None or internal_agent_kind(child) is not None:
            continue
        owners = [
            (owner, ends) for (owner, tool_id), ends in mapped.tools.items() if tool_id == call_id and ends.starts
        ]
        if len(owners) != 1:
            continue  # the call is not in the transcripts (or not once): toolUseResult is the only evidence left
        owner, ends = owners[0]
        status = ends.finishes[0][1] if len(ends.finishes) == 1 else "unknown"
        mapped.links.append((child, owner, call_id, status))
        mapped.invocation(child, is_subagent=True)


def _metadata(event: dict[str, Any], message: dict[str, Any]) -> dict[str, Any] | None:
    for holder in (event, message):
        for key in ("compactMetadata", "compact_metadata"):
            if isinstance(holder.get(key), dict):
                return holder[key]  # type: ignore[no-any-return]
    return None


def _is_compaction_evidence(event: dict[str, Any], message: dict[str, Any]) -> bool:
    summary = event.get("isCompactSummary") is True or message.get("isCompactSummary") is True
    boundary = event.get("type") == "system" and event.get("subtype") == "compact_boundary"
    return summary or boundary or _metadata(event, message) is not None


def _first(metadata: dict[str, Any], *keys: str) -> Any:
    return next((metadata[key] for key in keys if metadata.get(key) is not None), None)


def _compaction(mapped: Mapped, invocation: Invocation, event: dict[str, Any], message: dict[str, Any]) -> None:
    metadata = _metadata(event, message) or {}
    is_summary = event.get("isCompactSummary") is True or message.get("isCompactSummary") is True
    is_boundary = event.get("type") == "system" and event.get("subtype") == "compact_boundary"
    said = _first(metadata, "outcome", "status")
    said = said.lower() if isinstance(said, str) else None
    if said in _FAILED or metadata.get("is_error") is True or event.get("is_error") is True:
        outcome = "failed"
    elif said in _ABORTED:
        outcome = "aborted"
    elif said in _COMPLETED or is_summary or is_boundary:
        outcome = "completed"
    else:
        outcome = "unknown"
    found = Compaction(
        invocation_id=invocation.invocation_id,
        observed_at=timestamp(event.get("timestamp")),
        trigger=text(metadata.get("trigger")),
        tokens_before=count(_first(metadata, "tokensBefore", "preTokens", "pre_tokens")),
        tokens_after=count(_first(metadata, "tokensAfter", "postTokens", "post_tokens")),
        outcome=outcome,
        summary=text_of(message.get("content")) if is_summary else None,
        is_summary=is_summary,
        is_boundary=is_boundary,
        before=invocation.response_ids[-1] if invocation.response_ids else None,
    )
    previous = mapped.compactions[-1] if invocation.last_was_compaction and mapped.compactions else None
    if previous is not None and _pairs(previous, found):
        _merge(previous, found)
        invocation.last_was_compaction = False  # a pair is whole; a third marker starts a new compaction
        return
    mapped.compactions.append(found)
    invocation.last_was_compaction = True


def _pairs(earlier: Compaction, later: Compaction) -> bool:
    """A boundary and a summary, one of each, make one compaction."""
    return (earlier.is_boundary and later.is_summary and not later.is_boundary and not earlier.is_summary) or (
        earlier.is_summary and later.is_boundary and not later.is_summary and not earlier.is_boundary
    )


def _merge(into: Compaction, other: Compaction) -> None:
    into.observed_at = into.observed_at if into.observed_at is not None else other.observed_at
    into.trigger = into.trigger if into.trigger is not None else other.trigger
    into.tokens_before = into.tokens_before if into.tokens_before is not None else other.tokens_before
    into.tokens_after = into.tokens_after if into.tokens_after is not None else other.tokens_after
    into.summary = into.summary if into.summary is not None else other.summary
    into.is_summary = into.is_summary or other.is_summary
    into.is_boundary = into.is_boundary or other.is_boundary
    for worse in ("failed", "aborted"):
        if worse in (into.outcome, other.outcome):
            into.outcome = worse
            return
    if into.outcome == "unknown":
        into.outcome = other.outcome


def text_of(content: Any) -> str | None:
    """Text of a content value: a string, or a list of text blocks concatenated; other shapes as sorted JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(b["text"] for b in content if isinstance(b.get("text"), str))
    if content is None:
        return None
    return dumps(content, sort_keys=True).decode()


def _assistant(mapped: Mapped, invocation: Invocation, event: dict[str, Any], message: dict[str, Any]) -> None:
    response_id = nonempty(message.get("id"))
    if response_id is None:
        mapped.gaps.append(gap("model_response_id_missing", invocation.invocation_id))
    elif response_id not in invocation.response_ids:
        invocation.response_ids.append(response_id)
    for compaction in mapped.compactions:
        if compaction.invocation_id == invocation.invocation_id and not compaction.after_seen:
            compaction.after, compaction.after_seen = response_id, True
    content = message.get("content")
    blocks: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    if not isinstance(blocks, list):
        mapped.gaps.append(gap("invalid_assistant_content", invocation.invocation_id))
        return
    uuid = nonempty(event.get("uuid"))
    base = uuid or response_id
    started = timestamp(event.get("timestamp"))
    for index, block in enumerate(blocks):
        _assistant_block(mapped, invocation, block, index, base, started)


def _assistant_block(
    mapped: Mapped, invocation: Invocation, block: Any, index: int, base: str | None, started: float | None
) -> None:
    owner = invocation.invocation_id
    if not isinstance(block, dict):
        mapped.gaps.append(gap("invalid_assistant_content", owner))
        return
    kind = text(block.get("type"))
    if kind == "text" and isinstance(block.get("text"), str):
        if base is None:
            mapped.gaps.append(gap("assistant_item_id_missing", owner))
            return
        invocation.conversation.append(
            {
                "type": "message",
                "id": f"{base}:text:{index}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
            }
        )
    elif kind in ("thinking", "reasoning") and isinstance(block.get(kind), str):
        if base is None:
            mapped.gaps.append(gap("reasoning_item_id_missing", owner))
            return
        invocation.conversation.append(
            {
                "type": "reasoning",
                "id": f"{base}:thinking:{index}",
                "summary": [{"type": "summary_text", "text": block[kind]}],
                "encrypted_content": text(block.get("signature")),
            }
        )
    elif kind == "tool_use":
        call_id, name = nonempty(block.get("id")), text(block.get("name"))
        if call_id is None:
            mapped.gaps.append(gap("tool_call_id_missing", owner))
            return
        if name is None:
            mapped.gaps.append(gap("invalid_assistant_content", owner))
            return
        arguments = dumps(block.get("input"), sort_keys=True).decode()
        invocation.conversation.append(
            {
                "type": "function_call",
                "id": call_id,
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
                "status": "completed",
            }
        )
        ends = mapped.tools.setdefault((owner, call_id), ToolEnds())
        ends.name = ends.name or name
        ends.starts.append(started)
    elif kind in ("text", "thinking", "reasoning"):
        mapped.gaps.append(gap("invalid_assistant_content", owner))
    else:
        mapped.gaps.append(gap("unsupported_assistant_content_block", owner, kind))


def tool_status(block: dict[str, Any], result: Any) -> str:
    if block.get("is_error") is True:
        return "failed"
    if isinstance(result, dict):
        if result.get("interrupted") is True:
            return "incomplete"
        status = text(result.get("status"))
        if status in _TOOL_STATUSES:
            return status
    return "completed"


def _user(mapped: Mapped, invocation: Invocation, event: dict[str, Any], message: dict[str, Any], role: str) -> None:
    owner = invocation.invocation_id
    content = message.get("content")
    if isinstance(content, str):
        invocation.conversation.append({"type": "message", "role": role, "content": content})
        return
    if not isinstance(content, list):
        mapped.gaps.append(gap("invalid_user_content", owner))
        return
    finished = timestamp(event.get("timestamp"))
    result = event.get("toolUseResult")
    results: list[tuple[str, str]] = []
    for block in content:
        if not isinstance(block, dict):
            mapped.gaps.append(gap("invalid_user_content", owner))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            invocation.conversation.append({"type": "message", "role": role, "content": block["text"]})
        elif block.get("type") == "tool_result":
            call_id = nonempty(block.get("tool_use_id"))
            if call_id is None:
                mapped.gaps.append(gap("tool_result_id_missing", owner))
                continue
            status = tool_status(block, result)
            output = text_of(block.get("content"))
            invocation.conversation.append(
                {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": output if output is not None else "",
                    "status": "completed" if status in ("completed", "failed") else "incomplete",
                }
            )
            mapped.tools.setdefault((owner, call_id), ToolEnds()).finishes.append((finished, status))
            results.append((call_id, status))
        else:
            mapped.gaps.append(gap("unsupported_user_content_block", owner))
    child = nonempty(result.get("agentId")) if isinstance(result, dict) else None
    if child is not None:
        if len(results) == 1:
            mapped.links.append((child, owner, results[0][0], results[0][1]))
            mapped.invocation(child, is_subagent=True)
        else:
            mapped.gaps.append(gap("ambiguous_subagent_relation", child))
