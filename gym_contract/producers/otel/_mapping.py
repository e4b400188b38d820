"""GenAI spans mapped to bundles: `invoke_agent` to invocations, `chat` to model-call refs, `execute_tool` to tools.

Spans are grouped into one bundle per rollout (the `gym_contract.rollout_id` attribute of the
resource or of a span) or, without one, per trace. A span that `gym-contract export otel` wrote
(it has `gym_contract.timing`) carries the contract's facts as `gym_contract.*` attributes, which
are read exactly; any other span is read by the GenAI semantic conventions alone, and what those
do not say is named by a gap.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import Any

from gym_contract._parent_links import caught_in_cycles
from gym_contract._values import count, json_type, text
from gym_contract.producers._kit import Observed, RunSummary
from gym_contract.producers.otel._checked import as_number, held, json_values, or_unknown, refusal, stated_records
from gym_contract.producers.otel._otlp import Span, Unreadable

__all__ = ["MODEL_CALL_OPERATIONS", "ObservedSpans", "map_spans"]

MODEL_CALL_OPERATIONS = ("chat", "text_completion", "generate_content")
"""`gen_ai.operation.name` values of a span that is one model call."""
_STATUS_ERROR = 2
_FAILED = ("failed", "timeout")
_SERVER_TYPE = "responses_api_models"
_TOKENS = {
    "input_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
    "cached_tokens": "gen_ai.usage.cache_read.input_tokens",
    "reasoning_tokens": "gen_ai.usage.reasoning.output_tokens",
}
_LATEST_NANOS = int(sys.float_info.max) * 10**6
"""The latest span time read: its seconds, and the milliseconds between it and any start, are finite floats."""


@dataclass
class ObservedSpans:
    """One bundle's worth of spans mapped: the bundle (a JSON object), its run summary, and what keyed it."""

    bundle: dict[str, Any]
    summary: RunSummary
    rollout_id: str | None
    """The `gym_contract.rollout_id` the spans carry; None when the bundle is one trace's."""
    trace_ids: list[str]

    def observed(self) -> Observed:
        """The `Observed` every producer returns (no outcome: spans do not classify how a run ended).

        Raises ValueError (pydantic's ValidationError) when the bundle breaks the contract, which
        only spans that state a broken invocation tree can make it do: a value the contract cannot
        hold is never copied from a span (`otel_span_unreadable` names it instead).
        """
        from gym_contract.models import AgentObservationBundle

        return Observed(AgentObservationBundle.model_validate(self.bundle), None, self.summary)

    def document(self) -> dict[str, Any]:
        """The `gym-contract observe otel` document of the bundle, whether or not it keeps the contract."""
        return {"ng_agent_observations": self.bundle, "ng_agent_outcome": None, "run_summary": self.summary.as_dict()}


def _operation(span: Span) -> str | None:
    return text(span.attributes.get("gen_ai.operation.name"))


def _ours(span: Span) -> bool:
    """Whether `gym-contract export otel` wrote the span: it states the contract's facts exactly."""
    return "gym_contract.timing" in span.attributes


def _seconds(nanos: int) -> float:
    return float(Decimal(nanos).scaleb(-9))


def _times(span: Span) -> tuple[int, int] | None:
    """The span's start and end in nanoseconds, when it states both in order (and, if ours, as recorded)."""
    if _ours(span) and span.attributes.get("gym_contract.timing") != "recorded":
        return None
    if span.start is None or span.end is None or not span.start <= span.end <= _LATEST_NANOS:
        return None
    return span.start, span.end


def _duration_ms(times: tuple[int, int] | None) -> float | None:
    return None if times is None else float(Decimal(times[1] - times[0]).scaleb(-6))


@dataclass
class _Group:
    """The spans of one bundle, with the gaps and ids found while mapping them."""

    spans: list[Span]
    model_ref: str | None
    gaps: list[dict[str, Any]] = field(default_factory=list)
    by_id: dict[tuple[str, str], Span] = field(default_factory=dict)
    invocation_of: dict[tuple[str, str], str] = field(default_factory=dict)
    """(trace id, span id) of each invoke_agent span -> its invocation id."""
    made: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Invocations made for spans that no invoke_agent span encloses, by trace id."""
    used: set[str] = field(default_factory=set)
    """The invocation ids given so far."""

    def unique(self, wanted: str) -> str:
        """``wanted`` as an invocation id no other invocation of the bundle has."""
        made, number = wanted, 1
        while made in self.used:
            number += 1
            made = f"{wanted}#{number}"
        self.used.add(made)
        return made

    def gap(self, code: str, invocation_id: str | None, detail: str | None) -> None:
        self.gaps.append({"code": code, "invocation_id": invocation_id, "detail": detail})

    def unread(self, span: Span, what: str, why: str) -> None:
        """A gap for what a span states that cannot be read: ``what`` (an attribute, an event) and ``why``."""
        self.gap("otel_span_unreadable", None, f"span {span.span_id} of trace {span.trace_id}: {what}: {why}")

    def held(self, span: Span, record: dict[str, Any], sources: dict[str, str]) -> dict[str, Any] | None:
        """``record`` as the contract holds it: each value it refuses is unknown instead, and named by a gap.

        ``sources`` names the attribute each field was read from; None when the contract refuses the record
        for something no attribute gave.
        """
        kept, refused = held(record, sources)
        for each in refused:
            self.unread(span, each.attribute, each.why)
        return kept

    def text(self, span: Span, attribute: str) -> str | None:
        """A string attribute; any other value is unread, and named by a gap (an id, say, is never a number)."""
        value = span.attributes.get(attribute)
        if value is not None and not isinstance(value, str):
            self.unread(span, attribute, f"{json_type(value, article=True)}, not a string")
        return text(value)

    def ancestors(self, span: Span) -> Iterable[Span]:
        seen = {span.span_id}
        parent = span.parent_span_id
        while parent is not None and parent not in seen and (found := self.by_id.get((span.trace_id, parent))):
            seen.add(parent)  # a parent cycle in the input ends the walk
            yield found
            parent = found.parent_span_id

    def owner(self, span: Span) -> tuple[str | None, Span | None]:
        """The invocation enclosing ``span`` (None when none does) and the execute_tool span between them, if any."""
        tool = None
        for ancestor in self.ancestors(span):
            operation = _operation(ancestor)
            if operation == "invoke_agent":
                return self.invocation_of[(ancestor.trace_id, ancestor.span_id)], tool
            if operation == "execute_tool" and tool is None:
                tool = ancestor
        return None, tool

    def holder(self, span: Span) -> str:
        """The invocation holding a model call or tool span; one made for its trace when no invoke_agent encloses it."""
        invocation_id, _ = self.owner(span)
        if invocation_id is not None:
            return invocation_id
        if span.trace_id not in self.made:
            made_id = self.unique(f"trace-{span.trace_id}")
            made = {"kind": "agent_invocation", "invocation_id": made_id, "status": "unknown"}
            self.made[span.trace_id] = made
            detail = "model call and tool spans outside any invoke_agent span"
            self.gap("otel_agent_span_missing", made["invocation_id"], detail)
        found: str = self.made[span.trace_id]["invocation_id"]
        return found


def _status(span: Span) -> str:
    """completed, or failed when the span's status is an error or it names an `error.type` (the GenAI rule)."""
    failed = span.status_code == _STATUS_ERROR or text(span.attributes.get("error.type")) is not None
    return "failed" if failed else "completed"


def _invocation_ids(group: _Group, agents: list[Span]) -> None:
    """Each invoke_agent span's invocation id: its `gen_ai.agent.id` when no other span of the bundle has it.

    An agent invoked twice is told apart by its span (`<agent id>@<span id>`), a span with no agent
    id is `span-<span id>`; the trace id is put before a span id that another trace of the bundle
    uses too, and `#2`, `#3`, … after an id that is taken all the same.
    """
    named = [group.text(span, "gen_ai.agent.id") for span in agents]
    agent_ids = Counter(named)
    span_ids = Counter(span.span_id for span in agents)
    for span, agent_id in zip(agents, named, strict=True):
        where = span.span_id if span_ids[span.span_id] == 1 else f"{span.trace_id}-{span.span_id}"
        if agent_id is not None and agent_ids[agent_id] == 1:
            wanted = agent_id
        else:
            wanted = f"{agent_id}@{where}" if agent_id is not None else f"span-{where}"
        group.invocation_of[(span.trace_id, span.span_id)] = group.unique(wanted)


def _invocation(group: _Group, span: Span) -> dict[str, Any]:
    attributes = span.attributes
    invocation_id = group.invocation_of[(span.trace_id, span.span_id)]
    parent, spawning = group.owner(span)
    record: dict[str, Any] = {"kind": "agent_invocation", "invocation_id": invocation_id}
    ours = _ours(span)
    if ours:
        stated_parent = attributes.get("gym_contract.parent_invocation_id")
        record |= {
            "parent_invocation_id": None if stated_parent == "" else stated_parent,
            "spawned_by_tool_call_id": attributes.get("gym_contract.spawned_by_tool_call_id"),
            "status": or_unknown(attributes.get("gym_contract.status"), "unknown"),
            "duration_ms": as_number(attributes.get("gym_contract.duration_ms")),
        }
    else:
        spawned_by = text(spawning.attributes.get("gen_ai.tool.call.id")) if spawning is not None else None
        record |= {"parent_invocation_id": parent, "spawned_by_tool_call_id": spawned_by, "status": _status(span)}
        record["duration_ms"] = _duration_ms(_times(span))
        if parent is not None and spawned_by is None:
            group.gap("subagent_spawn_tool_unavailable", invocation_id, None)
        group.gap("agent_transcript_unavailable", invocation_id, None)
    record["error_type"] = attributes.get("error.type")
    unread = partial(group.unread, span)
    record["model_calls"] = json_values(attributes, "gym_contract.model_calls", unread) if ours else []
    kept = group.held(span, record, _OUR_INVOCATION_SOURCES if ours else {"error_type": "error.type"})
    # An invocation is made for every invoke_agent span, whatever it holds: other spans name it.
    kept = kept or {**record, **dict.fromkeys(_OUR_INVOCATION_SOURCES), "status": "unknown", "model_calls": []}
    kept["parent_invocation_id"] = kept["parent_invocation_id"] or parent  # a parent the span states, else its tree's
    return kept


_OUR_INVOCATION_SOURCES = {
    "parent_invocation_id": "gym_contract.parent_invocation_id",
    "spawned_by_tool_call_id": "gym_contract.spawned_by_tool_call_id",
    "status": "gym_contract.status",
    "duration_ms": "gym_contract.duration_ms",
    "error_type": "error.type",
    "model_calls": "gym_contract.model_calls",
}
"""The field of an invocation each attribute of an invoke_agent span this package wrote gives."""


def _tool(group: _Group, span: Span) -> dict[str, Any] | None:
    attributes = span.attributes
    ours = _ours(span)
    invocation_id = (group.text(span, "gym_contract.invocation_id") if ours else None) or group.holder(span)
    tool_call_id = text(attributes.get("gen_ai.tool.call.id"))
    if tool_call_id is None:
        group.gap("tool_call_identity_unavailable", invocation_id, f"span {span.span_id}")
        return None
    record: dict[str, Any] = {
        "kind": "tool_call",
        "invocation_id": invocation_id,
        "tool_call_id": tool_call_id,
        "tool_name": attributes.get("gen_ai.tool.name"),
        "error_type": attributes.get("error.type"),
    }
    times = _times(span)
    if times is not None:
        record |= {"started_at": _seconds(times[0]), "completed_at": _seconds(times[1])}
    if ours:
        record |= {
            "status": or_unknown(attributes.get("gym_contract.status"), "unknown"),
            "timing_source": attributes.get("gym_contract.timing_source"),
            "sandbox_id": attributes.get("gym_contract.sandbox_id"),
            "duration_ms": as_number(attributes.get("gym_contract.duration_ms")),
        }
    else:
        record |= {"status": _status(span), "timing_source": "executor" if times else None}
        record["duration_ms"] = _duration_ms(times)
        if times is None:
            group.gap("tool_timing_unavailable", invocation_id, tool_call_id)
    kept = group.held(span, record, _OUR_TOOL_SOURCES if ours else _TOOL_SOURCES)
    return None if kept is None else {key: value for key, value in kept.items() if value is not None}


_TOOL_SOURCES = {"tool_name": "gen_ai.tool.name", "error_type": "error.type"}
"""The field of a tool call each attribute of an execute_tool span gives."""
_OUR_TOOL_SOURCES = {
    **_TOOL_SOURCES,
    "status": "gym_contract.status",
    "timing_source": "gym_contract.timing_source",
    "sandbox_id": "gym_contract.sandbox_id",
    "duration_ms": "gym_contract.duration_ms",
}
"""The same, of an execute_tool span this package wrote."""


def _model_call_ref(group: _Group, span: Span, invocation_id: str) -> dict[str, Any] | None:
    if (call_id := group.text(span, "gym_contract.model_call_id")) is not None:
        ref = {"model_call_id": call_id}
        found = refusal({"records": [{"kind": "agent_invocation", "invocation_id": "-", "model_calls": [ref]}]})
        if found is None:
            return ref
        group.unread(span, "gym_contract.model_call_id", found[1])  # an empty id names no call; the response id may
    response_id = group.text(span, "gen_ai.response.id")
    server = group.text(span, "gym_contract.model_server") or group.model_ref
    if response_id and server:
        return {"model_ref": {"type": _SERVER_TYPE, "name": server}, "response_id": response_id}
    if not _ours(span):
        if not response_id:
            group.gap("model_response_id_unavailable", invocation_id, None)
        else:
            group.gap("otel_model_server_unavailable", invocation_id, response_id)
    return None


def _stated_gap(group: _Group, span: Span, event: dict[str, Any]) -> None:
    """A gap a span states as a `gym_contract.gap` event, when the contract holds it (and, unless this package
    wrote the span, its code is not empty)."""
    gap = {key: event.get(f"gap.{key}") for key in ("code", "invocation_id", "detail")}
    found = refusal({"gaps": [gap]})
    if found is None and (_ours(span) or gap["code"] != ""):
        group.gaps.append(gap)
    else:
        group.unread(span, "a gym_contract.gap event", found[1] if found else "its gap.code is empty")


def _on_cycle(invocation_id: str, parent_of: dict[str, str | None]) -> bool:
    seen: set[str] = set()
    current = parent_of.get(invocation_id)
    while current is not None and current not in seen:
        if current == invocation_id:
            return True
        seen.add(current)
        current = parent_of.get(current)
    return False


def _cut_cycles(group: _Group, agents: list[Span], invocations: list[dict[str, Any]]) -> None:
    """Spans whose parent links loop (only hostile input has them) give invocations without a parent, and a gap.

    A span this package wrote keeps the parent it states: the loop was in the bundle exported, and the
    contract's check names it.
    """
    parent_of = {record["invocation_id"]: record["parent_invocation_id"] for record in invocations}
    looped = caught_in_cycles(parent_of)
    for span, record in zip(agents, invocations, strict=True):
        if record["invocation_id"] in looped and not _ours(span) and _on_cycle(record["invocation_id"], parent_of):
            record["parent_invocation_id"] = record["spawned_by_tool_call_id"] = None
            group.gap("cyclic_subagent_parent", record["invocation_id"], None)


def _total(values: list[Any]) -> int | None:
    counted = [number for value in values if (number := count(value)) is not None]
    return sum(counted) if counted else None


def _summary(
    spans: list[Span],
    calls: dict[str, list[Span]],
    mapped: list[dict[str, Any]],
    stated: list[Any],
    extra: dict[str, Any],
) -> RunSummary:
    """The run summary of the records mapped from spans; compactions only from spans this package wrote."""
    invocations = [r for r in mapped if r["kind"] == "agent_invocation"]
    tools = [r for r in mapped if r["kind"] == "tool_call"]
    children = {r["invocation_id"] for r in invocations if r.get("parent_invocation_id") is not None}
    held = [span for spans_held in calls.values() for span in spans_held]
    times = [found for span in spans if (found := _times(span)) is not None]
    compactions = sum(1 for r in stated if isinstance(r, dict) and r.get("kind") == "context_compaction")
    return RunSummary(
        tool_calls=len(tools),
        tool_errors=sum(1 for tool in tools if tool.get("status") in _FAILED),
        main_turns=sum(len(spans_held) for owner, spans_held in calls.items() if owner not in children),
        subagent_turns=sum(len(spans_held) for owner, spans_held in calls.items() if owner in children),
        subagent_calls=len(children),
        # Other instrumentations write no compaction: how many there were is unknown, not 0.
        compactions=compactions if any(_ours(span) for span in spans) else None,
        duration_s=_seconds(max(end for _, end in times) - min(start for start, _ in times)) if times else None,
        **{name: _total([span.attributes.get(key) for span in held]) for name, key in _TOKENS.items()},
        extra=extra,
    )


def _malformed_gaps(group: _Group) -> None:
    """A gap for each malformed field or attribute value of the spans (read as unset): each span's own, and each
    of their resources' once a bundle, as the spans of one resource share them."""
    told: set[tuple[str, str]] = set()
    for span in group.spans:
        for where, why in span.unread:
            group.unread(span, where, why)
        for where, why in span.resource_unread:
            if (where, why) not in told:
                told.add((where, why))
                group.unread(span, f"{where} of its resource", why)


def _map_group(group: _Group, source: str, extra: dict[str, Any]) -> tuple[dict[str, Any], RunSummary]:
    group.by_id = {(span.trace_id, span.span_id): span for span in group.spans}
    _malformed_gaps(group)
    agents = [span for span in group.spans if _operation(span) == "invoke_agent"]
    _invocation_ids(group, agents)
    invocations = [_invocation(group, span) for span in agents]
    _cut_cycles(group, agents, invocations)
    tools = [tool for span in group.spans if _operation(span) == "execute_tool" if (tool := _tool(group, span))]
    by_invocation = {record["invocation_id"]: record for record in invocations}
    by_invocation_span = {record["invocation_id"]: span for record, span in zip(invocations, agents, strict=True)}
    calls: dict[str, list[Span]] = {}
    for span in group.spans:
        if _operation(span) not in MODEL_CALL_OPERATIONS:
            continue
        owner, _ = group.owner(span)
        if owner is None and _ours(span):
            continue  # a captured call no invocation referenced: the export hangs it off the rollout
        holder = owner or group.holder(span)
        calls.setdefault(holder, []).append(span)
        if _ours(span) and "gym_contract.model_calls" in by_invocation_span[owner or ""].attributes:
            continue  # the invocation states its references exactly: the call is one of them
        ref = _model_call_ref(group, span, holder)
        record = by_invocation.get(holder) or group.made.get(span.trace_id)
        if ref is not None and record is not None:
            record.setdefault("model_calls", []).append(ref)
    stated: list[Any] = []
    for span in group.spans:
        for name, event in span.events:
            if name == "gym_contract.gap":
                _stated_gap(group, span, event)
            elif name == "gym_contract.record" and _ours(span):
                stated += stated_records(event, partial(group.unread, span))
    made = list(group.made.values())
    mapped = [*made, *({k: v for k, v in r.items() if v is not None} for r in invocations), *tools]
    bundle = {"source": source, "records": [*mapped, *stated], "gaps": group.gaps}
    return bundle, _summary(group.spans, calls, mapped, stated, extra)


def _first_of_each(spans: Iterable[Span]) -> tuple[list[Span], list[Span]]:
    """Each span once, the first given with its ids, and the later ones that differ from it.

    A span sent twice (an exporter's retry the Collector wrote twice) is the same fact told twice;
    two different spans under one pair of ids cannot both be read, and the later is named by a gap.
    """
    first: dict[tuple[str, str], Span] = {}
    conflicting = []
    for span in spans:
        known = first.setdefault((span.trace_id, span.span_id), span)
        if known is not span and known != span:
            conflicting.append(span)
    return list(first.values()), conflicting


def _key(span: Span, rollout_of_trace: dict[str, str]) -> str:
    return rollout_of_trace.get(span.trace_id, f"trace {span.trace_id}")


def map_spans(
    spans: Iterable[Span], unreadable: Iterable[Unreadable] = (), *, model_ref: str | None = None
) -> list[ObservedSpans]:
    """The bundles of ``spans``: one per `gym_contract.rollout_id`, else one per trace, in the order first met.

    ``model_ref`` names the model server of model-call spans that do not name one
    (`gym_contract.model_server`). An unreadable span becomes a gap of its trace's bundle (of a bundle
    of its own when its trace has no readable span); one without a trace id belongs to no bundle, and
    only its reader can report it.
    """
    spans, repeated = _first_of_each(spans)
    rollout_of_trace: dict[str, str] = {}
    for span in spans:
        rollout_id = text(span.resource.get("gym_contract.rollout_id")) or text(
            span.attributes.get("gym_contract.rollout_id")
        )
        if rollout_id is not None:
            rollout_of_trace.setdefault(span.trace_id, rollout_id)
    groups: dict[str, _Group] = {}
    traces: dict[str, list[str]] = {}
    for span in spans:
        key = _key(span, rollout_of_trace)
        groups.setdefault(key, _Group([], model_ref)).spans.append(span)
        if span.trace_id not in traces.setdefault(key, []):
            traces[key].append(span.trace_id)
    for problem in unreadable:
        if problem.trace_id is None:
            continue  # no trace to tell: the reader reports it (observe otel, on stderr)
        key = rollout_of_trace.get(problem.trace_id, f"trace {problem.trace_id}")
        group = groups.setdefault(key, _Group([], model_ref))
        traces.setdefault(key, [problem.trace_id])
        group.gap("otel_span_unreadable", None, f"{problem.where}: {problem.problem}")
    for span in repeated:
        detail = f"span {span.span_id} of trace {span.trace_id} is in the input twice, saying different things"
        groups[_key(span, rollout_of_trace)].gap("otel_span_conflict", None, detail)
    mapped = []
    for key, group in groups.items():
        sources = [
            text(s.attributes.get("gym_contract.source")) or text(s.resource.get("gym_contract.source"))
            for s in group.spans
        ]
        source = next((found for found in sources if found is not None), "otel")
        unread, group.gaps = group.gaps, []
        rollout_id = None if key.startswith("trace ") else key
        bundle, summary = _map_group(group, source, {"rollout_id": rollout_id, "trace_ids": traces[key]})
        bundle["gaps"] += unread
        mapped.append(ObservedSpans(bundle, summary, rollout_id, traces[key]))
    return mapped
