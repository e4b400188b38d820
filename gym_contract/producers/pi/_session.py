"""Read Pi session entries (layouts v1, v2 and v3) into typed facts; the reader any Pi-format transcript can use.

A session file is JSONL: a `session` header (v1 has no `version`), then entries — `message`,
`compaction`, `model_change`, `thinking_level_change`, `branch_summary`, `custom`,
`custom_message`, `label`, `session_info`. From v2 every entry has an `id` and a `parentId`
(a tree; a compaction names its first kept entry by `firstKeptEntryId`); v1 entries have no ids,
and a v1 compaction names the first kept entry by its position, `firstKeptEntryIndex`, among the
file's parsed entries (header included), as Pi's own migration counts it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final

from gym_contract._values import count, finite, integer, nonempty, obj, text
from gym_contract.producers._kit import gap, timestamp
from gym_contract.producers.pi._facts import Compaction, PiRun, take_message

# Entries that carry no conversation and no tool or compaction fact: settings and bookkeeping.
_BOOKKEEPING: Final = frozenset({"model_change", "thinking_level_change", "custom", "label", "session_info"})


def entry_time(entry: dict[str, Any]) -> float | None:
    """When the entry was written: its ISO `timestamp`, else its message's `timestamp` in milliseconds."""
    written = timestamp(entry.get("timestamp")) if isinstance(entry.get("timestamp"), str) else None
    if written is not None:
        return written
    message = obj(entry.get("message"))
    milliseconds = finite(message.get("timestamp")) if message is not None else None
    return milliseconds / 1000 if milliseconds is not None and _representable(milliseconds / 1000) else None


def _representable(seconds: float) -> bool:
    try:
        datetime.fromtimestamp(seconds)
    except (OverflowError, OSError, ValueError):
        return False
    return True


def read_session(entries: Iterable[tuple[int, dict[str, Any]]], name: str) -> PiRun:
    """The facts of a session's entries, given as (line number, parsed object) in file order.

    ``name`` is the file's name as gaps show it (`<name>:<line>`). An entry of no known shape is a
    gap, never an exception.
    """
    run = PiRun(form="session")
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
        elif kind not in _BOOKKEEPING:
            run.gaps.append(gap("invalid_transcript_record", None, f"{name}:{line}"))
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
    run.compactions.append(
        Compaction(
            observed_at=entry_time(entry),
            trigger=None,
            tokens_before=count(entry.get("tokensBefore")),
            tokens_after=count(entry.get("tokensAfter")),
            summary=summary if isinstance(summary, str) else None,
            first_kept_item_id=kept,
            outcome="completed",
            before=run.stops[-1].response_id if run.stops else None,
        )
    )
