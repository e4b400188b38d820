"""The package's one limit: within it every command reads, processes and writes; beyond it, a damaged line."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from gym_contract import check_files, read_capture
from gym_contract._json_writing import dumps
from gym_contract._limits import MAX_DEPTH, max_depth
from gym_contract.cli import main
from gym_contract.reading._json_parsing import loads
from gym_contract.validation import check_line

NOW = 1_786_100_000.0
ROW = '{"_ng_task_index":7,"_ng_rollout_index":0,"ng_agent_observations":{"source":"pi","records":[],"gaps":[]}}'


def exchange(request: str) -> str:
    return (
        '{"model_call_id":"mc0","dialect":"responses","model_ref":{"type":"responses_api_models","name":"policy"},'
        '"started_at":1786000000.0,"completed_at":1786000000.5,"latency_ms":500.0,"status_code":200,'
        f'"request":{request},"response":{{"id":"r0","output":[]}}}}'
    )


def project_and_validate(tmp_path: Path, capture_line: str) -> tuple[int, list[bytes], str]:
    """`gym-contract project` on the example row with this capture line, then `validate` on what it wrote."""
    (tmp_path / "capture").mkdir()
    (tmp_path / "capture" / "7-0.capture.jsonl").write_text(capture_line + "\n")
    (tmp_path / "rollouts.jsonl").write_text(ROW + "\n")
    out = tmp_path / "out.jsonl"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.TextIOWrapper(io.BytesIO())):
        arguments = ["project", str(tmp_path / "rollouts.jsonl"), "--capture-dir", str(tmp_path / "capture")]
        assert main([*arguments, "-o", str(out)]) in (0, 1)
        status = main(["validate", str(out), "--quiet"])
    return status, out.read_bytes().splitlines(), err.getvalue()


@pytest.mark.parametrize("number", ["18446744073709551616", "-9223372036854775809", "1" * 400, "1e400", "9" * 5000])
def test_a_number_of_any_size_in_a_payload_is_projected_exactly_and_validates(tmp_path, number):
    status, (line,), _ = project_and_validate(tmp_path, exchange(f'{{"seed":{number}}}'))
    assert status == 0
    assert f'"seed":{number}'.encode() in line  # once in the trajectory, the capture's copy being dropped


@pytest.mark.parametrize("depth", [300, 1000])
def test_a_payload_nested_deeper_than_orjson_writes_is_projected_and_validates(tmp_path, depth):
    request = '{"a":' * depth + "1" + "}" * depth  # a capture keeps a request that is an object
    status, (line,), _ = project_and_validate(tmp_path, exchange(request))
    assert status == 0
    (call,) = loads(line)["ng_trajectory"]["model_calls"]
    assert dumps(call["request"]) == request.encode()


def test_a_capture_line_too_deep_for_a_rollout_record_is_a_damaged_capture_line(tmp_path):
    depth = max_depth("capture_exchange")  # the line's own object is one level
    fits = exchange("[" * (depth - 1) + "]" * (depth - 1))
    too_deep = exchange("[" * depth + "]" * depth)
    (tmp_path / "7-0.capture.jsonl").write_text(fits + "\n" + too_deep + "\n")
    capture = read_capture(tmp_path, "7-0")
    assert [record.call_index for record in capture.records] == [0]
    (damaged,) = capture.damaged_lines
    assert (damaged.code, damaged.line) == ("json_invalid", 2)


KEY_AND_START = {
    "rollout": ("responses_create_params", '"_ng_task_index":1,'),
    "bundle": ("records", '"source":"pi","gaps":[],'),
    "capture_exchange": ("request", '"model_call_id":"a",'),
}


@pytest.mark.parametrize(
    ("kind", "room"), [("rollout", MAX_DEPTH), ("bundle", MAX_DEPTH - 1), ("capture_exchange", MAX_DEPTH - 3)]
)
def test_every_path_holds_a_record_to_the_room_its_kind_has_in_a_rollout_record(kind, room):
    def line(levels: int) -> bytes:
        inner = "[" * (levels - 2) + "]" * (levels - 2)  # the record and its key's array take two levels
        key, start = KEY_AND_START[kind]
        return f'{{{start}"{key}":[{inner}]}}'.encode()

    for fast in (True, False):
        assert "json_invalid" not in [d.code for d in check_line(line(room), kind, now=NOW, fast=fast).diagnostics]
        assert [d.code for d in check_line(line(room + 1), kind, now=NOW, fast=fast).diagnostics] == ["json_invalid"]


def test_a_file_with_a_line_beyond_the_limit_reports_it_and_checks_the_rest(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(ROW + "\n" + '{"_ng_task_index":1,"x":' + "[" * 2000 + "]" * 2000 + "}\n" + ROW + "\n")
    report = check_files([str(path)], now=NOW)
    assert (report.records, report.damaged_lines, report.by_code["json_invalid"]) == (2, 1, 1)
