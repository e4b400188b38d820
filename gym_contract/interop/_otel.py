"""Rollouts as OpenTelemetry traces under the GenAI semantic conventions, in the OTLP/JSON encoding.

One trace per rollout: a rollout span; under it one `invoke_agent` span per invocation, nested as the
invocation tree is; under each, its `chat` spans (the captured model calls it references) and its
`execute_tool` spans. Gaps are span events, and so are the records no span stands for (compactions,
sandboxes, a record told twice), each kept whole as its JSON text. Trace and span ids are hashes of
the rollout id and the ids of what each span stands for, so the same rollouts always give the same
bytes; a rollout id that comes again is hashed with its count (`7-0 #2`), so that every record is a
trace of its own.

OTLP/JSON differs from protobuf's JSON mapping in two ways that this writer follows: ids are hex
strings, and 64-bit integers (times in nanoseconds, token counts) are decimal strings.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from gym_contract._deep_values import exact_repr, python_str
from gym_contract._json_writing import dumps
from gym_contract._parent_links import caught_in_cycles
from gym_contract._values import finite, text
from gym_contract.interop._view import Evidence, ModelCall, evidence_of

__all__ = ["to_otel"]

_KIND_INTERNAL = 1
_KIND_CLIENT = 3
_STATUS_ERROR = 2
_FAILED_TOOL = ("failed", "timeout", "cancelled")
# The provider whose API a captured call spoke, by the capture's dialect.
_PROVIDER_OF_DIALECT = {"responses": "openai", "chat": "openai", "messages": "anthropic"}
_SCOPE = {"name": "gym_contract.interop"}


_INT64 = range(-(2**63), 2**63)


def _scalar(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int) and value in _INT64:
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value if isinstance(value, str) else exact_repr(value)}


def _value(value: Any) -> dict[str, Any]:
    """An attribute's OTLP `AnyValue`. An attribute holds a primitive or an array of primitives (the
    OpenTelemetry attribute rules), so anything else — an object, an array holding arrays or objects,
    an integer beyond 64 bits — is its text, written without recursion whatever its depth."""
    if isinstance(value, list) and not any(isinstance(item, (dict, list)) for item in value):
        return {"arrayValue": {"values": [_scalar(item) for item in value]}}
    return _scalar(value)


def _attributes(pairs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in pairs.items() if value is not None]


def _nanos(value: float | None, digits: int = 9) -> int | None:
    """Seconds (or, with ``digits`` 6, milliseconds) as whole nanoseconds; None when not a finite time."""
    if value is None:
        return None
    try:  # the decimal digits the value is written with, not the float's binary approximation
        return max(0, int(Decimal(repr(value)).scaleb(digits).to_integral_value()))
    except (InvalidOperation, OverflowError, ValueError):  # not finite: no time at all
        return None


def _end(start: int | None, end: int | None, duration_ms: float | None) -> int | None:
    length = _nanos(duration_ms, 6)
    if end is None and start is not None and length is not None:
        return start + length
    return end


class _Trace:
    def __init__(self, evidence: Evidence, key: str) -> None:
        self.evidence = evidence
        self.trace_id = hashlib.sha256(f"gym-contract trace {key}".encode()).hexdigest()[:32]
        self.key = key
        self.used: set[str] = set()
        self.spans: list[dict[str, Any]] = []

    def span_id(self, what: str) -> str:
        seed, number = what, 1
        while (span_id := hashlib.sha256(f"{self.key} {seed}".encode()).hexdigest()[:16]) in self.used:
            number += 1  # the same record twice: its second span gets an id of its own
            seed = f"{what} #{number}"
        self.used.add(span_id)
        return span_id

    def span(
        self,
        what: str,
        name: str,
        parent: str | None,
        start: int | None,
        end: int | None,
        attributes: dict[str, Any],
        *,
        kind: int = _KIND_INTERNAL,
        error: str | None = None,
    ) -> dict[str, Any]:
        span: dict[str, Any] = {"traceId": self.trace_id, "spanId": self.span_id(what)}
        if parent is not None:
            span["parentSpanId"] = parent
        known = start is not None and end is not None and end >= start
        attributes = {**attributes, "gym_contract.timing": "recorded" if known else "unknown"}
        span |= {
            "name": name,
            "kind": kind,
            "startTimeUnixNano": str(start if known else 0),
            "endTimeUnixNano": str(end if known else 0),
            "attributes": _attributes(attributes),
            "events": [],
        }
        if error is not None:
            span["status"] = {"code": _STATUS_ERROR, "message": error}
        self.spans.append(span)
        return span


def _call_span(trace: _Trace, call: ModelCall, parent: str, ordinal: int) -> dict[str, Any]:
    provider = _PROVIDER_OF_DIALECT.get(call.dialect or "")
    tokens = call.tokens
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,
        "gen_ai.request.model": call.model,
        "gen_ai.response.model": call.model,
        "gen_ai.response.id": call.response_id,
        "gen_ai.response.finish_reasons": [call.finish_reason] if call.finish_reason else None,
        "gen_ai.usage.input_tokens": tokens["prompt_tokens"],
        "gen_ai.usage.output_tokens": tokens["completion_tokens"],
        "gen_ai.usage.reasoning.output_tokens": tokens["reasoning_tokens"],
        "gen_ai.usage.cache_read.input_tokens": tokens["cached_tokens"],
        "gym_contract.model_call_id": call.model_call_id,
        "gym_contract.model_server": (call.model_ref or {}).get("name"),
        "gym_contract.dialect": call.dialect,
        "gym_contract.response_status": call.response_status,
        "error.type": call.error_category,
    }
    start = _nanos(call.started_at)
    end = _end(start, _nanos(call.completed_at), call.duration_ms)
    what = f"model_call {call.model_call_id or call.response_id or ordinal}"
    name = f"chat {call.model}" if call.model else "chat"
    return trace.span(what, name, parent, start, end, attributes, kind=_KIND_CLIENT, error=call.error_category)


def _tool_span(trace: _Trace, tool: dict[str, Any], parent: str) -> dict[str, Any]:
    status = text(tool.get("status")) or "unknown"
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": text(tool.get("tool_name")),
        "gen_ai.tool.call.id": tool["tool_call_id"],
        "gym_contract.invocation_id": text(tool.get("invocation_id")),
        "gym_contract.status": status,
        "gym_contract.duration_ms": finite(tool.get("duration_ms")),
        "gym_contract.timing_source": text(tool.get("timing_source")),
        "gym_contract.sandbox_id": text(tool.get("sandbox_id")),
        "error.type": text(tool.get("error_type")),
    }
    start = _nanos(finite(tool.get("started_at")))
    end = _end(start, _nanos(finite(tool.get("completed_at"))), finite(tool.get("duration_ms")))
    what = f"tool {python_str(tool.get('invocation_id'))} {tool['tool_call_id']}"
    name = f"execute_tool {tool['tool_name']}" if isinstance(tool.get("tool_name"), str) else "execute_tool"
    return trace.span(what, name, parent, start, end, attributes, error=status if status in _FAILED_TOOL else None)


def _enclose(span: dict[str, Any], children: list[dict[str, Any]], duration_ms: float | None = None) -> None:
    """Give a span the time its children span, when it has no time of its own."""
    times = [
        (int(c["startTimeUnixNano"]), int(c["endTimeUnixNano"])) for c in children if c["startTimeUnixNano"] != "0"
    ]
    if not times:
        return
    start = min(begin for begin, _ in times)
    end = max(max(finish for _, finish in times), _end(start, None, duration_ms) or 0)
    span["startTimeUnixNano"], span["endTimeUnixNano"] = str(start), str(end)
    for attribute in span["attributes"]:
        if attribute["key"] == "gym_contract.timing":
            attribute["value"] = {"stringValue": "derived"}


def _rollout_trace(evidence: Evidence, key: str) -> list[dict[str, Any]]:
    trace = _Trace(evidence, key)
    agent = evidence.agent_name or evidence.source
    root = trace.span(
        "rollout",
        f"rollout {evidence.rollout_id}" if evidence.rollout_id else "rollout",
        None,
        None,
        None,
        {"gym_contract.rollout_id": evidence.rollout_id, "gym_contract.task_id": evidence.task_id,
         "gym_contract.source": evidence.source, "gen_ai.conversation.id": evidence.rollout_id},
    )  # fmt: skip
    spans: dict[Any, dict[str, Any]] = {}
    children: dict[str, list[dict[str, Any]]] = {}
    for invocation in evidence.invocations:
        invocation_id = invocation["invocation_id"]
        status = text(invocation.get("status")) or "unknown"
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.id": invocation_id,
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": evidence.rollout_id,
            "gym_contract.status": status,
            "gym_contract.parent_invocation_id": text(invocation.get("parent_invocation_id")),
            "gym_contract.spawned_by_tool_call_id": text(invocation.get("spawned_by_tool_call_id")),
            "gym_contract.duration_ms": finite(invocation.get("duration_ms")),
            "gym_contract.model_calls": _json_texts(invocation.get("model_calls")),
            "error.type": text(invocation.get("error_type")),
        }
        name = f"invoke_agent {agent}" if agent else "invoke_agent"
        error = status if status == "failed" else None
        spans[invocation_id] = trace.span(
            f"invocation {invocation_id}", name, None, None, None, attributes, error=error
        )
    parent_of = {i["invocation_id"]: text(i.get("parent_invocation_id")) for i in evidence.invocations}
    in_cycles = caught_in_cycles(parent_of)
    for invocation in evidence.invocations:  # parents once every span exists; a cycle hangs off the rollout
        linked = parent_of[invocation["invocation_id"]] if invocation["invocation_id"] not in in_cycles else None
        holder = spans.get(linked, root) if linked is not None else root
        spans[invocation["invocation_id"]]["parentSpanId"] = holder["spanId"]
        children.setdefault(holder["spanId"], []).append(spans[invocation["invocation_id"]])
    owners = evidence.owners()
    for ordinal, call in enumerate(evidence.calls):
        holder = spans.get(owners.get(ordinal, ""), root)
        children.setdefault(holder["spanId"], []).append(_call_span(trace, call, holder["spanId"], ordinal))
    for tool in evidence.tool_calls:
        holder = spans.get(text(tool.get("invocation_id")), root)
        children.setdefault(holder["spanId"], []).append(_tool_span(trace, tool, holder["spanId"]))
    durations = {spans[i["invocation_id"]]["spanId"]: finite(i.get("duration_ms")) for i in evidence.invocations}

    # Innermost first, so that a parent encloses the times derived for its children; no recursion, as
    # invocation trees may be deep.
    order, stack = [], [root]
    while stack:
        span = stack.pop()
        order.append(span)
        stack.extend(children.get(span["spanId"], []))
    for span in reversed(order):
        if span["startTimeUnixNano"] == "0":
            _enclose(span, children.get(span["spanId"], []), durations.get(span["spanId"]))
    for gap in evidence.gaps:
        holder = spans.get(text(gap.get("invocation_id")), root)
        event = {
            "gap.code": gap.get("code"),
            "gap.invocation_id": gap.get("invocation_id"),
            "gap.detail": gap.get("detail"),
        }
        holder["events"].append(
            {"timeUnixNano": holder["startTimeUnixNano"], "name": "gym_contract.gap", "attributes": _attributes(event)}
        )
    for record in evidence.records:  # compactions, sandboxes, a record told twice: kept whole, as JSON text
        holder = spans.get(text(record.get("invocation_id")), root)
        whole = _attributes({"gym_contract.record": _json_text(record)})
        holder["events"].append(
            {"timeUnixNano": holder["startTimeUnixNano"], "name": "gym_contract.record", "attributes": whole}
        )
    return trace.spans


def _json_text(value: Any) -> str:
    """A value as its JSON text, numbers past 64 bits whole. One that no JSON text holds (a lone surrogate, a key
    that is no string) is written in ASCII all the same, escapes and all, for a reader to refuse, not misread."""
    try:
        return dumps(value).decode()
    except TypeError:
        try:
            return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=exact_repr)
        except (TypeError, ValueError, RecursionError):
            return exact_repr(value).encode("ascii", "backslashreplace").decode()


def _json_texts(values: Any) -> list[str] | None:
    """Each of a list's values as its JSON text (an attribute holds no objects); None for an empty list or none."""
    return [_json_text(value) for value in values] if isinstance(values, list) and values else None


def to_otel(values: Iterable[Any]) -> dict[str, Any]:
    """An OTLP/JSON `ExportTraceServiceRequest` (a JSON object) with one trace per rollout record.

    Each value is a rollout record, an `ng_trajectory` or an observation bundle (or their models);
    a value without a rollout id is keyed by its position. A rollout id met again is a trace of its
    own, keyed `<rollout id> #2`, `#3`, …, so that no two traces share an id (`TraceKeys`). Raises
    ValueError for a value that is none of these.
    """
    keys = TraceKeys()
    return {"resourceSpans": [resource_spans(value, position, keys) for position, value in enumerate(values)]}


class TraceKeys:
    """The key each trace's ids are hashed from: the rollout id, made unique when a rollout id comes again."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.seen: dict[str, int] = {}
        """Per rollout id (or position key), how many values have had it so far."""

    def unique(self, key: str) -> str:
        """``key`` the first time; then `key #2`, `key #3`, …: a rollout id has no space or `#` in it."""
        self.seen[key] = self.seen.get(key, 0) + 1
        made, number = key, self.seen[key]
        while made in self.used:
            made = f"{key} #{number}"
            number += 1
        self.used.add(made)
        return made

    def repeated(self) -> dict[str, int]:
        """The keys more than one value had, with how many had each."""
        return {key: times for key, times in self.seen.items() if times > 1}


def resource_spans(value: Any, position: int, keys: TraceKeys) -> dict[str, Any]:
    """The `resourceSpans` entry of one value, the ``position``-th: its trace, keyed by ``keys``."""
    evidence = evidence_of(value)
    key = keys.unique(evidence.rollout_id or f"#{position}")
    resource = {
        "gym_contract.rollout_id": evidence.rollout_id,
        "service.name": evidence.agent_name or evidence.source or "unknown",
    }
    return {
        "resource": {"attributes": _attributes(resource)},
        "scopeSpans": [{"scope": _SCOPE, "spans": _rollout_trace(evidence, key)}],
    }
