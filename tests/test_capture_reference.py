"""Capture as the reference reads it: each capture gap holds under the reference's condition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gym_contract.capture import Capture, capture_attachment, derive_record
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
