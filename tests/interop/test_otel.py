"""OpenTelemetry export: OTLP/JSON the official protobuf messages parse, GenAI attribute names, reproducible ids."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from decimal import Decimal
from typing import Any

import opentelemetry.semconv._incubating.attributes.gen_ai_attributes as gen_ai
import pytest
from google.protobuf import json_format
from hypothesis import given
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.semconv.attributes import error_attributes, service_attributes

from gym_contract._json_writing import dumps
from gym_contract.interop import to_otel
from tests.interop.test_atif import EXAMPLE_ROLLOUTS
from tests.rollout_strategies import rollouts

GEN_AI_NAMES = {value for name, value in vars(gen_ai).items() if name.startswith("GEN_AI_")}
OPERATIONS = {member.value for member in gen_ai.GenAiOperationNameValues}
PROVIDERS = {member.value for member in gen_ai.GenAiProviderNameValues}
IDS = ("traceId", "spanId", "parentSpanId")


def protobuf_json(value: Any) -> Any:
    """OTLP/JSON as protobuf's JSON mapping reads it: OTLP writes ids in hex where the mapping expects base64."""
    if isinstance(value, dict):
        return {
            key: base64.b64encode(bytes.fromhex(item)).decode() if key in IDS else protobuf_json(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [protobuf_json(item) for item in value]
    return value


def parse(request: dict[str, Any]) -> ExportTraceServiceRequest:
    return json_format.Parse(json.dumps(protobuf_json(request)), ExportTraceServiceRequest())


def attributes(span: Any) -> dict[str, Any]:
    return {pair.key: getattr(pair.value, pair.value.WhichOneof("value")) for pair in span.attributes}


def spans_of(message: ExportTraceServiceRequest) -> list[Any]:
    return [span for resource in message.resource_spans for scope in resource.scope_spans for span in scope.spans]


def test_one_trace_per_rollout_that_the_official_messages_parse():
    message = parse(to_otel(EXAMPLE_ROLLOUTS))
    assert len(message.resource_spans) == len(EXAMPLE_ROLLOUTS)
    traces = {span.trace_id for span in spans_of(message)}
    assert len(traces) == len(EXAMPLE_ROLLOUTS)
    for span in spans_of(message):
        assert len(span.trace_id) == 16
        assert len(span.span_id) == 8
        assert span.end_time_unix_nano >= span.start_time_unix_nano


def test_every_gen_ai_attribute_is_a_semantic_convention():
    message = parse(to_otel(EXAMPLE_ROLLOUTS))
    used = {key for span in spans_of(message) for key in attributes(span)}
    ours = {key for key in used if not key.startswith("gym_contract.")}
    assert {key for key in ours if key.startswith("gen_ai.")} <= GEN_AI_NAMES
    assert ours - GEN_AI_NAMES <= {error_attributes.ERROR_TYPE}
    resource = {pair.key for resource in message.resource_spans for pair in resource.resource.attributes}
    assert service_attributes.SERVICE_NAME in resource
    operations = {attributes(span).get(gen_ai.GEN_AI_OPERATION_NAME) for span in spans_of(message)}
    assert operations - {None} <= OPERATIONS
    assert {"invoke_agent", "chat", "execute_tool"} <= operations


def test_spans_follow_the_invocation_tree_and_carry_tokens_and_tool_timing():
    record = EXAMPLE_ROLLOUTS[0]
    trajectory = record["ng_trajectory"]
    spans = spans_of(parse(to_otel([record])))
    by_id = {span.span_id: span for span in spans}
    agents = {attributes(s)[gen_ai.GEN_AI_AGENT_ID]: s for s in spans if gen_ai.GEN_AI_AGENT_ID in attributes(s)}
    for invocation in trajectory["invocations"]:
        span = agents[invocation["invocation_id"]]
        parent = by_id[span.parent_span_id]
        if invocation["parent_invocation_id"] is None:
            assert parent.name == f"rollout {trajectory['rollout_id']}"
        else:
            assert attributes(parent)[gen_ai.GEN_AI_AGENT_ID] == invocation["parent_invocation_id"]
    chats = [s for s in spans if attributes(s).get(gen_ai.GEN_AI_OPERATION_NAME) == "chat"]
    assert len(chats) == len(trajectory["model_calls"])
    for span in chats:
        call = next(
            c for c in trajectory["model_calls"] if c["model_call_id"] == attributes(span)["gym_contract.model_call_id"]
        )
        assert attributes(span)[gen_ai.GEN_AI_USAGE_INPUT_TOKENS] == call["token_stats"]["prompt_tokens"]
        assert attributes(span)[gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS] == call["token_stats"]["completion_tokens"]
        assert attributes(span)[gen_ai.GEN_AI_PROVIDER_NAME] in PROVIDERS
        # The seconds as written, to the nanosecond: 1788358287.205 is 1788358287205000000, not the float's ...4999936.
        assert span.start_time_unix_nano == int(Decimal(repr(call["started_at"])) * 10**9)
    tools = [s for s in spans if attributes(s).get(gen_ai.GEN_AI_OPERATION_NAME) == "execute_tool"]
    assert len(tools) == len(trajectory["tool_calls"])
    for span in tools:
        tool = next(
            t for t in trajectory["tool_calls"] if t["tool_call_id"] == attributes(span)[gen_ai.GEN_AI_TOOL_CALL_ID]
        )
        assert (span.end_time_unix_nano - span.start_time_unix_nano) / 1e6 == pytest.approx(tool["duration_ms"])
        assert attributes(by_id[span.parent_span_id])[gen_ai.GEN_AI_AGENT_ID] == tool["invocation_id"]


def test_an_unknown_token_count_is_left_out_never_zero_and_gaps_are_span_events():
    record = json.loads(json.dumps(EXAMPLE_ROLLOUTS[0]))
    for call in record["ng_trajectory"]["model_calls"]:
        call["token_stats"]["prompt_tokens"] = None
    spans = spans_of(parse(to_otel([record])))
    chats = [s for s in spans if attributes(s).get(gen_ai.GEN_AI_OPERATION_NAME) == "chat"]
    assert chats
    assert all(gen_ai.GEN_AI_USAGE_INPUT_TOKENS not in attributes(span) for span in chats)
    events = [(event.name, attributes(event)) for span in spans for event in span.events]
    gaps = record["ng_trajectory"]["gaps"]
    assert sorted(e["gap.code"] for name, e in events if name == "gym_contract.gap") == sorted(g["code"] for g in gaps)


@given(rollouts())
def test_law_the_export_is_reproducible_parses_and_gives_every_span_an_id_of_its_own(rollout):
    request = to_otel([rollout.record])
    assert dumps(request) == dumps(to_otel([json.loads(json.dumps(rollout.record))]))
    spans = spans_of(parse(request))
    assert len({span.span_id for span in spans}) == len(spans)
    known = {span.span_id for span in spans}
    assert all(span.parent_span_id in known for span in spans if span.parent_span_id)
    records = rollout.record["ng_agent_observations"]["records"]
    invocations = {r["invocation_id"] for r in records if r["kind"] == "agent_invocation"}
    agents = [s for s in spans if attributes(s).get(gen_ai.GEN_AI_OPERATION_NAME) == "invoke_agent"]
    assert len(agents) >= len(invocations)


def test_an_end_taken_from_a_start_and_a_duration_is_exact_to_the_nanosecond():
    bundle = {
        "source": "pi",
        "records": [
            {"kind": "agent_invocation", "invocation_id": "root"},
            {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "t", "tool_name": "Bash",
             "started_at": 1788358333.1, "duration_ms": 500.5},
        ],
    }  # fmt: skip
    spans = [
        span for part in to_otel([bundle])["resourceSpans"] for scope in part["scopeSpans"] for span in scope["spans"]
    ]
    tool = next(
        span for span in spans if span["startTimeUnixNano"] == "1788358333100000000" and "execute_tool" in span["name"]
    )
    assert tool["endTimeUnixNano"] == "1788358333600500000"  # not 1788358333600499900


def test_a_number_no_double_holds_is_written_whole_in_an_attribute_and_kept_apart_from_its_near_twin(tmp_path):
    # Two gap details of 5,000 digits (more than Python turns into an int) that share their first and
    # last digits: shortened, they would read alike, and the spans would say one number for two.
    near_twins = ["7" * 2500 + middle + "7" * 2499 for middle in ("1", "2")]
    record = json.loads(json.dumps(EXAMPLE_ROLLOUTS[0]))
    record["ng_trajectory"]["gaps"] += [
        {"code": "no_sandbox_runtime", "invocation_id": None, "detail": f"<{index}>"} for index in range(2)
    ]
    line = json.dumps(record)
    for index, number in enumerate(near_twins):
        line = line.replace(f'"<{index}>"', number)
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(line + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "export", "otel", str(rollouts)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    spans = spans_of(parse(json.loads(result.stdout)))
    details = [attributes(event).get("gap.detail") for span in spans for event in span.events]
    assert [detail for detail in details if detail in near_twins] == near_twins
