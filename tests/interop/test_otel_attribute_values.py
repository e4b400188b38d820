"""`observe otel` holds every attribute value to the contract: one it cannot hold is a gap, never a broken bundle."""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract._json_writing import dumps
from gym_contract.interop import to_otel
from gym_contract.producers.otel import ObservedSpans, OtlpInput, observe_otel
from tests.strategies import json_values
from tests.support import REPO, run_in_process

TREE_CODES = ("invocation_parent_cycle", "invocation_id_duplicate")
"""What spans may state however they are read: how invocations relate (the one way `observed()` may fail)."""
MAPPED = (
    "gym_contract.status", "gym_contract.duration_ms", "gym_contract.timing_source", "gym_contract.sandbox_id",
    "gym_contract.invocation_id", "gym_contract.parent_invocation_id", "gym_contract.spawned_by_tool_call_id",
    "gym_contract.model_calls", "gym_contract.model_call_id", "gym_contract.model_server", "gym_contract.timing",
    "gym_contract.record", "gen_ai.agent.id", "gen_ai.tool.call.id", "gen_ai.tool.name", "gen_ai.response.id",
    "gen_ai.operation.name", "gen_ai.usage.input_tokens", "error.type", "gap.code", "gap.invocation_id",
    "gap.detail",
)  # fmt: skip
"""Every attribute the reader maps, of spans and of their events."""


@cache
def exported() -> bytes:
    """The OTLP/JSON export of the project's example rollouts, as `export otel` writes it."""
    rollouts = [json.loads(line) for line in (REPO / "examples" / "rollouts.jsonl").read_text().splitlines()]
    return dumps(to_otel(rollouts))


def read(request: dict[str, Any]) -> tuple[list[ObservedSpans], OtlpInput]:
    """What `observe_otel` reads from ``request`` written to a file."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "spans.json"
        path.write_bytes(dumps(request))
        return observe_otel(str(path))


def observed(request: dict[str, Any]) -> list[ObservedSpans]:
    bundles, found = read(request)
    assert bundles
    assert not found.damaged
    return bundles


def keeps_the_contract(bundles: list[ObservedSpans]) -> None:
    """The law: no value makes a bundle break the contract, and the model takes every bundle."""
    for bundle in bundles:
        errors = [d for d in iter_diagnostics(bundle.bundle, "bundle") if d.severity == "error"]
        assert [(d.code, d.path, d.message) for d in errors if d.code not in TREE_CODES] == []
        bundle.observed()


def spans(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [span for r in request["resourceSpans"] for scope in r["scopeSpans"] for span in scope["spans"]]


def places(request: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Every attribute list of the request, with the operation of its span: spans' and their events'."""
    found = []
    for span in spans(request):
        values = {pair["key"]: pair["value"] for pair in span["attributes"]}
        operation = values.get("gen_ai.operation.name", {}).get("stringValue", "")
        found.append((operation, span["attributes"]))
        found += [(f"{operation} {event['name']}", event["attributes"]) for event in span["events"]]
    return found


def set_attribute(attributes: list[dict[str, Any]], key: str, value: Any) -> None:
    attributes[:] = [pair for pair in attributes if pair["key"] != key] + [{"key": key, "value": value}]


def with_value(place: str, key: str, value: Any) -> dict[str, Any]:
    """The export with attribute ``key`` of the first ``place`` (an operation, or `<operation> <event>`) set."""
    request = json.loads(exported())
    attributes = next(found for operation, found in places(request) if operation == place)
    set_attribute(attributes, key, value)
    return request


def unreadable(bundles: list[ObservedSpans]) -> list[str]:
    return [gap["detail"] for b in bundles for gap in b.bundle["gaps"] if gap["code"] == "otel_span_unreadable"]


def field_of(bundles: list[ObservedSpans], kind: str, field: str) -> list[Any]:
    return [record.get(field) for b in bundles for record in b.bundle["records"] if record["kind"] == kind]


@pytest.mark.parametrize(
    ("place", "kind", "key", "value", "field", "unknown"),
    [
        ("execute_tool", "tool_call", "gym_contract.status", {"stringValue": "zz"}, "status", "unknown"),
        ("execute_tool", "tool_call", "gym_contract.status", {"stringValue": ""}, "status", "unknown"),
        ("invoke_agent", "agent_invocation", "gym_contract.status", {"intValue": "3"}, "status", "unknown"),
        ("execute_tool", "tool_call", "gym_contract.timing_source", {"stringValue": "zz"}, "timing_source", None),
        ("execute_tool", "tool_call", "gym_contract.duration_ms", {"doubleValue": -3.5}, "duration_ms", None),
        ("invoke_agent", "agent_invocation", "gym_contract.duration_ms", {"intValue": "-1"}, "duration_ms", None),
        ("invoke_agent", "agent_invocation", "gym_contract.duration_ms", {"stringValue": "5"}, "duration_ms", None),
        ("execute_tool", "tool_call", "gym_contract.sandbox_id", {"boolValue": True}, "sandbox_id", None),
        ("execute_tool", "tool_call", "gen_ai.tool.name", {"intValue": "7"}, "tool_name", None),
        ("execute_tool", "tool_call", "error.type", {"doubleValue": 1.5}, "error_type", None),
        ("invoke_agent", "agent_invocation", "error.type", {"arrayValue": {"values": []}}, "error_type", None),
        ("invoke_agent", "agent_invocation", "gym_contract.spawned_by_tool_call_id", {"intValue": "7"},
         "spawned_by_tool_call_id", None),
    ],
)  # fmt: skip
def test_a_value_the_contract_cannot_hold_is_not_copied_and_its_span_and_attribute_are_named(
    place: str, kind: str, key: str, value: Any, field: str, unknown: Any
):
    bundles = observed(with_value(place, key, value))
    keeps_the_contract(bundles)
    assert unknown in field_of(bundles, kind, field)
    [detail] = [detail for detail in unreadable(bundles) if key in detail]
    assert detail.startswith("span ")
    assert " of trace " in detail


def test_the_audit_s_reproduction_reads_a_bundle_the_model_takes():
    request = with_value("execute_tool", "gym_contract.status", {"stringValue": "zz"})
    bundles = observed(request)
    assert "zz" not in field_of(bundles, "tool_call", "status")
    bundles[0].observed()


def test_a_gap_event_whose_fields_the_contract_cannot_hold_is_a_gap_of_its_own():
    for key, value in [("gap.code", {"intValue": "5"}), ("gap.detail", {"boolValue": False})]:
        request = with_value("invoke_agent gym_contract.gap", key, value)
        bundles = observed(request)
        keeps_the_contract(bundles)
        assert any("gym_contract.gap event" in detail for detail in unreadable(bundles))


def test_a_model_call_reference_the_contract_cannot_hold_is_left_out_and_named():
    refs = [{"model_call_id": ""}, {"model_call_id": "m1"}, {"model_ref": {"type": "x"}, "response_id": "r"}, 5]
    texts = {"arrayValue": {"values": [{"stringValue": json.dumps(ref)} for ref in refs]}}
    bundles = observed(with_value("invoke_agent", "gym_contract.model_calls", texts))
    keeps_the_contract(bundles)
    assert [{"model_call_id": "m1"}] in field_of(bundles, "agent_invocation", "model_calls")
    assert sum("gym_contract.model_calls" in detail for detail in unreadable(bundles)) == 3


def test_an_empty_model_call_id_on_a_chat_span_gives_no_reference_and_a_gap():
    request = json.loads(exported())
    for operation, attributes in places(request):
        if operation == "invoke_agent":  # no references stated: each chat span gives its invocation's
            attributes[:] = [pair for pair in attributes if pair["key"] != "gym_contract.model_calls"]
        if operation == "chat":
            set_attribute(attributes, "gym_contract.model_call_id", {"stringValue": ""})
    bundles = observed(request)
    keeps_the_contract(bundles)
    assert any("gym_contract.model_call_id" in detail for detail in unreadable(bundles))


@pytest.mark.parametrize(
    "record",
    [
        {"kind": "context_compaction", "invocation_id": "root", "tokens_before": -1},
        {"kind": "context_compaction", "invocation_id": "root", "outcome": "zz"},
        {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "t", "started_at": 9.0, "completed_at": 1.0},
        {"invocation_id": "root", "note": "no kind"},
        {"kind": "agent_invocation"},
    ],
)
def test_a_record_event_the_contract_cannot_hold_is_a_gap_instead_of_a_record(record: dict[str, Any]):
    request = json.loads(exported())
    agent = next(span for span in spans(request) if span["name"].startswith("invoke_agent"))
    value = {"stringValue": json.dumps(record)}
    agent["events"].append(
        {"name": "gym_contract.record", "attributes": [{"key": "gym_contract.record", "value": value}]}
    )
    bundles = observed(request)
    keeps_the_contract(bundles)
    assert record not in [r for b in bundles for r in b.bundle["records"]]
    assert any("gym_contract.record event" in detail for detail in unreadable(bundles))


def test_span_times_no_float_holds_give_no_times_and_no_traceback():
    request = json.loads(exported())
    for span in spans(request):
        span["startTimeUnixNano"], span["endTimeUnixNano"] = "1" + "0" * 320, "9" * 5000
    set_attribute(spans(request)[1]["attributes"], "gym_contract.duration_ms", {"intValue": "9" * 5000})
    bundles = observed(request)
    keeps_the_contract(bundles)
    assert field_of(bundles, "tool_call", "started_at") == [None] * len(field_of(bundles, "tool_call", "kind"))


def test_observe_otel_exits_0_for_spans_whose_values_the_contract_cannot_hold(tmp_path: Path):
    path = tmp_path / "spans.json"
    path.write_bytes(dumps(with_value("execute_tool", "gym_contract.status", {"stringValue": "zz"})))
    status, out, err = run_in_process("observe", "otel", str(path))
    assert status == 0, err
    assert "otel_span_unreadable" in out


@st.composite
def otlp_values(draw: st.DrawFn) -> Any:
    """An attribute's value as OTLP/JSON writes one, of any kind and any content, or any JSON value at all."""
    value = json_values(max_leaves=6, surrogates=False)
    kind = draw(st.sampled_from(["string", "json", "int", "double", "bool", "array", "kvlist", "any"]))
    if kind == "string":
        return {"stringValue": draw(st.one_of(st.text(max_size=8), st.sampled_from(["", "unknown", "zz", "root"])))}
    if kind == "json":  # what an attribute holding JSON text (`model_calls`, `record`) may be given instead
        return {"stringValue": dumps(draw(value)).decode()}
    if kind == "int":
        return {"intValue": draw(st.one_of(st.integers().map(str), st.integers(), st.text(max_size=4)))}
    if kind == "double":
        return {"doubleValue": draw(st.one_of(st.floats(allow_nan=False, allow_infinity=False), value))}
    if kind == "bool":
        return {"boolValue": draw(value)}
    if kind == "array":
        return {"arrayValue": {"values": draw(st.lists(otlp_values(), max_size=3))}}
    if kind == "kvlist":
        pairs = st.fixed_dictionaries({"key": st.sampled_from(MAPPED), "value": otlp_values()})
        return {"kvlistValue": {"values": draw(st.lists(pairs, max_size=2))}}
    return draw(value)


@st.composite
def mutated_exports(draw: st.DrawFn) -> dict[str, Any]:
    """The export of the example rollouts with attribute values of its spans and events set to any value."""
    request = json.loads(exported())
    found = places(request)
    for _ in range(draw(st.integers(1, 6))):
        _, attributes = draw(st.sampled_from(found))
        keys = [pair["key"] for pair in attributes]
        key = draw(st.sampled_from(sorted({*keys, *MAPPED})))
        set_attribute(attributes, key, draw(otlp_values()))
    return request


@settings(max_examples=60, deadline=None)
@given(mutated_exports())
def test_law_whatever_values_the_spans_hold_observe_otel_gives_bundles_that_keep_the_contract(request):
    bundles, found = read(request)
    assert bundles or found.damaged  # a value nested past what JSON readers take damages the whole document
    keeps_the_contract(bundles)


def test_a_double_value_written_as_an_integer_no_double_holds_is_read_as_no_value():
    # Found by the law above: converting it to a float raised OverflowError.
    bundles = observed(with_value("execute_tool", "gym_contract.duration_ms", {"doubleValue": 10**400}))
    keeps_the_contract(bundles)
    assert None in field_of(bundles, "tool_call", "duration_ms")
