"""`observe otel` never reads a malformed attribute value or span field as an absent one: it is unset, and named.

OTLP/JSON writes an attribute's value as an `AnyValue` (`{"intValue": "12"}`); one whose value is of
the wrong type, or that holds no known kind, is read as unset all the same, and the gap
`otel_span_unreadable` names its span, its attribute (or field) and the value. An empty `AnyValue`
or JSON null is OTLP's "no value", and names nothing.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract._values import preview
from gym_contract.producers.otel import ObservedSpans, OtlpInput, Span, map_spans
from gym_contract.producers.otel._otlp import spans_of_request
from tests.support import run_in_process

TRACE, SPAN = "ab" * 16, "01" * 8
Bundles = list[ObservedSpans]
NAMED = re.compile(r"span (\S+) of trace (\S+): (.+?): ")
"""A gap detail that names a span: its id, its trace's, and what of it could not be read."""


def tool_span(extra: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """An `execute_tool` span of another instrumentation, with the attributes ``extra`` after its own."""
    own = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
        {"key": "gen_ai.tool.call.id", "value": {"stringValue": "call_1"}},
    ]
    return {
        "traceId": TRACE,
        "spanId": SPAN,
        "name": "execute_tool bash",
        "startTimeUnixNano": "1788000000000000000",
        "endTimeUnixNano": "1788000001000000000",
        "attributes": own + extra,
        **fields,
    }


def read(*spans: dict[str, Any], resource: list[dict[str, Any]] | None = None) -> tuple[list[Span], Bundles]:
    """The spans read from a request of ``spans``, and the bundles mapped from them."""
    request = {"resourceSpans": [{"resource": {"attributes": resource or []}, "scopeSpans": [{"spans": list(spans)}]}]}
    found = OtlpInput()
    spans_of_request(request, "document", found)
    assert found.unreadable == []
    return found.spans, map_spans(found.spans)


def named(bundles: Bundles) -> list[tuple[str, str, str, str]]:
    """Each `otel_span_unreadable` gap as (span id, trace id, what it names, its whole detail)."""
    found = []
    for bundle in bundles:
        for gap in bundle.bundle["gaps"]:
            if gap["code"] == "otel_span_unreadable":
                match = NAMED.match(gap["detail"])
                assert match, gap["detail"]
                found.append((*match.groups(), gap["detail"]))
    return found


def tool_of(bundles: Bundles) -> dict[str, Any]:
    [tool] = [record for b in bundles for record in b.bundle["records"] if record["kind"] == "tool_call"]
    return tool


MALFORMED = [
    {"stringValue": 5},
    {"stringValue": ["a"]},
    {"intValue": "12x"},
    {"intValue": 1.5},
    {"intValue": True},
    {"intValue": "9" * 5000},
    {"boolValue": "yes"},
    {"boolValue": 1},
    {"doubleValue": "NaN"},
    {"doubleValue": float("inf")},
    {"doubleValue": 10**400},
    {"doubleValue": "1.5"},
    {"bytesValue": 5},
    {"arrayValue": 3},
    {"arrayValue": {"values": 3}},
    {"kvlistValue": "a=1"},
    {"kvlistValue": {"values": {"key": "a"}}},
    {"foo": 1},
    "a bare string",
    7,
    [],
]


@pytest.mark.parametrize("value", MALFORMED, ids=lambda value: preview(value, 30))
def test_a_malformed_attribute_value_is_unset_and_a_gap_names_its_span_attribute_and_value(value: Any):
    spans, bundles = read(tool_span([{"key": "gen_ai.tool.name", "value": value}]))
    assert spans[0].attributes["gen_ai.tool.name"] is None
    assert "tool_name" not in tool_of(bundles)  # what the attribute maps to stays unknown
    [(span_id, trace_id, what, detail)] = named(bundles)
    assert (span_id, trace_id, what) == (SPAN, TRACE, "gen_ai.tool.name")
    assert preview(value) in detail


@pytest.mark.parametrize(
    ("value", "where", "expected"),
    [
        ({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "x"}]}}, "custom.list[1]", ["a", None]),
        ({"arrayValue": {"values": [{"stringValue": "a"}, 5]}}, "custom.list[1]", ["a", None]),
        ({"kvlistValue": {"values": [{"key": "in", "value": {"boolValue": "no"}}]}}, "custom.list.in", {"in": None}),
        ({"kvlistValue": {"values": [{"value": {"stringValue": "no key"}}]}}, "custom.list", {}),
    ],
)
def test_a_malformed_part_of_an_array_or_key_value_list_is_named_by_its_place(value: Any, where: str, expected: Any):
    spans, bundles = read(tool_span([{"key": "custom.list", "value": value}]))
    assert [what for _, _, what, _ in named(bundles)] == [where]
    assert spans[0].attributes["custom.list"] == expected  # the rest of it is read


def test_a_value_nested_deeper_than_the_reader_reads_is_named_not_dropped():
    value: dict[str, Any] = {"stringValue": "deep"}
    for _ in range(20):
        value = {"arrayValue": {"values": [value]}}
    _, bundles = read(tool_span([{"key": "custom.deep", "value": value}]))
    [(_, _, what, detail)] = named(bundles)
    assert what.startswith("custom.deep[0]")
    assert "not read" in detail


@pytest.mark.parametrize(
    ("field", "value", "where", "shown"),
    [
        ("startTimeUnixNano", "abc", "startTimeUnixNano", "'abc'"),
        ("startTimeUnixNano", 1.5e18, "startTimeUnixNano", "1.5e+18"),
        ("endTimeUnixNano", "-5", "endTimeUnixNano", "'-5'"),
        ("endTimeUnixNano", True, "endTimeUnixNano", "True"),
        ("status", {"code": "bogus"}, "status.code", "'bogus'"),
        ("status", {"code": 7}, "status.code", "7"),
        ("status", {"code": True}, "status.code", "True"),
        ("status", {"message": 5}, "status.message", "5"),
        ("status", "error", "status", "'error'"),
        ("name", 5, "name", "5"),
        ("events", {"name": "e"}, "events", "{'name': 'e'}"),
        ("events", [3], "event 0", "3"),
        ("events", [{"name": 4}], "the name of event 0", "4"),
        ("attributes", "gen_ai.tool.name=bash", "attributes", "'gen_ai.tool.name=bash'"),
    ],
)
def test_a_malformed_span_field_is_unset_and_a_gap_names_its_span_field_and_value(
    field: str, value: Any, where: str, shown: str
):
    _, bundles = read(tool_span([], **{field: value}))
    [(span_id, _, what, detail)] = named(bundles)
    assert (span_id, what) == (SPAN, where)
    assert detail.startswith(f"span {SPAN} of trace {TRACE}: {where}: {shown} ")


def test_a_malformed_span_field_leaves_what_it_maps_to_unknown():
    _, bundles = read(tool_span([], startTimeUnixNano="abc", status={"code": "bogus"}))
    tool = tool_of(bundles)
    assert "started_at" not in tool
    assert tool["status"] == "completed"  # an unset status: the span ended
    assert "tool_timing_unavailable" in [gap["code"] for b in bundles for gap in b.bundle["gaps"]]
    assert sorted(what for _, _, what, _ in named(bundles)) == ["startTimeUnixNano", "status.code"]


def test_an_event_attribute_is_named_with_its_event():
    event = {"name": "gen_ai.choice", "attributes": [{"key": "index", "value": {"intValue": "first"}}]}
    _, bundles = read(tool_span([], events=[event]))
    assert [what for _, _, what, _ in named(bundles)] == ["index of its gen_ai.choice event"]


def test_a_malformed_resource_attribute_is_named_once_a_bundle_and_groups_nothing():
    resource = [{"key": "gym_contract.rollout_id", "value": {"intValue": "rollout-1"}}]
    second = {**tool_span([]), "spanId": "02" * 8}
    spans, bundles = read(tool_span([]), second, resource=resource)
    assert [observed.rollout_id for observed in bundles] == [None]  # no rollout: the spans' trace is the bundle
    assert [what for _, _, what, _ in named(bundles)] == ["gym_contract.rollout_id of its resource"]
    assert spans[0].resource == {"gym_contract.rollout_id": None}


WELL_FORMED = [
    ({"stringValue": "bash"}, "bash"),
    ({"stringValue": ""}, ""),
    ({"boolValue": False}, False),
    ({"intValue": "12"}, 12),
    ({"intValue": "-3"}, -3),
    ({"intValue": 12}, 12),
    ({"doubleValue": 1.5}, 1.5),
    ({"doubleValue": 2}, 2.0),
    ({"bytesValue": "AAE="}, "AAE="),
    ({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "1"}]}}, ["a", 1]),
    ({"arrayValue": {}}, []),
    ({"kvlistValue": {"values": [{"key": "a", "value": {"boolValue": True}}]}}, {"a": True}),
    ({"kvlistValue": {}}, {}),
    ({}, None),
    (None, None),
    ({"stringValue": None}, None),
]


@pytest.mark.parametrize(("value", "expected"), WELL_FORMED, ids=lambda value: preview(value, 30))
def test_a_well_formed_value_of_every_kind_is_read_as_before_and_named_by_no_gap(value: Any, expected: Any):
    canary = {"key": "custom.canary", "value": {"intValue": "12x"}}  # the one value the spans' gaps name
    pair = {"key": "custom.value"} if value is None else {"key": "custom.value", "value": value}
    spans, bundles = read(tool_span([pair, canary]))
    assert spans[0].attributes["custom.value"] == expected
    assert [what for _, _, what, _ in named(bundles)] == ["custom.canary"]


def test_observe_otel_names_malformed_values_a_file_holds_as_json_text(tmp_path: Path):
    # Numbers past a double's range are kept as their text by the reader: they are not finite numbers either.
    spans = [tool_span([{"key": "custom.ratio", "value": {"doubleValue": "<inf>"}}], name=5)]
    request = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(request).replace('"<inf>"', "1e400"))
    status, out, err = run_in_process("observe", "otel", str(path))
    assert status == 0, err
    document = json.loads(out)
    details = [gap["detail"] for gap in document["ng_agent_observations"]["gaps"]]
    named_span = f"span {SPAN} of trace {TRACE}"
    assert f"{named_span}: custom.ratio: malformed AnyValue {{'doubleValue': 1e400}}: " in "\n".join(details)
    assert f"{named_span}: name: 5 is not a string" in details


SCALAR_KINDS = ("stringValue", "boolValue", "intValue", "doubleValue", "bytesValue")
SCALARS = st.one_of(
    st.text(max_size=4).map(lambda text: ({"stringValue": text}, text)),
    st.booleans().map(lambda flag: ({"boolValue": flag}, flag)),
    st.integers(-(2**63), 2**63 - 1).flatmap(
        lambda number: st.sampled_from([({"intValue": str(number)}, number), ({"intValue": number}, number)])
    ),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda number: ({"doubleValue": number}, number)),
    st.binary(max_size=4).map(
        lambda data: ({"bytesValue": base64.b64encode(data).decode()}, base64.b64encode(data).decode())
    ),
)
WELL_FORMED_VALUES = st.recursive(  # each as (the AnyValue, the Python value it reads as)
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3).map(
            lambda items: ({"arrayValue": {"values": [value for value, _ in items]}}, [python for _, python in items])
        ),
        st.dictionaries(st.text(max_size=3), children, max_size=3).map(
            lambda pairs: (
                {"kvlistValue": {"values": [{"key": key, "value": value} for key, (value, _) in pairs.items()]}},
                {key: python for key, (_, python) in pairs.items()},
            )
        ),
    ),
    max_leaves=6,
)
ANY_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4)),
    lambda children: st.one_of(
        st.lists(children, max_size=2),
        st.dictionaries(
            st.sampled_from([*SCALAR_KINDS, "arrayValue", "kvlistValue", "values", "key", "other"]), children
        ),
    ),
    max_leaves=5,
)


def states_no_value(value: Any) -> bool:
    """Whether an `AnyValue` is OTLP's "no value": null, empty, or its first scalar kind set to null."""
    if value is None or value == {}:
        return True
    scalar = next((key for key in SCALAR_KINDS if isinstance(value, dict) and key in value), None)
    return scalar is not None and value[scalar] is None


def names(key: str, what: set[str]) -> bool:
    """Whether a gap names attribute ``key``, or a part of its value."""
    return any(re.match(rf"{re.escape(key)}($|[\[.])", named_part) for named_part in what)


VALUES = st.one_of(WELL_FORMED_VALUES.map(lambda pair: ("well", pair)), ANY_VALUES.map(lambda value: ("any", value)))


@given(st.lists(VALUES, min_size=1, max_size=6))
def test_law_a_value_is_read_as_written_or_named_and_a_bundle_keeps_the_contract_either_way(values):
    pairs = [
        {"key": f"custom.{n}", "value": value[0] if kind == "well" else value} for n, (kind, value) in enumerate(values)
    ]
    spans, bundles = read(tool_span(pairs))
    what = {part for _, _, part, _ in named(bundles)}
    for n, (kind, value) in enumerate(values):
        read_as = spans[0].attributes[f"custom.{n}"]
        if kind == "well":
            assert read_as == value[1]
            assert not names(f"custom.{n}", what)
        elif read_as is None and not states_no_value(value):  # read as unset, though it states a value: named
            assert names(f"custom.{n}", what)
    for bundle in bundles:
        assert [d for d in iter_diagnostics(bundle.bundle, "bundle") if d.severity == "error"] == []
