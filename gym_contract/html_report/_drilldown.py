"""One sampled rollout laid out for reading: its invocation tree on a time axis, and each invocation's conversation."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from gym_contract._deep_values import python_repr, python_str
from gym_contract._json_writing import dumps
from gym_contract._values import finite, nonempty, obj, objects, text
from gym_contract._vocabulary import CAPTURE, OBSERVATIONS, TRAJECTORY
from gym_contract.html_report._tallies import SampledRollout
from gym_contract.reading._json_parsing import loads

TEXT_LIMIT = 2000
"""Characters of one conversation item shown; the rest is counted, not shown."""
OUTSIDE = "(no invocation)"
"""The row of model calls that no invocation claims."""


@dataclass(frozen=True)
class Span:
    """Something that took time: a model call, a tool call, or an invocation from its first event to its last."""

    row: str
    what: str
    start: float
    end: float
    label: str


@dataclass(frozen=True)
class Moment:
    """Something that happened at one time: a compaction, or a gap reported against an invocation."""

    row: str
    what: str
    at: float
    label: str


@dataclass(frozen=True)
class Entry:
    """One item of a conversation: who or what said it, and its text."""

    title: str
    body: str
    hidden: int = 0
    """Characters left out of ``body``."""


@dataclass
class Invocation:
    invocation_id: str
    depth: int
    label: str
    conversation: list[Entry] | None
    status: str | None


@dataclass
class Drilldown:
    """What the page shows of one rollout."""

    title: str
    where: str
    invocations: list[Invocation] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    moments: list[Moment] = field(default_factory=list)
    untimed: list[str] = field(default_factory=list)
    """Model and tool calls without a start and end, which the time axis cannot place."""
    gaps: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    """(code, invocation id, detail) of every gap the rollout reports."""
    diagnostics: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(severity, code, path, message)."""
    origin: float | None = None

    def rows(self) -> list[str]:
        """The rows of the time axis, the tree's order: each invocation under its parent."""
        rows = [invocation.label for invocation in self.invocations]
        if any(span.row == OUTSIDE for span in self.spans):
            rows.append(OUTSIDE)
        return rows


def plain(value: Any) -> Any:
    """``value`` with every opaque payload the fast path left as raw JSON decoded.

    Iterative, and the payloads are read as the readers read them: a value nested as deep as a
    record may be is shown, whatever the interpreter's stack.
    """
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, slot = stack.pop()
        if isinstance(item, msgspec.Raw):
            try:
                item = loads(bytes(item))
            except ValueError:  # not JSON after all: shown as written
                item = bytes(item).decode("utf-8", "replace")
        copy: Any = item
        if isinstance(item, dict):
            copy = dict.fromkeys(item)
            stack.extend((child, copy, key) for key, child in item.items())
        elif isinstance(item, list):
            copy = [None] * len(item)
            stack.extend((child, copy, index) for index, child in enumerate(item))
        parent[slot] = copy
    return root[0]


def drilldown(rollout: SampledRollout) -> Drilldown:
    record = rollout.record
    trajectory = record if rollout.kind == "trajectory" else obj(record.get(TRAJECTORY)) or {}
    bundle = obj(record.get(OBSERVATIONS)) or {}
    observed = objects(bundle.get("records"))
    rollout_id = nonempty(trajectory.get("rollout_id")) or nonempty(record.get("_ng_rollout_id"))
    found = Drilldown(
        title=f"rollout {rollout_id}" if rollout_id else f"rollout {rollout.number}",
        where=":".join(str(part) for part in (rollout.source, rollout.line) if part is not None),
        diagnostics=[(d.severity, d.code, d.path, d.message) for d in rollout.diagnostics],
    )
    invocations = objects(trajectory.get("invocations")) or _of_kind(observed, "agent_invocation")
    tools = objects(trajectory.get("tool_calls")) or _of_kind(observed, "tool_call")
    compactions = _of_kind(observed, "context_compaction")
    calls = objects(trajectory.get("model_calls")) or objects((obj(record.get(CAPTURE)) or {}).get("calls"))
    gaps = objects(trajectory.get("gaps")) or objects(bundle.get("gaps"))
    found.gaps = [
        (text(gap.get("code")) or "?", text(gap.get("invocation_id")), _shown(gap.get("detail"))) for gap in gaps
    ]

    rows = _tree(found, invocations)
    owner = {
        ref_id: invocation_id
        for invocation in invocations
        if (invocation_id := text(invocation.get("invocation_id"))) is not None
        for ref in objects(invocation.get("model_calls"))
        if (ref_id := text(ref.get("model_call_id"))) is not None
    }
    for call in calls:
        call_id = text(call.get("model_call_id"))
        label = f"model call {call_id or python_str(call.get('call_index', '?'))}"
        owning = owner.get(call_id or "")
        row = rows.get(owning, OUTSIDE) if owning is not None else OUTSIDE
        _place(found, row, "model call", call, label)
    for tool in tools:
        label = f"{text(tool.get('tool_name')) or 'tool'} ({text(tool.get('status')) or 'status unknown'})"
        _place(found, rows.get(text(tool.get("invocation_id")) or "", OUTSIDE), "tool call", tool, label)
    for compaction in compactions:
        at = finite(compaction.get("observed_at"))
        row = rows.get(text(compaction.get("invocation_id")) or "", OUTSIDE)
        before, after = compaction.get("tokens_before"), compaction.get("tokens_after")
        if at is not None:
            found.moments.append(Moment(row, "compaction", at, f"compaction: {before} → {after} tokens"))
        else:
            found.untimed.append(f"compaction in {row}")
    _invocation_spans(found)
    origin = min([span.start for span in found.spans] + [moment.at for moment in found.moments], default=None)
    found.origin = origin
    for code, invocation_id, detail in found.gaps:
        gapped = rows.get(invocation_id or "")
        if gapped is not None and origin is not None:
            start = min((span.start for span in found.spans if span.row == gapped), default=origin)
            found.moments.append(Moment(gapped, "gap", start, f"gap {code}" + (f": {detail}" if detail else "")))
    return found


def _of_kind(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [record for record in records if record.get("kind") == kind]


def _tree(found: Drilldown, invocations: list[dict[str, Any]]) -> dict[str, str]:
    """Lay out the invocations parent first; return each invocation id's row label."""
    by_id = {
        invocation_id: invocation
        for invocation in invocations
        if (invocation_id := text(invocation.get("invocation_id"))) is not None
    }
    children: dict[str | None, list[str]] = {}
    for invocation_id, invocation in by_id.items():
        parent = text(invocation.get("parent_invocation_id"))
        children.setdefault(parent if parent in by_id and parent != invocation_id else None, []).append(invocation_id)
    rows: dict[str, str] = {}
    for invocation_id, depth in _depth_first(children, None, 0, set()):
        invocation = by_id[invocation_id]
        conversation = invocation.get("conversation")
        prefix = "\u00a0\u00a0" * depth + ("↳ " if depth else "")
        label = f"{prefix}{invocation_id[:12]}"
        rows[invocation_id] = label
        found.invocations.append(
            Invocation(
                invocation_id,
                depth,
                label,
                list(_entries(plain(conversation))) if isinstance(conversation, (list, msgspec.Raw)) else None,
                text(invocation.get("status")),
            )
        )
    # Invocations caught in a parent cycle are reached from no root; each still gets its row.
    for invocation_id in by_id.keys() - rows.keys():
        rows[invocation_id] = invocation_id[:12]
        found.invocations.append(Invocation(invocation_id, 0, invocation_id[:12], None, "in a parent cycle"))
    return rows


def _depth_first(
    children: dict[str | None, list[str]], parent: str | None, depth: int, seen: set[str]
) -> Iterator[tuple[str, int]]:
    stack = [(child, depth) for child in reversed(children.get(parent, []))]
    while stack:
        invocation_id, level = stack.pop()
        if invocation_id in seen:
            continue
        seen.add(invocation_id)
        yield invocation_id, level
        stack.extend((child, level + 1) for child in reversed(children.get(invocation_id, [])))


def _place(found: Drilldown, row: str, what: str, item: dict[str, Any], label: str) -> None:
    start, end = finite(item.get("started_at")), finite(item.get("completed_at"))
    if start is None or end is None:
        found.untimed.append(f"{what} {label} in {row}")
        return
    found.spans.append(Span(row, what, start, max(end, start), label))


def _invocation_spans(found: Drilldown) -> None:
    """Each invocation spans its own events; one without timed events has no bar."""
    for invocation in found.invocations:
        times = [span.start for span in found.spans if span.row == invocation.label]
        times += [span.end for span in found.spans if span.row == invocation.label]
        times += [moment.at for moment in found.moments if moment.row == invocation.label]
        if times:
            status = invocation.status or "status unknown"
            label = f"invocation {invocation.invocation_id} ({status})"
            found.spans.append(Span(invocation.label, "invocation", min(times), max(times), label))


def _entries(conversation: Any) -> Iterator[Entry]:
    for item in conversation if isinstance(conversation, list) else []:
        if not isinstance(item, dict):
            yield _entry("item", item)
            continue
        kind = text(item.get("type")) or "message"
        if kind == "message":
            yield _entry(text(item.get("role")) or "message", _content(item.get("content")))
        elif kind == "function_call":
            yield _entry(f"tool call {text(item.get('name')) or ''}".strip(), item.get("arguments"))
        elif kind == "function_call_output":
            yield _entry("tool output", item.get("output"))
        elif kind == "reasoning":
            yield _entry("reasoning", _content(item.get("summary")) or _content(item.get("content")))
        else:
            yield _entry(kind, item)


def _content(content: Any) -> Any:
    """Message content as text: a string as it is, the text of each part of a list joined."""
    if isinstance(content, list):
        parts = [text(part.get("text")) if isinstance(part, dict) else None for part in content]
        if all(part is not None for part in parts):
            return "\n".join(part for part in parts if part is not None)
    return content


def _entry(title: str, body: Any) -> Entry:
    shown = _shown(body) or ""
    if len(shown) > TEXT_LIMIT:
        return Entry(title, shown[:TEXT_LIMIT], len(shown) - TEXT_LIMIT)
    return Entry(title, shown)


def _shown(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    value = plain(value)
    try:
        return dumps(value).decode()
    except TypeError:  # not JSON text (a lone surrogate, a key that is not a string): as Python writes it
        return python_repr(value)
