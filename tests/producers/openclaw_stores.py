"""OpenClaw artifacts for the tests, built from the documented layout: no licensed real OpenClaw store is known.

A home holds `.openclaw/agents/<agentId>/sessions/sessions.json` (session key → `sessionId`,
`sessionFile`, `spawnedBy` / `parentSessionKey`) and each session's transcript `<sessionId>.jsonl`
beside it, in the Pi session format (v3: `session` header, entries with `id` / `parentId`); a tool
result carries `timestamp` (epoch milliseconds), `isError` and `details.durationMs` /
`details.status`, and a `compaction` entry its `reason`, tokens, summary and first kept entry, as
OpenClaw writes them. PinchBench copies the stores to `openclaw_sessions/` and the root transcript
to `0001_transcripts/<task>.jsonl`.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

START = 1_767_225_600.0  # 2026-01-01T00:00:00Z
ROOT_KEY, CHILD_KEY, GRANDCHILD_KEY = "agent:main:main", "agent:main:subagent:reader", "agent:worker:subagent:counter"


def iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


class Transcript:
    """A session file written entry by entry, each linked to the one before (or to a named parent: a branch)."""

    def __init__(self, session_id: str, at: float) -> None:
        self.at = at
        self.entries: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": session_id, "timestamp": iso(at), "cwd": "/work"}
        ]
        self.last: str | None = None

    def add(self, kind: str, parent: str | None = "", **fields: Any) -> str:
        self.at += 1.0
        entry_id = f"{len(self.entries):08x}"
        linked = self.last if parent == "" else parent
        self.entries.append({"type": kind, "id": entry_id, "parentId": linked, "timestamp": iso(self.at), **fields})
        self.last = entry_id
        return entry_id

    def user(self, said: str) -> str:
        content = [{"type": "text", "text": said}]
        return self.add("message", message={"role": "user", "content": content, "timestamp": int(self.at * 1000)})

    def assistant(self, response_id: str, *blocks: dict[str, Any], stop: str = "stop", **extra: Any) -> str:
        message = {
            "role": "assistant",
            "content": list(blocks),
            "responseId": response_id,
            "stopReason": stop,
            "usage": {"input": 100, "output": 20, "cacheRead": 50, "cacheWrite": 0},
            "timestamp": int((self.at + 1) * 1000),
            **extra,
        }
        return self.add("message", message=message)

    def result(self, call_id: str, name: str, said: str, duration_ms: float | None, **extra: Any) -> str:
        details: dict[str, Any] = {"status": extra.pop("status", "completed")}
        if duration_ms is not None:
            details["durationMs"] = duration_ms
        message = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": said}],
            "isError": extra.pop("is_error", False),
            "details": details,
            "timestamp": int((self.at + 1) * 1000),
        }
        return self.add("message", message=message)

    def bytes(self) -> bytes:
        return jsonl(self.entries)


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def text(said: str) -> dict[str, Any]:
    return {"type": "text", "text": said}


def root_transcript() -> Transcript:
    """The main agent: two reads at once, a subagent spawned, a compaction, then its answer."""
    run = Transcript("s-root", START)
    run.user("Summarise the notes and count the words in them.")
    run.assistant(
        "resp-1",
        {"type": "thinking", "thinking": "Read both files first."},
        call("call-a", "read", path="notes/a.md"),
        call("call-b", "read", path="notes/b.md"),
        stop="toolUse",
    )
    run.result("call-a", "read", "alpha notes", 120)
    run.result("call-b", "read", "beta notes", 1500.5)
    run.assistant("resp-2", call("call-spawn", "sessions_spawn", task="count the words"), stop="toolUse")
    run.result("call-spawn", "sessions_spawn", "spawned agent:main:subagent:reader", 15)
    run.add(
        "compaction",
        summary="Read notes/a.md and notes/b.md; a subagent counts words.",
        firstKeptEntryId="00000006",
        tokensBefore=180_000,
        tokensAfter=12_000,
        reason="threshold",
    )
    run.assistant("resp-3", text("The notes are about alpha and beta; 42 words."))
    return run


def child_transcript() -> Transcript:
    """The subagent: one command that fails, then a second that runs; its transcript branches once (a retry)."""
    run = Transcript("s-reader", START + 3)
    asked = run.user("count the words")
    run.assistant("resp-c1", call("call-wc", "exec", command="wc -w notes"), stop="toolUse")
    run.result("call-wc", "exec", "wc: notes: Is a directory", 8, is_error=True, status="error")
    run.add("message", parent=asked, message={"role": "user", "content": [text("count the words again")]})
    run.assistant("resp-c2", call("call-wc2", "exec", command="cat notes/* | wc -w"), stop="toolUse")
    run.result("call-wc2", "exec", "42", 30)
    run.assistant("resp-c3", text("42"))
    return run


def grandchild_transcript() -> Transcript:
    """A subagent of the subagent, run by another agent: its call has no result (the run was cut there)."""
    run = Transcript("s-counter", START + 6)
    run.user("double-check the count")
    run.assistant("resp-g1", call("call-g", "exec", command="wc -w notes/a.md"), stop="toolUse")
    return run


def home_files(prefix: str = ".openclaw/agents") -> dict[str, bytes]:
    """Two agents: `main` (the root and its subagent) and `worker` (the grandchild), by path under ``prefix``."""
    main = {
        ROOT_KEY: {"sessionId": "s-root", "sessionFile": "/home/sandbox/.openclaw/agents/main/sessions/s-root.jsonl"},
        CHILD_KEY: {"sessionId": "s-reader", "spawnedBy": ROOT_KEY, "parentSessionKey": ROOT_KEY},
    }
    worker = {GRANDCHILD_KEY: {"sessionId": "s-counter", "parentSessionKey": CHILD_KEY}}
    return {
        f"{prefix}/main/sessions/sessions.json": json.dumps(main, indent=2).encode(),
        f"{prefix}/main/sessions/s-root.jsonl": root_transcript().bytes(),
        f"{prefix}/main/sessions/s-reader.jsonl": child_transcript().bytes(),
        f"{prefix}/worker/sessions/sessions.json": json.dumps(worker, indent=2).encode(),
        f"{prefix}/worker/sessions/s-counter.jsonl": grandchild_transcript().bytes(),
    }


def pinchbench_files(task: str = "task_03_summary") -> dict[str, bytes]:
    """A PinchBench output folder holding the same stores, and the root's transcript under the task's name."""
    files = home_files("openclaw_sessions/agents")
    files[f"0001_transcripts/{task}.jsonl"] = root_transcript().bytes()
    return files
