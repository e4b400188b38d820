"""Pi artifacts for the tests: the shipped real sessions, and the same records laid out as Pi's other forms write them.

Pi migrates a v1 session to v3 on load by giving every entry an `id` and its predecessor's id as
`parentId`, and turning a compaction's `firstKeptEntryIndex` into that entry's `firstKeptEntryId`;
`v3` does the same here. `stream` prints the records as `pi --mode json` would have printed them:
the `session` header, `agent_start`, `message_start`/`message_end` per message, the tool execution
events around each result, the compaction pair under either generation's names, and `agent_end`.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from tests.support import REPO

PI = REPO / "examples" / "pi" / "pi-mono-2025-11"
LARGE = PI / "large-session.jsonl"
COMPACTED = PI / "before-compaction.jsonl"

Generation = Literal["auto_compaction", "compaction"]


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def jsonl(lines: list[Any]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def seconds(entry: dict[str, Any]) -> float:
    return datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")).timestamp()


def v3(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A v1 session's entries as Pi's migration leaves them: v3 header, ids, parent links, first kept ids."""
    out: list[dict[str, Any]] = []
    ids = [f"e{index:07x}" for index in range(len(entries))]
    previous: str | None = None
    for index, entry in enumerate(entries):
        entry = dict(entry)
        if entry["type"] == "session":
            entry["version"] = 3
        else:
            entry["id"], entry["parentId"] = ids[index], previous
            previous = ids[index]
            if entry["type"] == "compaction" and "firstKeptEntryIndex" in entry:
                entry["firstKeptEntryId"] = ids[entry.pop("firstKeptEntryIndex")]
        out.append(entry)
    return out


def tool_calls(entries: list[dict[str, Any]]) -> list[str]:
    """Every `toolCall` block's id, read as plain JSON."""
    return [
        block["id"]
        for entry in entries
        if entry.get("type") == "message" and entry["message"].get("role") == "assistant"
        for block in entry["message"]["content"]
        if block.get("type") == "toolCall"
    ]


def stops(entries: list[dict[str, Any]], *reasons: str) -> list[int]:
    """0-based line indexes of the assistant messages that stopped for one of ``reasons``."""
    return [
        index
        for index, entry in enumerate(entries)
        if entry.get("type") == "message"
        and entry["message"].get("role") == "assistant"
        and entry["message"].get("stopReason") in reasons
    ]


def stream(entries: list[dict[str, Any]], generation: Generation, *, timed: bool) -> list[Any]:
    """The v3 ``entries`` as `pi --mode json` prints them; each line wrapped with its receipt time when ``timed``."""
    events: list[tuple[float, dict[str, Any]]] = []
    header = entries[0]
    at = seconds(header)
    events.append((at, {"type": "session", "version": 3, "id": header["id"], "timestamp": header["timestamp"]}))
    events.append((at, {"type": "agent_start"}))
    results = {
        entry["message"]["toolCallId"]: entry
        for entry in entries
        if entry["type"] == "message" and entry["message"].get("role") == "toolResult"
    }
    messages = []
    for entry in entries[1:]:
        at = seconds(entry)
        if entry["type"] == "compaction":
            start, end = f"{generation}_start", f"{generation}_end"
            events.append((at, {"type": start, "reason": "threshold"}))
            result = {key: entry[key] for key in ("summary", "firstKeptEntryId", "tokensBefore")}
            events.append((at, {"type": end, "result": result, "aborted": False, "willRetry": False}))
            continue
        if entry["type"] != "message":
            continue
        message = entry["message"]
        messages.append(message)
        if message.get("role") == "toolResult":
            call = message["toolCallId"]
            events.append((at, {"type": "tool_execution_end", "toolCallId": call, "isError": message["isError"]}))
        events.append((at, {"type": "message_start", "message": message}))
        events.append((at, {"type": "message_end", "message": message}))
        if message.get("role") == "assistant":
            for block in message["content"]:
                if block.get("type") == "toolCall" and block["id"] in results:
                    started = {"type": "tool_execution_start", "toolCallId": block["id"], "toolName": block["name"]}
                    events.append((at, started))
    events.append((events[-1][0], {"type": "agent_end", "messages": messages[-3:]}))
    return [{"t": at, "line": event} if timed else event for at, event in events]
