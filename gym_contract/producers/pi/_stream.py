"""Read a captured `pi --mode json` stdout, of either event generation, with or without receipt times, into facts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from gym_contract._values import count, nonempty, obj, text
from gym_contract.producers._pi_session import Compaction, PiRun, Stop, ToolCall, take_message

COMPACTION_STARTS: Final = frozenset({"compaction_start", "auto_compaction_start"})
COMPACTION_ENDS: Final = frozenset({"compaction_end", "auto_compaction_end"})
STREAM_EVENTS: Final = frozenset(
    {
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "auto_retry_start",
        "auto_retry_end",
        *COMPACTION_STARTS,
        *COMPACTION_ENDS,
    }
)
"""Event types only a `--mode json` stream has; one of them tells a capture from a session file."""


def read_stream(events: Iterable[tuple[float | None, dict[str, Any]]]) -> PiRun:
    """The facts of a stream's events, given as (receipt time or None, event) in the order printed.

    Pi prints one event per line: a `session` header (from 0.45.1), `agent_start`/`agent_end`,
    `turn_*`, `message_start`/`message_update`/`message_end`, `tool_execution_start`/`_update`/`_end`,
    `auto_retry_start`/`_end`, and the compaction pair — `auto_compaction_start`/`auto_compaction_end`
    in older releases, `compaction_start`/`compaction_end` in newer ones; both are read. The events
    carry no wall clock of their own: a capture that wants tool timing wraps each line as
    ``{"t": <epoch seconds when the line was received>, "line": <the event>}``.
    """
    run = PiRun(form="stream", timed=False)
    opened: Compaction | None = None
    messages = 0
    for received, event in events:
        run.timed = run.timed or received is not None
        kind = text(event.get("type"))
        if kind == "session" and run.session_id is None and run.entries == 0:
            run.session_id = nonempty(event.get("id"))
            continue
        run.entries += 1
        if kind == "message_end" and isinstance(event.get("message"), dict):
            take_message(run, event["message"], f"message-{messages}", received)
            messages += 1
        elif kind == "tool_execution_start":
            _tool(run, event, received, start=True)
        elif kind == "tool_execution_end":
            _tool(run, event, received, start=False)
        elif kind in COMPACTION_STARTS:
            if opened is not None:
                _close_unfinished(run, opened)
            opened = Compaction(
                observed_at=received,
                trigger=text(event.get("reason")),
                before=run.stops[-1].response_id if run.stops else None,
                has_result=False,
            )
        elif kind in COMPACTION_ENDS:
            run.compactions.append(_compaction(run, opened, event, received))
            opened = None
        elif kind == "agent_end":
            run.final = _final(event)
    if opened is not None:
        _close_unfinished(run, opened)
    return run


def _tool(run: PiRun, event: dict[str, Any], received: float | None, *, start: bool) -> None:
    call_id = nonempty(event.get("toolCallId"))
    if call_id is None:
        return  # an execution event that names no call cannot be put beside one
    call = run.tools.setdefault(call_id, ToolCall(call_id, text(event.get("toolName"))))
    call.name = call.name or text(event.get("toolName"))
    if start:
        call.starts += 1
        call.started_at = call.started_at if call.started_at is not None else received
        return
    call.ends += 1
    call.completed_at = received
    call.is_error = event.get("isError") if isinstance(event.get("isError"), bool) else None


def _compaction(run: PiRun, opened: Compaction | None, event: dict[str, Any], received: float | None) -> Compaction:
    found = opened if opened is not None else Compaction(observed_at=received, started=False)
    result = obj(event.get("result"))
    found.trigger = text(event.get("reason")) or found.trigger
    found.has_result = bool(result)
    found.error_message = text(event.get("errorMessage"))
    if event.get("aborted") is True:
        found.outcome = "aborted"
    elif result:
        found.outcome = "completed"
    elif found.error_message is not None:
        found.outcome = "failed"
    else:
        found.outcome = "unknown"
    if result:
        summary = result.get("summary")
        found.summary = summary if isinstance(summary, str) else None
        found.tokens_before = count(result.get("tokensBefore"))
        found.tokens_after = count(result.get("estimatedTokensAfter", result.get("tokensAfter")))
        found.first_kept_item_id = nonempty(result.get("firstKeptEntryId"))
    return found


def _close_unfinished(run: PiRun, opened: Compaction) -> None:
    """A compaction that started and never ended: its outcome is unknown."""
    run.compactions.append(opened)


def _final(event: dict[str, Any]) -> Stop | None:
    """The last assistant message `agent_end` lists; None when it lists none (or a retry follows it)."""
    if event.get("willRetry") is True:
        return None
    messages = event.get("messages")
    assistants = [
        (index, message)
        for index, message in enumerate(messages if isinstance(messages, list) else [])
        if isinstance(message, dict) and message.get("role") == "assistant"
    ]
    if not assistants:
        return None
    index, message = assistants[-1]
    return Stop(
        f"agent_end.messages[{index}]",
        text(message.get("stopReason")),
        text(message.get("errorMessage")),
        nonempty(message.get("responseId")),
    )
