"""GenAI spans mapped to bundles: `invoke_agent` to invocations, `chat` to model-call refs, `execute_tool` to tools.

Spans are grouped into one bundle per rollout (the `gym_contract.rollout_id` attribute of the
resource or of a span) or, without one, per trace. A span that `gym-contract export otel` wrote
(it has `gym_contract.timing`) carries the contract's facts as `gym_contract.*` attributes, which
are read exactly; any other span is read by the GenAI semantic conventions alone, and what those
do not say is named by a gap.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gym_contract._parent_links import caught_in_cycles
from gym_contract._values import count, finite, text
from gym_contract.producers._kit import Observed, RunSummary
from gym_contract.producers.otel._otlp import Span, Unreadable
from gym_contract.reading._json_parsing import loads

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
        only spans that state a broken invocation tree can make it do.
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
    if span.start is None or span.end is None or span.end < span.start:
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
    named = [text(span.attributes.get("gen_ai.agent.id")) for span in agents]
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
    if _ours(span):
        parent = text(attributes.get("gym_contract.parent_invocation_id")) or parent
        spawned_by = text(attributes.get("gym_contract.spawned_by_tool_call_id"))
        status = text(attributes.get("gym_contract.status")) or "unknown"
        duration = finite(attributes.get("gym_contract.duration_ms"))
    else:
        spawned_by = text(spawning.attributes.get("gen_ai.tool.call.id")) if spawning is not None else None
        status = _status(span)
        duration = _duration_ms(_times(span))
        if parent is not None and spawned_by is None:
            group.gap("subagent_spawn_tool_unavailable", invocation_id, None)
        group.gap("agent_transcript_unavailable", invocation_id, None)
    record |= {"parent_invocation_id": parent, "spawned_by_tool_call_id": spawned_by, "status": status}
    record |= {"duration_ms": duration, "error_type": text(attributes.get("error.type"))}
    ours = _ours(span)
    record["model_calls"] = _json_values(group, span, attributes, "gym_contract.model_calls") if ours else []
    return record


def _json_values(group: _Group, span: Span, attributes: dict[str, Any], key: str) -> list[Any]:
    """The values a span this package wrote states as JSON texts (an attribute holds no objects)."""
    texts = attributes.get(key)
    values = []
    for value in texts if isinstance(texts, list) else [texts] if texts is not None else []:
        try:
            values.append(loads(value) if isinstance(value, str) else None)
        except ValueError:  # orjson's JSONDecodeError: the text was not written by this package
            values.append(None)
        if values[-1] is None:
            values.pop()
            detail = f"span {span.span_id} of trace {span.trace_id}: {key} holds a value that is not JSON text"
            group.gap("otel_span_unreadable", None, detail)
    return values


def _tool(group: _Group, span: Span) -> dict[str, Any] | None:
    attributes = span.attributes
    ours = _ours(span)
    invocation_id = (text(attributes.get("gym_contract.invocation_id")) if ours else None) or group.holder(span)
    tool_call_id = text(attributes.get("gen_ai.tool.call.id"))
    if tool_call_id is None:
        group.gap("tool_call_identity_unavailable", invocation_id, f"span {span.span_id}")
        return None
    record: dict[str, Any] = {
        "kind": "tool_call",
        "invocation_id": invocation_id,
        "tool_call_id": tool_call_id,
        "tool_name": text(attributes.get("gen_ai.tool.name")),
        "error_type": text(attributes.get("error.type")),
    }
    times = _times(span)
    if times is not None:
        record |= {"started_at": _seconds(times[0]), "completed_at": _seconds(times[1])}
    if ours:
        record |= {
            "status": text(attributes.get("gym_contract.status")) or "unknown",
            "timing_source": text(attributes.get("gym_contract.timing_source")),
            "sandbox_id": text(attributes.get("gym_contract.sandbox_id")),
            "duration_ms": finite(attributes.get("gym_contract.duration_ms")),
        }
    else:
        record |= {"status": _status(span), "timing_source": "executor" if times else None}
        record["duration_ms"] = _duration_ms(times)
        if times is None:
            group.gap("tool_timing_unavailable", invocation_id, tool_call_id)
    return {key: value for key, value in record.items() if value is not None}


def _model_call_ref(group: _Group, span: Span, invocation_id: str) -> dict[str, Any] | None:
    attributes = span.attributes
    if (call_id := text(attributes.get("gym_contract.model_call_id"))) is not None:
        return {"model_call_id": call_id}
    response_id = text(attributes.get("gen_ai.response.id"))
    server = text(attributes.get("gym_contract.model_server")) or group.model_ref
    if response_id and server:
        return {"model_ref": {"type": _SERVER_TYPE, "name": server}, "response_id": response_id}
    if not _ours(span):
        if not response_id:
            group.gap("model_response_id_unavailable", invocation_id, None)
        else:
            group.gap("otel_model_server_unavailable", invocation_id, response_id)
    return None


def _stated_gap(group: _Group, span: Span, event: dict[str, Any]) -> None:
    """A gap a span states as a `gym_contract.gap` event: as stated when this package wrote it, else when well typed."""
    gap = {key: event.get(f"gap.{key}") for key in ("code", "invocation_id", "detail")}
    typed = isinstance(gap["code"], str) and gap["code"] != ""
    typed = typed and all(value is None or isinstance(value, str) for value in gap.values())
    if _ours(span) or typed:
        group.gaps.append(gap)
    else:
        where = f"span {span.span_id} of trace {span.trace_id}"
        detail = f"{where}: a gym_contract.gap event needs a gap.code string, and strings for the rest"
        group.gap("otel_span_unreadable", None, detail)


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


def _map_group(group: _Group, source: str, extra: dict[str, Any]) -> tuple[dict[str, Any], RunSummary]:
    group.by_id = {(span.trace_id, span.span_id): span for span in group.spans}
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
                stated += _json_values(group, span, event, "gym_contract.record")
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


def _stated(span: Span, key: str) -> str | None:
    """A string attribute of the span's resource, else of the span."""
    return text(span.resource.get(key)) or text(span.attributes.get(key))


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
