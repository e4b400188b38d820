"""Semantic rules of the contract: small generators that yield diagnostics about one record."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from gym_contract._json_pointer import pointer
from gym_contract._parent_links import cycles as parent_cycles
from gym_contract._values import count, indexed_objects, number, preview, text
from gym_contract.diagnostics import Diagnostic

ROLLOUT_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
EARLIEST_PLAUSIBLE = 946_684_800.0  # 2000-01-01T00:00:00Z
FUTURE_TOLERANCE_S = 86_400.0

Rule = Callable[[dict[str, Any], "Context"], Iterator[Diagnostic]]


Path = tuple[object, ...]
"""Where a value sits in its record; turned into a JSON Pointer only when a diagnostic is emitted."""


class Context:
    """What rules need besides the record: the moment of validation and the record's container."""

    def __init__(self, now: float, container: str) -> None:
        self.now = now
        self.latest_plausible = now + FUTURE_TOLERANCE_S
        self.container = container  # "bundle" or "trajectory": some rules are stricter in a trajectory


def repeated(seen: dict[Any, Any], key: Any, where: Any) -> Any | None:
    """Where ``key`` was first seen, or None when it is new (and is then recorded as seen at ``where``)."""
    prior = seen.get(key)
    if prior is None:
        seen[key] = where
    return prior


# ------------------------------------------------------------------------------------------ pieces


def invocation_rules(invocations: Sequence[tuple[Path, dict[str, Any]]], ctx: Context) -> Iterator[Diagnostic]:
    """Unique ids, acyclic parent links, present parents, spawning tool calls that exist."""
    by_id: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path, invocation in invocations:
        invocation_id = text(invocation.get("invocation_id"))
        if invocation_id is None:
            continue
        if (prior := repeated(by_id, invocation_id, (path, invocation))) is not None:
            yield Diagnostic.of(
                "invocation_id_duplicate",
                f"invocation_id {invocation_id!r} is already used at {pointer(*prior[0])}",
                pointer(*path, "invocation_id"),
            )
    cycles = parent_cycles({key: text(found[1].get("parent_invocation_id")) for key, found in by_id.items()})
    reported_cycles: set[str] = set()  # each cycle by its first member
    calls_of_parent: dict[str, set[str]] = {}  # a parent's conversation is read once, whatever its children
    for invocation_id, (path, invocation) in by_id.items():
        parent = text(invocation.get("parent_invocation_id"))
        if parent is None:
            continue
        if parent not in by_id:
            yield Diagnostic.of(
                "parent_invocation_missing",
                f"parent {parent!r} is not in this {ctx.container}; the tree is partial",
                pointer(*path, "parent_invocation_id"),
            )
        else:
            on_cycle = cycles.get(invocation_id)
            if on_cycle is not None and on_cycle[0][0] not in reported_cycles:
                members, at = on_cycle
                reported_cycles.add(members[0])
                cycle = members[at:] + members[:at]  # told from the first of its members in record order
                yield Diagnostic.of(
                    "invocation_parent_cycle",
                    "parent links form a cycle: " + " → ".join([*cycle, cycle[0]]),
                    pointer(*path, "parent_invocation_id"),
                )
            spawned_by = text(invocation.get("spawned_by_tool_call_id"))
            if spawned_by is None:
                continue
            if parent not in calls_of_parent:
                calls_of_parent[parent] = _function_call_ids(by_id[parent][1])
            if spawned_by not in calls_of_parent[parent]:
                yield Diagnostic.of(
                    "spawned_by_tool_call_missing",
                    f"no function_call with call_id {spawned_by!r} in the conversation of parent {parent!r}",
                    pointer(*path, "spawned_by_tool_call_id"),
                )


def _function_call_ids(invocation: dict[str, Any]) -> set[str]:
    return {
        item["call_id"]
        for _, item in indexed_objects(invocation.get("conversation"))
        if item.get("type") == "function_call" and text(item.get("call_id")) is not None
    }


def tool_rules(tools: Sequence[tuple[Path, dict[str, Any]]], ctx: Context) -> Iterator[Diagnostic]:
    """Timing order and duration, and one record per (invocation_id, tool_call_id)."""
    seen: dict[tuple[str, str], Path] = {}
    for path, tool in tools:
        invocation_id, tool_call_id = tool.get("invocation_id"), tool.get("tool_call_id")
        if isinstance(invocation_id, str) and isinstance(tool_call_id, str):
            key = (invocation_id, tool_call_id)
            if (prior := repeated(seen, key, path)) is not None:
                yield Diagnostic.of(
                    "tool_call_duplicate",
                    f"tool call {key[1]!r} of invocation {key[0]!r} is already recorded at {pointer(*prior)}",
                    pointer(*path, "tool_call_id"),
                )
        started, completed = tool.get("started_at"), tool.get("completed_at")
        if not (type(started) is float and type(completed) is float and completed >= started):
            started, completed = number(started), number(completed)
            if started is not None and completed is not None and completed < started:
                yield Diagnostic.of(
                    "tool_timing_reversed",
                    f"completed_at {completed} is {started - completed:.3f} s before started_at {started}",
                    pointer(*path, "completed_at"),
                )
        yield from interval_rules(path, tool, ctx)


def interval_rules(path: Path, item: dict[str, Any], ctx: Context) -> Sequence[Diagnostic]:
    """Plausible timestamps, and a duration that agrees with them.

    Not a generator: it runs for every timed item, and almost always finds nothing, so the common
    case (every value a float) is told without a call to the typed readers.
    """
    started, completed = item.get("started_at"), item.get("completed_at")
    if type(started) is not float:
        started = number(started)
    if type(completed) is not float:
        completed = number(completed)
    found: list[Diagnostic] = []
    latest = ctx.latest_plausible
    if started is not None and not EARLIEST_PLAUSIBLE <= started <= latest:
        found.extend(timestamp_rule((*path, "started_at"), started, ctx))
    if completed is not None and not EARLIEST_PLAUSIBLE <= completed <= latest:
        found.extend(timestamp_rule((*path, "completed_at"), completed, ctx))
    if started is None or completed is None:
        return found
    duration = item.get("duration_ms")
    if type(duration) is not float:
        duration = number(duration)
        if duration is None:
            return found
    measured = (completed - started) * 1000.0
    # Only finite values are compared; the others are the timestamp rule's business.
    finite = math.isfinite(started) and math.isfinite(completed) and math.isfinite(duration)
    if finite and abs(duration - measured) > 1.0 + 0.01 * abs(measured):
        found.append(
            Diagnostic.of(
                "duration_mismatch",
                f"duration_ms {duration:g} but completed_at − started_at is {measured:.3f} ms",
                pointer(*path, "duration_ms"),
            )
        )
    return found


def plausible(stamp: float | None, ctx: Context) -> bool:
    """The common case of `timestamp_rule`, decided without building a generator."""
    return stamp is None or EARLIEST_PLAUSIBLE <= stamp <= ctx.latest_plausible


def timestamp_rule(path: Path, value: Any, ctx: Context) -> Iterator[Diagnostic]:
    stamp = number(value)
    if stamp is None or plausible(stamp, ctx):
        return
    where = pointer(*path)
    if not math.isfinite(stamp):
        yield Diagnostic.of("timestamp_implausible", f"timestamp {preview(value)} is not finite", where)
    elif stamp < EARLIEST_PLAUSIBLE:
        message = f"{stamp:g} is before 2000-01-01 as UTC Unix seconds (milliseconds?)"
        yield Diagnostic.of("timestamp_implausible", message, where)
    else:
        yield Diagnostic.of("timestamp_implausible", f"{stamp:g} is more than a day in the future", where)


def reference_rule(path: Path, invocation_id: Any, known: set[str], what: str, ctx: Context) -> list[Diagnostic]:
    """A record of ``path`` that names an invocation should find it; partial trees are legal evidence."""
    named = text(invocation_id)
    if named is None or named in known:
        return []
    return [
        Diagnostic.of(
            "invocation_reference_missing",
            f"{what} names invocation {named!r}, which is not in this {ctx.container}; the tree is partial",
            pointer(*path, "invocation_id"),
        )
    ]


def gap_rules(gaps: Any, base: Path) -> Iterator[Diagnostic]:
    from gym_contract import schemas  # its JSON files are read by the first record with a gap

    known = schemas.gap_codes()
    for index, gap in indexed_objects(gaps):
        code = text(gap.get("code"))
        if code is not None and code not in known:
            message = f"gap code {code!r} is not in the registry"
            yield Diagnostic.of("gap_code_unknown", message, pointer(*base, index, "code"))


def token_rules(path: Path, prompt: Any, completion: Any, total: Any, cached: Any) -> Sequence[Diagnostic]:
    """Token arithmetic of one call: the total adds up, the cache is part of the prompt."""
    # Counts are almost always plain non-negative ints: those skip the typed reader.
    prompt = prompt if type(prompt) is int and prompt >= 0 else count(prompt)
    completion = completion if type(completion) is int and completion >= 0 else count(completion)
    total = total if type(total) is int and total >= 0 else count(total)
    cached = cached if type(cached) is int and cached >= 0 else count(cached)
    if prompt is None or ((total is None or completion is None) and cached is None):
        return ()
    found: list[Diagnostic] = []
    if total is not None and completion is not None and total != prompt + completion:
        found.append(
            Diagnostic.of(
                "token_total_mismatch",
                f"total {preview(total)} ≠ prompt {preview(prompt)} + completion {preview(completion)}"
                f" = {preview(prompt + completion)}",
                pointer(*path),
            )
        )
    if cached is not None and cached > prompt:
        message = f"cached {preview(cached)} > prompt {preview(prompt)}"
        found.append(Diagnostic.of("cached_tokens_exceed_prompt", message, pointer(*path)))
    return found


def rollout_id_rule(path: str, value: Any) -> Iterator[Diagnostic]:
    if text(value) is not None and not ROLLOUT_ID_PATTERN.fullmatch(value):
        yield Diagnostic.of(
            "rollout_id_invalid", f"rollout id {value!r} does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$", path
        )
