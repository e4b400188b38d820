"""The Pi session format, entries in and typed facts out: messages to items, tool calls, compactions, stops."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from gym_contract._json_writing import dumps
from gym_contract._values import count, finite, integer, nonempty, obj, text
from gym_contract.models import ObservationGap
from gym_contract.producers._kit import gap, timestamp

Form = Literal["session", "stream"]
Dialect = Literal["pi", "openclaw"]
"""Whose session file it is: OpenClaw writes Pi's format and adds reasoning fields and result details of its own."""

STATUS_BY_STOP: Final = {"stop": "completed", "error": "failed", "aborted": "incomplete", "length": "incomplete"}
"""Pi's `stopReason` of a session's last assistant message → the invocation's status; any other is unknown."""

_MILLISECONDS_FROM: Final = 1e11
"""A message `timestamp` at least this large counts milliseconds (today's epoch is about 1.7e9 s, 1.7e12 ms)."""

# Roles Pi gives the model as a user message (its `convertToLlm`); `hookMessage` is v2's name of `custom`.
_USER_LIKE: Final = frozenset({"user", "custom", "hookMessage", "branchSummary", "compactionSummary", "bashExecution"})


@dataclass
class ToolCall:
    """One `toolCall` block and what became of it: when it ran, whether it failed."""

    call_id: str
    name: str | None
    called_at: float | None = None
    started_at: float | None = None
    completed_at: float | None = None
    starts: int = 0
    """`tool_execution_start` events (a stream)."""
    ends: int = 0
    """`tool_execution_end` events (a stream)."""
    results: int = 0
    """`toolResult` messages."""
    is_error: bool | None = None
    """The result's boolean `isError`; None when no result said it."""
    calls: int = 0
    """`toolCall` blocks with this id: more than one makes the call's identity ambiguous."""
    reported_at: float | None = None
    """The result message's own `timestamp` (epoch seconds, milliseconds or ISO), as seconds."""
    duration_ms: float | None = None
    """The result's `details.durationMs` (OpenClaw): how long the tool ran."""
    native_status: str | None = None
    """The result's `details.status` (OpenClaw): `ok`, `error`, `timeout` …"""


@dataclass
class Compaction:
    """One compaction: a session's `compaction` entry, or a stream's start/end event pair."""

    observed_at: float | None = None
    trigger: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    summary: str | None = None
    first_kept_item_id: str | None = None
    outcome: str = "unknown"
    error_message: str | None = None
    reason: str | None = None
    """A session `compaction` entry's own `reason` (OpenClaw writes one; Pi's entries have none)."""
    before: str | None = None
    """Response id of the last model call before it (None: none, or none with an id)."""
    after: str | None = None
    after_seen: bool = False
    started: bool = True
    has_result: bool = True


@dataclass(frozen=True)
class Stop:
    """How one assistant message ended: Pi's `stopReason` and `errorMessage`, and where it was read."""

    where: str
    stop_reason: str | None
    error_message: str | None
    response_id: str | None


@dataclass
class PiRun:
    """Everything one Pi artifact says, before it becomes a bundle."""

    form: Form
    dialect: Dialect = "pi"
    session_id: str | None = None
    version: int | None = None
    """The session layout (1, 2 or 3); None for a stream."""
    timed: bool = True
    """Whether the artifact carries times at all (a stream without receipt times does not)."""
    conversation: list[dict[str, Any]] = field(default_factory=list)
    response_ids: list[str] = field(default_factory=list)
    unreferenced_responses: int = 0
    tools: dict[str, ToolCall] = field(default_factory=dict)
    compactions: list[Compaction] = field(default_factory=list)
    stops: list[Stop] = field(default_factory=list)
    final: Stop | None = None
    """The last assistant message of `agent_end`, when a stream has one."""
    branches: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    entries: int = 0
    gaps: list[ObservationGap] = field(default_factory=list)

    @property
    def terminal(self) -> Stop | None:
        """The stop that ended the run: the last assistant message read, else the last one `agent_end` lists."""
        return self.stops[-1] if self.stops else self.final


def message_text(content: Any) -> str:
    """The text of a content value: a string, or its text blocks joined; other blocks leave no text."""
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "".join(block["text"] for block in blocks if isinstance(block, dict) and isinstance(block.get("text"), str))


def _has_other_blocks(content: Any) -> bool:
    """Whether a content list holds blocks that are not text (Pi's `image` blocks)."""
    blocks = content if isinstance(content, list) else []
    return any(not (isinstance(block, dict) and block.get("type") == "text") for block in blocks)


def _user_item(message: dict[str, Any], role: str) -> dict[str, Any] | None:
    """A message Pi gives the model as a user turn, as an input message; None when Pi keeps it from the model."""
    if role == "bashExecution":
        if message.get("excludeFromContext") is True:
            return None
        command, output = text(message.get("command")) or "", text(message.get("output")) or ""
        return {"type": "message", "role": "user", "content": f"{command}\n{output}" if output else command}
    said = message.get("summary") if role in ("branchSummary", "compactionSummary") else message.get("content")
    return {"type": "message", "role": "user", "content": message_text(said)}


def take_message(run: PiRun, message: dict[str, Any], base: str, at: float | None) -> None:
    """Add one message (`role` user, assistant, toolResult or a user-like one) to the run's facts.

    ``base`` names the message in item ids (`<base>:text:<i>`); ``at`` is when the artifact says the
    message was complete: a call's start, a result's end.
    """
    role = text(message.get("role"))
    if role != "assistant" and _has_other_blocks(message.get("content")):
        run.gaps.append(gap("unsupported_user_content_block"))  # an image: the conversation keeps the text alone
    if role == "assistant":
        _assistant(run, message, base, at)
    elif role == "toolResult":
        _tool_result(run, message, at)
    elif role in _USER_LIKE:
        item = _user_item(message, role)
        if item is not None:
            run.conversation.append(item)
    else:
        run.gaps.append(gap("unsupported_user_content_block"))


def _assistant(run: PiRun, message: dict[str, Any], base: str, at: float | None) -> None:
    response_id = nonempty(message.get("responseId"))
    if response_id is None:
        run.unreferenced_responses += 1
    else:
        run.response_ids.append(response_id)
    for compaction in run.compactions:
        if not compaction.after_seen:
            compaction.after, compaction.after_seen = response_id, True
    reason = text(message.get("stopReason"))
    run.stops.append(Stop(base, reason, text(message.get("errorMessage")), response_id))
    usage = obj(message.get("usage")) or {}
    for key in ("input", "output", "cacheRead", "cacheWrite"):
        tokens = count(usage.get(key))
        if tokens is not None:
            run.usage[key] = run.usage.get(key, 0) + tokens
    if run.dialect == "openclaw":
        _message_reasoning(run, message, base)
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for index, block in enumerate(blocks if isinstance(blocks, list) else []):
        _assistant_block(run, block, f"{base}:{index}", at)


def _reasoning(name: str, said: str, signature: str | None = None) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": name,
        "summary": [{"type": "summary_text", "text": said}],
        "encrypted_content": signature,
    }


def _message_reasoning(run: PiRun, message: dict[str, Any], base: str) -> None:
    """OpenClaw's reasoning beside the content: `reasoning_content`, `reasoning_text`, `thinking`, `reasoning`."""
    said = [message[key] for key in ("reasoning_content", "reasoning_text", "thinking") if text(message.get(key))]
    reasoning = message.get("reasoning")
    if text(reasoning):
        said.append(reasoning)
    elif isinstance(reasoning, dict):
        said += [reasoning[key] for key in ("content", "text", "summary") if text(reasoning.get(key))]
    if said:
        run.conversation.append(_reasoning(f"{base}:reasoning", "\n".join(said)))


def _openclaw_thinking(block: dict[str, Any]) -> str | None:
    """The text of an OpenClaw `thinking` or `reasoning` block, in whichever field it sits."""
    for key in ("thinking", "text", "reasoning"):
        if isinstance(block.get(key), str):
            said: str = block[key]
            return said
    return None


def _assistant_block(run: PiRun, block: Any, name: str, at: float | None) -> None:
    kind = text(block.get("type")) if isinstance(block, dict) else None
    if not isinstance(block, dict) or kind is None:
        run.gaps.append(gap("invalid_assistant_content"))
    elif run.dialect == "openclaw" and kind in ("thinking", "reasoning") and _openclaw_thinking(block) is not None:
        run.conversation.append(
            _reasoning(f"{name}:{kind}", _openclaw_thinking(block) or "", text(block.get("thinkingSignature")))
        )
    elif kind == "text" and isinstance(block.get("text"), str):
        content = [{"type": "output_text", "text": block["text"], "annotations": []}]
        run.conversation.append(
            {"type": "message", "id": f"{name}:text", "role": "assistant", "status": "completed", "content": content}
        )
    elif kind == "thinking" and isinstance(block.get("thinking"), str):
        run.conversation.append(_reasoning(f"{name}:thinking", block["thinking"], text(block.get("thinkingSignature"))))
    elif kind == "toolCall":
        _tool_call(run, block, name, at)
    elif kind in ("text", "thinking"):
        run.gaps.append(gap("invalid_assistant_content"))
    else:
        run.gaps.append(gap("unsupported_assistant_content_block", None, kind))


def _tool_call(run: PiRun, block: dict[str, Any], name: str, at: float | None) -> None:
    call_id, tool = nonempty(block.get("id")), text(block.get("name"))
    if call_id is None or tool is None:
        run.gaps.append(gap("tool_call_id_missing" if call_id is None else "invalid_assistant_content"))
        return
    arguments = block.get("arguments")
    if arguments is None and run.dialect == "openclaw":
        arguments = block.get("partialArgs")  # a call cut off while its arguments streamed
    run.conversation.append(
        {
            "type": "function_call",
            "id": call_id,
            "call_id": call_id,
            "name": tool,
            "arguments": dumps(arguments, sort_keys=True).decode(),
            "status": "completed",
        }
    )
    call = run.tools.setdefault(call_id, ToolCall(call_id, tool))
    call.name = call.name or tool
    call.called_at = at
    call.calls += 1


def _tool_result(run: PiRun, message: dict[str, Any], at: float | None) -> None:
    call_id = nonempty(message.get("toolCallId"))
    if call_id is None:
        run.gaps.append(gap("tool_result_id_missing"))
        return
    run.conversation.append(
        {
            "type": "function_call_output",
            "call_id": call_id,
            "output": message_text(message.get("content")),
            "status": "completed",
        }
    )
    call = run.tools.setdefault(call_id, ToolCall(call_id, text(message.get("toolName"))))
    call.results += 1
    if run.form == "session":
        # A session's result says how the call ended; a stream's `tool_execution_end` says it too, and first.
        call.completed_at = at
        call.is_error = message.get("isError") if isinstance(message.get("isError"), bool) else None
        call.reported_at = message_time(message.get("timestamp"))
        details = obj(message.get("details")) or {}
        duration = finite(details.get("durationMs"))
        call.duration_ms = duration if duration is not None and duration >= 0 else None
        call.native_status = text(details.get("status"))
    elif call.is_error is None and isinstance(message.get("isError"), bool):
        call.is_error = message["isError"]


# ------------------------------------------------------------------------- session entries

# Entries that carry no conversation and no tool or compaction fact: settings and bookkeeping.
_BOOKKEEPING: Final = frozenset({"model_change", "thinking_level_change", "custom", "label", "session_info"})
SESSION_ENTRIES: Final = frozenset({"message", "compaction", "branch_summary", "custom_message", *_BOOKKEEPING})
"""The `type`s of the entries a session file holds after its `session` header, in every layout (v1–v3)."""


def is_session_entry(entry: dict[str, Any]) -> bool:
    """Whether a parsed line is an entry of a session file's own shape: a type it holds, a `message` an object."""
    kind = entry.get("type")
    return kind in SESSION_ENTRIES and (kind != "message" or isinstance(entry.get("message"), dict))


def is_session_line(entry: dict[str, Any]) -> bool:
    """Whether a parsed line is a session file's: its `session` header, or an entry of a shape it holds."""
    return entry.get("type") == "session" or is_session_entry(entry)


def entry_time(entry: dict[str, Any]) -> float | None:
    """When the entry was written: its ISO `timestamp`, else its message's `timestamp` in milliseconds."""
    written = timestamp(entry.get("timestamp")) if isinstance(entry.get("timestamp"), str) else None
    if written is not None:
        return written
    message = obj(entry.get("message"))
    milliseconds = finite(message.get("timestamp")) if message is not None else None
    return milliseconds / 1000 if milliseconds is not None and _representable(milliseconds / 1000) else None


def message_time(value: Any) -> float | None:
    """A message's `timestamp` as epoch seconds: a number of milliseconds (≥ 1e11) or seconds, or an ISO string."""
    if isinstance(value, str):
        return timestamp(value)
    number = finite(value)
    if number is None or number < 0:
        return None
    seconds = number / 1000 if number >= _MILLISECONDS_FROM else number
    return seconds if _representable(seconds) else None


def _representable(seconds: float) -> bool:
    try:
        datetime.fromtimestamp(seconds)
    except (OverflowError, OSError, ValueError):
        return False
    return True


def read_session(entries: Iterable[tuple[int, dict[str, Any]]], name: str, dialect: Dialect = "pi") -> PiRun:
    """The facts of a session's entries, given as (line number, parsed object) in file order.

    A session file is JSONL: a `session` header (v1 has no `version`), then entries — `message`,
    `compaction`, `model_change`, `thinking_level_change`, `branch_summary`, `custom`,
    `custom_message`, `label`, `session_info`. From v2 every entry has an `id` and a `parentId`
    (a tree; a compaction names its first kept entry by `firstKeptEntryId`); v1 entries have no
    ids, and a v1 compaction names the first kept entry by its position, `firstKeptEntryIndex`,
    among the file's parsed entries (header included), as Pi's own migration counts it; such an
    entry is named `entry-<position>` here.

    ``name`` is the file's name as gaps show it (`<name>:<line>`); ``dialect`` `openclaw` also reads
    what OpenClaw adds (reasoning fields, `partialArgs`). An entry of no known shape is a gap, never
    an exception.
    """
    run = PiRun(form="session", dialect=dialect)
    children: Counter[str] = Counter()
    position = 0  # the entry's index among parsed entries, the header included: what `firstKeptEntryIndex` counts
    for line, entry in entries:
        kind = text(entry.get("type"))
        if kind == "session":
            if run.entries == 0 and run.session_id is None:
                run.session_id = nonempty(entry.get("id"))
                version = integer(entry.get("version"))
                run.version = version if version is not None and version >= 1 else 1
            position += 1
            continue
        if not is_session_entry(entry):  # no entry of a session, never counted as one: reported by its line
            run.gaps.append(gap("invalid_transcript_record", None, f"{name}:{line}"))
            position += 1
            continue
        run.entries += 1
        own = nonempty(entry.get("id")) if run.version != 1 else None
        base = own if own is not None else f"entry-{position}"
        parent = nonempty(entry.get("parentId"))
        if parent is not None:
            children[parent] += 1
        position += 1
        if kind == "message" and isinstance(entry.get("message"), dict):
            take_message(run, entry["message"], base, entry_time(entry))
        elif kind == "compaction":
            _compaction(run, entry)
        elif kind == "branch_summary" or kind == "custom_message":
            said = entry.get("summary") if kind == "branch_summary" else entry.get("content")
            role = "branchSummary" if kind == "branch_summary" else "custom"
            take_message(run, {"role": role, "summary": said, "content": said}, base, entry_time(entry))
    if run.version is None:
        run.version = 1  # no header at all: entries without ids read as Pi reads a v1 file
    run.branches = sum(1 for seen in children.values() if seen > 1)
    if run.branches:
        run.gaps.append(gap("agent_conversation_branching_unavailable"))
    return run


def _compaction(run: PiRun, entry: dict[str, Any]) -> None:
    """A `compaction` entry: Pi writes one only when a compaction completed."""
    kept = nonempty(entry.get("firstKeptEntryId"))
    if kept is None:
        index = count(entry.get("firstKeptEntryIndex"))
        kept = f"entry-{index}" if index is not None else None
    summary = entry.get("summary")
    observed_at = entry_time(entry)
    if observed_at is None and run.dialect == "openclaw":
        observed_at = message_time(entry.get("timestamp"))  # OpenClaw may write it as epoch milliseconds
    run.compactions.append(
        Compaction(
            observed_at=observed_at,
            trigger=None,
            tokens_before=count(entry.get("tokensBefore")),
            tokens_after=count(entry.get("tokensAfter")),
            summary=summary if isinstance(summary, str) else None,
            first_kept_item_id=kept,
            outcome="completed",
            reason=text(entry.get("reason")),
            before=run.stops[-1].response_id if run.stops else None,
        )
    )
