"""Laws of the span mapping over any spans: nothing raises, every bundle keeps the contract, nothing is dropped.

The producer laws (tests/producers/test_producer_laws.py) hold every registered producer to these
rules; spans are read by a command of their own, so they are stated here for the span mapping:
span trees of every shape (loops, shared agent ids, spans outside any agent, ill-typed attributes)
and any JSON value as a request or as a line of a Collector file.
"""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract._json_writing import dumps
from gym_contract.interop import to_otel
from gym_contract.producers.otel import OtlpInput, map_spans
from gym_contract.producers.otel._otlp import spans_of_request
from tests.strategies import as_line, damaged_lines, json_values
from tests.support import REPO, run_in_process

OPERATIONS = ("invoke_agent", "chat", "text_completion", "execute_tool", "embeddings", None)
SPAN_IDS = [f"{n:016x}" for n in range(1, 9)]
TRACE_IDS = [f"{n:032x}" for n in range(1, 3)]


@cache
def registered_for_otel() -> set[str]:
    document = json.loads((REPO / "schemas" / "v1" / "gap_codes.json").read_text())
    return {entry["code"] for entry in document["codes"] if "otel" in entry["emitted_by"]}


def _value(draw: st.DrawFn) -> dict[str, Any]:
    """An attribute value of any OTLP kind, or of the wrong JSON type for its kind."""
    kind = draw(st.sampled_from(["stringValue", "intValue", "doubleValue", "boolValue", "arrayValue", "wrong"]))
    if kind == "stringValue":
        return {kind: draw(st.sampled_from(["r1", "r2", "coder", "call_1", "call_1", ""]))}
    if kind == "intValue":
        return {kind: draw(st.sampled_from(["12", "-3", "x", 7, "²", "--5", "-"]))}
    if kind == "doubleValue":
        return {kind: draw(st.sampled_from([1.5, "NaN", True]))}
    if kind == "boolValue":
        return {kind: draw(st.booleans())}
    if kind == "arrayValue":
        return {kind: {"values": [{"stringValue": "stop"}]}}
    return {"stringValue": draw(st.sampled_from([3, None, ["a"]]))}


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    """A request of GenAI spans of every shape: ids from a small pool, so parents loop and repeat."""
    spans = []
    for span_id in draw(st.lists(st.sampled_from(SPAN_IDS), max_size=8)):
        attributes = []
        operation = draw(st.sampled_from(OPERATIONS))
        if operation is not None:
            attributes.append({"key": "gen_ai.operation.name", "value": {"stringValue": operation}})
        keys = ["gen_ai.agent.id", "gen_ai.response.id", "gen_ai.tool.call.id", "gen_ai.tool.name", "error.type",
                "gen_ai.usage.input_tokens", "gym_contract.model_server", "gym_contract.rollout_id"]  # fmt: skip
        for key in draw(st.lists(st.sampled_from(keys), max_size=4)):
            attributes.append({"key": key, "value": _value(draw)})
        start = draw(st.sampled_from(["0", "1788000000000000000", "1788000001000000000", 5, "x", "²", -1]))
        span: dict[str, Any] = {
            "traceId": draw(st.sampled_from(TRACE_IDS)),
            "spanId": span_id,
            "name": "span",
            "startTimeUnixNano": start,
            "endTimeUnixNano": draw(st.sampled_from(["0", "1788000000500000000", "1788000002000000000"])),
            "attributes": attributes,
            "status": {"code": draw(st.sampled_from([0, 1, 2, "STATUS_CODE_ERROR", 9]))},
        }
        if draw(st.booleans()):
            span["parentSpanId"] = draw(st.sampled_from([*SPAN_IDS, "zz"]))
        if draw(st.integers(0, 9)) == 0:
            span["events"] = [{"name": "gym_contract.gap", "attributes": [{"key": "gap.code", "value": _value(draw)}]}]
        spans.append(span)
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}


def read(request: Any) -> OtlpInput:
    found = OtlpInput()
    spans_of_request(request, "document", found)
    return found


@given(requests())
def test_law_any_genai_spans_give_valid_bundles_with_registered_gaps_and_every_span_accounted_for(request):
    found = read(request)
    observed = map_spans(found.spans, found.unreadable)
    again = map_spans(read(request).spans, read(request).unreadable)
    assert dumps([o.document() for o in observed]) == dumps([o.document() for o in again])  # deterministic
    for spans in observed:
        assert [d.code for d in iter_diagnostics(spans.bundle, "bundle") if d.severity == "error"] == []
        spans.observed()
        gaps = {gap["code"] for gap in spans.bundle["gaps"]}
        events = [event for s in found.spans for name, event in s.events if name == "gym_contract.gap"]
        stated = {code for event in events if isinstance(code := event.get("gap.code"), str)}
        assert gaps - stated <= registered_for_otel()
    records = [record for spans in observed for record in spans.bundle["records"]]
    distinct: dict[tuple[str, str], Any] = {}
    for span in found.spans:  # a span given twice is read once; a different one under the same ids is a gap
        distinct.setdefault((span.trace_id, span.span_id), span)
    conflicts = sum(1 for span in found.spans if span != distinct[(span.trace_id, span.span_id)])
    assert conflicts == sum(1 for s in observed for g in s.bundle["gaps"] if g["code"] == "otel_span_conflict")
    agents = [s for s in distinct.values() if s.attributes.get("gen_ai.operation.name") == "invoke_agent"]
    assert len(agents) <= sum(1 for record in records if record["kind"] == "agent_invocation")
    tools = [s for s in distinct.values() if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    with_id = [s for s in tools if isinstance(s.attributes.get("gen_ai.tool.call.id"), str)]
    assert len(with_id) == sum(1 for record in records if record["kind"] == "tool_call")
    without_id = len(tools) - len(with_id)
    named = sum(1 for s in observed for g in s.bundle["gaps"] if g["code"] == "tool_call_identity_unavailable")
    assert named >= without_id
    unread = sum(1 for s in observed for g in s.bundle["gaps"] if g["code"] == "otel_span_unreadable")
    traced = [problem for problem in found.unreadable if problem.trace_id is not None]
    assert unread >= len(traced)  # and one per ill-typed gap event


@given(json_values(max_leaves=12))
def test_law_any_json_value_as_a_request_raises_nothing(value):
    found = read(value)
    for spans in map_spans(found.spans, found.unreadable):
        spans.document()


@given(st.lists(st.one_of(st.builds(as_line, json_values(max_leaves=8)), damaged_lines()), max_size=4))
def test_law_any_lines_are_read_without_an_exception_and_damage_is_exit_1_or_2(lines):
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "traces.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        status, _, err = run_in_process("observe", "otel", str(path))  # an exception would fail the test
    assert status in (0, 1, 2)
    assert status == 0 or err


@st.composite
def damaged_bundles(draw: st.DrawFn) -> dict[str, Any]:
    """A bundle as a broken harness writes one: any objects for records and gaps, ids of any type."""
    records = draw(st.lists(st.dictionaries(st.sampled_from(RECORD_KEYS), json_values(max_leaves=3)), max_size=5))
    for record in records:
        if draw(st.booleans()):
            record["kind"] = draw(st.sampled_from(["agent_invocation", "tool_call", "context_compaction", 5]))
    gap_keys = st.sampled_from(["code", "invocation_id", "detail"])
    gaps = draw(st.lists(st.dictionaries(gap_keys, json_values(max_leaves=3)), max_size=3))
    return {"source": "pi", "records": records, "gaps": gaps}


RECORD_KEYS = ("invocation_id", "tool_call_id", "parent_invocation_id", "status", "started_at", "completed_at",
               "duration_ms", "model_calls", "spawned_by_tool_call_id", "conversation")  # fmt: skip


@given(damaged_bundles())
def test_law_whatever_a_bundle_holds_its_export_reads_back_without_an_exception(bundle):
    try:
        request = to_otel([bundle])
    except ValueError:  # not a bundle at all: the export refuses it, and there is nothing to read back
        return
    found = read(request)  # the request as written: a lone surrogate no JSON text holds may be in it
    for spans in map_spans(found.spans, found.unreadable):
        spans.document()
