"""Capture as the reference reads it: lines it cannot record are damaged, and each gap holds under its condition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gym_contract.capture import Capture, capture_attachment, derive_record, read_capture, unrecordable_field
from gym_contract.cli import main
from gym_contract.collection import merge_capture

POLICY = {"type": "responses_api_models", "name": "policy"}
ROW = {"_ng_task_index": 7, "_ng_rollout_index": 0}


def exchange(call_id: str, /, **fields: Any) -> dict[str, Any]:
    """A raw capture line as the middleware writes it."""
    return {
        "model_call_id": call_id,
        "dialect": "messages",
        "model_ref": POLICY,
        "started_at": 1_786_000_000.0,
        "completed_at": 1_786_000_001.0,
        "latency_ms": 1000.0,
        "latency_ttft_ms": 120.0,
        "status_code": 200,
        "error_category": None,
        "request": {"model": "m"},
        "response": {"id": f"msg_{call_id}"},
        **fields,
    }


def write_capture(directory: Path, *lines: dict[str, Any]) -> Path:
    path = directory / "7-0.capture.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return directory


# Values the reference's record model refuses (CONTRACT 3.2: the line then counts as unreadable), and the
# values it coerces where JSON types are not coerced here ("200", true), which are refused as well.
ILL_TYPED = [
    ("dialect", 3),
    ("dialect", ["chat"]),
    ("model_call_id", 7),
    ("model_ref", "policy"),
    ("model_ref", {"type": "resources_servers", "name": "policy"}),
    ("model_ref", {"type": "responses_api_models"}),
    ("model_ref", {"type": "responses_api_models", "name": 5}),
    ("status_code", "abc"),
    ("status_code", 200.5),
    ("status_code", "200"),
    ("status_code", True),
    ("started_at", "yesterday"),
    ("completed_at", "2"),
    ("latency_ms", {}),
    ("latency_ttft_ms", False),
    ("error_category", 429),
]


@pytest.mark.parametrize(("field", "value"), ILL_TYPED, ids=[f"{f}={v!r}" for f, v in ILL_TYPED])
def test_a_line_with_an_ill_typed_field_is_damaged_and_names_the_field(tmp_path, field, value):
    capture = read_capture(write_capture(tmp_path, exchange("a"), exchange("b", **{field: value})), "7-0")
    assert [record.model_call_id for record in capture.records] == ["a"]
    (damaged,) = capture.damaged_lines
    assert (damaged.code, damaged.line, damaged.path) == ("schema_violation", 2, f"/{field}")
    assert damaged.message.startswith(f"{field} is ")
    assert "cannot be recorded" in damaged.message


def test_a_refused_line_keeps_its_place_in_call_index(tmp_path):
    lines = (exchange("a"), exchange("b", dialect=3), exchange("c"))
    capture = read_capture(write_capture(tmp_path, *lines), "7-0")
    assert [(record.model_call_id, record.call_index) for record in capture.records] == [("a", 0), ("c", 2)]


def test_a_refused_line_is_counted_in_the_unreadable_gap(tmp_path):
    capture = read_capture(write_capture(tmp_path, exchange("a", status_code="abc"), exchange("b")), "7-0")
    attachment = capture_attachment(capture)
    assert [call["model_call_id"] for call in attachment["calls"]] == ["b"]
    assert attachment["gaps"] == [{"code": "model_call_capture_records_unreadable", "detail": "count=1"}]


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"request": 5, "response": "text"}, id="payloads-that-are-not-objects"),
        pytest.param({"request_raw": 5, "response_raw": ["x"]}, id="raw-texts-that-are-not-text"),
        pytest.param({"response": {"id": 5, "usage": "none", "model": 3}}, id="response-fields-read-by-shape"),
        pytest.param({"model_ref": {**POLICY, "region": "eu"}}, id="model-ref-with-extras"),
        pytest.param({"status_code": 200.0}, id="integral-float-status"),
        pytest.param({"model_call_id": None, "dialect": None, "model_ref": None, "status_code": None}, id="nulls"),
        pytest.param({"dialect": "carrier-pigeon", "error_category": ""}, id="any-text"),
    ],
)
def test_fields_the_reference_tolerates_keep_the_call(tmp_path, fields):
    capture = read_capture(write_capture(tmp_path, exchange("a", **fields)), "7-0")
    assert (len(capture.records), capture.damaged_lines) == (1, ())


def test_an_integral_float_status_is_read_as_the_integer():
    assert derive_record(exchange("a", status_code=200.0), 0).status_code == 200


def test_deriving_a_record_stays_total_and_nulls_the_field_read_capture_refuses():
    line = exchange("a", dialect=3)
    assert unrecordable_field(line) == ("dialect", "dialect is a number (3), not a string or null")
    assert derive_record(line, 0).dialect is None


def test_a_number_out_of_range_is_named_as_such(tmp_path):
    (tmp_path / "7-0.capture.jsonl").write_text('{"model_call_id": "a", "started_at": 1e400}\n')
    (damaged,) = read_capture(tmp_path, "7-0").damaged_lines
    assert damaged.message.startswith("started_at is a number out of range (1e400), not a number or null")


def test_a_timestamp_too_large_for_a_float_is_unknown_not_an_error():
    assert derive_record(exchange("a", started_at=10**400), 0).started_at is None


def test_project_counts_a_refused_line_in_the_unreadable_gap(tmp_path, capsys):
    write_capture(tmp_path, exchange("a", model_ref={"type": "responses_api_models"}), exchange("b"))
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(json.dumps(ROW) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["project", str(rollouts), "--capture-dir", str(tmp_path), "-o", str(out)]) == 0
    capsys.readouterr()
    capture = json.loads(out.read_text())["ng_model_call_capture"]
    assert [call["call_index"] for call in capture["calls"]] == [1]
    assert capture["gaps"] == [{"code": "model_call_capture_records_unreadable", "detail": "count=1"}]


def test_validate_reports_a_refused_line_at_its_field(tmp_path, capsys):
    path = write_capture(tmp_path, exchange("a"), exchange("b", status_code="200")) / "7-0.capture.jsonl"
    assert main(["validate", str(path), "--format", "json", "--quiet"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert [(d["code"], d["line"], d["path"]) for d in summary["diagnostics"]] == [
        ("schema_violation", 2, "/status_code")
    ]


# --- the capture gaps (CONTRACT 3.6, 2.6), as the reference's merge writes them -----------------------------


def gaps_of(directory: Path) -> list[dict[str, Any]]:
    return merge_capture(ROW, [directory])["ng_model_call_capture"].get("gaps", [])


def test_a_marker_without_records_is_only_incomplete(tmp_path):
    (tmp_path / "7-0.capture.incomplete").touch()
    assert gaps_of(tmp_path) == [{"code": "model_call_capture_incomplete"}]


def test_a_marker_beside_an_empty_file_is_only_incomplete(tmp_path):
    (tmp_path / "7-0.capture.jsonl").write_text("\n")
    (tmp_path / "7-0.capture.incomplete").touch()
    assert gaps_of(tmp_path) == [{"code": "model_call_capture_incomplete"}]


def test_an_empty_file_without_a_marker_has_no_records(tmp_path):
    (tmp_path / "7-0.capture.jsonl").write_text("\n")
    assert gaps_of(tmp_path) == [{"code": "model_call_capture_no_records"}]


def test_damage_beside_a_marker_gives_both_in_the_reference_order(tmp_path):
    (tmp_path / "7-0.capture.jsonl").write_text("{broken\n")
    (tmp_path / "7-0.capture.incomplete").touch()
    assert gaps_of(tmp_path) == [
        {"code": "model_call_capture_records_unreadable", "detail": "count=1"},
        {"code": "model_call_capture_incomplete"},
    ]


def test_a_store_that_cannot_be_read_is_only_unreadable_and_attaches_no_call():
    record = derive_record(exchange("a"), 0)
    capture = Capture("7-0", records=(record,), incomplete=True, found=True, unreadable="I/O error")
    attachment = capture_attachment(capture)
    assert (attachment["calls"], attachment["gaps"]) == ([], [{"code": "model_call_capture_unreadable"}])
    assert attachment["metrics"]["num_calls"] == 0


def test_project_writes_only_the_incomplete_gap_for_a_marker_without_records(tmp_path, capsys):
    (tmp_path / "7-0.capture.incomplete").touch()
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(json.dumps(ROW) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["project", str(rollouts), "--capture-dir", str(tmp_path), "-o", str(out)]) == 0
    capsys.readouterr()
    projected = json.loads(out.read_text())
    assert projected["ng_model_call_capture"]["gaps"] == [{"code": "model_call_capture_incomplete"}]
    gap_codes = [gap["code"] for gap in projected["ng_trajectory"]["gaps"]]
    assert "model_call_capture_no_records" not in gap_codes
