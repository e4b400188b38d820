"""No input crashes validation, the capture reader, the join or the projection; every line of a file is counted."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from gym_contract import (
    KINDS,
    ContractError,
    attach_trajectory,
    check_files,
    collect,
    derive_record,
    detect_kind,
    is_valid,
    iter_diagnostics,
    join,
    project,
    read_capture,
    rollout_id_from_run_body,
    validate,
)
from gym_contract._json_writing import dumps
from gym_contract.cli import main
from gym_contract.diagnostics import Diagnostic
from gym_contract.models import AgentObservationBundle
from gym_contract.projection import ContradictoryEvidenceError, build_trajectory
from gym_contract.reading._json_parsing import loads
from gym_contract.validation import check_line, read_record
from tests.strategies import COMPRESSION_MAGIC, hostile_records, mutated_records, nested

NOW = 1_786_100_000.0


def _text(value: Any) -> bytes:
    """A value as a JSON line, compact or spaced; None when JSON text cannot hold it (a lone surrogate)."""
    try:
        return dumps(value)
    except TypeError:
        return b""


@st.composite
def hostile_lines(draw: st.DrawFn) -> bytes:
    """One line of a file: a broken record, any JSON value, its bytes damaged, or no JSON at all."""
    value = draw(hostile_records())
    line = _text(value) or b"{}"
    how = draw(st.sampled_from(["as is", "as is", "spaced", "byte", "cut", "noise", "deep", "digits", "repeat"]))
    if how == "spaced":  # whitespace between every token, as a pretty-printer leaves it
        line = dumps(value, indent=True).replace(b"\n", b" ") if line != b"{}" else line
    elif how == "byte" and line:
        at = draw(st.integers(0, len(line) - 1))
        line = line[:at] + bytes([draw(st.integers(0, 255))]) + line[at + 1 :]
    elif how == "cut":
        line = line[: draw(st.integers(0, len(line)))]
    elif how == "noise":
        line = draw(st.binary(max_size=40))
    elif how == "deep":
        line = b'{"source":"pi","records":' + b"[" * draw(st.sampled_from([900, 1030, 5000])) + b"]"
    elif how == "digits":
        line = b'{"task_id":"7","rollout_id":"7-0","model_calls":[{"request":' + b"9" * 5000 + b"}]}"
    elif how == "repeat":
        line = b'{"source":"pi","source":"pi","records":[]}'
    return line.replace(b"\n", b" ").replace(b"\r", b" ")


# ------------------------------------------------------------------------------------------ records


@given(hostile_records(), st.sampled_from([None, *KINDS]))
def test_validating_any_value_as_any_kind_gives_diagnostics_never_an_exception(value, kind):
    found = list(iter_diagnostics(value, kind, now=NOW))
    assert is_valid(value, kind, now=NOW) == all(d.severity != "error" for d in found)
    if is_valid(value, kind, now=NOW):
        validate(value, kind, now=NOW)
    else:
        with pytest.raises(ContractError) as raised:
            validate(value, kind, now=NOW)
        assert list(raised.value) == found
    assert all(isinstance(d.message, str) and isinstance(d.path, str) for d in found)


@given(hostile_records())
def test_telling_the_kind_of_any_value_never_raises(value):
    assert detect_kind(value) in (None, *KINDS)


@given(hostile_lines())
def test_any_line_is_a_record_or_damage_and_the_fast_and_precise_paths_agree(line):
    fast, precise = check_line(line, now=NOW), check_line(line, now=NOW, fast=False)
    assert (fast.kind, fast.diagnostics) == (precise.kind, precise.diagnostics)


# ------------------------------------------------------------------------------------------ files


# A file of N lines accounts for all N: stated once, in tests/test_laws.py.


def _run(lines: list[bytes], *arguments: str) -> tuple[int, str, str, list[bytes]]:
    """A command run on a file of ``lines``: its status, what it printed, and the lines of its -o file."""
    with tempfile.TemporaryDirectory() as directory:
        path, written = Path(directory, "input.jsonl"), Path(directory, "out.jsonl")
        path.write_bytes(b"\n".join(lines) + b"\n")
        out, err = io.TextIOWrapper(io.BytesIO()), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(
                [argument.replace("{out}", str(written)) for argument in (arguments[0], str(path), *arguments[1:])]
            )
        out.seek(0)
        return status, out.read(), err.getvalue(), written.read_bytes().splitlines() if written.exists() else []


@given(st.lists(hostile_lines(), min_size=1, max_size=4))
def test_the_validate_command_reports_on_any_file_without_a_traceback(lines):
    status, printed, complaints, _ = _run(lines, "validate", "--format", "json", "--quiet")
    assert status in (0, 1)
    report = json.loads(printed)
    if lines[0].startswith(COMPRESSION_MAGIC):
        # Found by Hypothesis: read as the compressed stream its first bytes say it is, the file's lines
        # are the stream's; they add up all the same.
        assert report["lines"] == report["blank_lines"] + report["damaged_lines"] + report["records"]
    else:
        assert report["lines"] == len(lines)
    assert "Traceback" not in complaints


# ------------------------------------------------------------------------------------------ capture and join


@given(st.lists(hostile_lines(), max_size=5))
def test_reading_a_capture_file_of_any_lines_keeps_every_position(lines):
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "7-0.capture.jsonl").write_bytes(b"\n".join(lines) + b"\n")
        capture = read_capture(directory, "7-0")
    counted = [line for line in lines if line.strip()]
    assert len(capture.records) + len(capture.damaged_lines) == len(counted)
    assert [record.call_index for record in capture.records] == sorted(r.call_index for r in capture.records)
    assert all(record.call_index < len(counted) for record in capture.records)


@given(hostile_records())
def test_deriving_a_captured_call_from_any_value_never_raises(value):
    assert derive_record(value, 3).call_index == 3


@given(mutated_records(), st.lists(hostile_records(), max_size=4))
def test_joining_any_valid_bundle_to_any_captured_calls_never_raises(bundle, exchanges):
    try:
        parsed = AgentObservationBundle.model_validate(bundle.get("ng_agent_observations", bundle))
    except ValidationError:
        return
    calls = [derive_record(exchange, index) for index, exchange in enumerate(exchanges)]
    joined = join(parsed, calls)
    assert join(joined, calls) == joined


# ------------------------------------------------------------------------------------------ projection


@given(hostile_records(), hostile_records())
def test_projecting_any_row_and_result_gives_a_record_never_an_exception(row, result):
    if not isinstance(row, dict) or not isinstance(result, dict):
        return
    record = project(row, result)
    assert isinstance(record.rollout_id, str)
    attached = attach_trajectory(row, result)
    assert isinstance(attached, dict)


@given(hostile_records(), hostile_records())
def test_building_a_trajectory_raises_only_what_it_documents(row, result):
    if not isinstance(row, dict) or not isinstance(result, dict):
        return
    with contextlib.suppress(ContradictoryEvidenceError, KeyError, ValueError):
        build_trajectory(row, result)


@given(hostile_records(), st.lists(hostile_lines(), max_size=3))
def test_collecting_any_record_with_any_capture_file_never_raises(record, lines):
    if not isinstance(record, dict):
        return
    row = {"_ng_task_index": 7, "_ng_rollout_index": 0, **record}
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "7-0.capture.jsonl").write_bytes(b"\n".join(lines) + b"\n")
        collected = collect(row, [directory])
    if _text(row):  # what can be written in, can be written out
        assert isinstance(dumps(collected), bytes)


@given(hostile_records())
def test_a_rollout_id_comes_from_any_body_or_a_value_error(body):
    with contextlib.suppress(ValueError):
        assert rollout_id_from_run_body(body) is None or isinstance(rollout_id_from_run_body(body), str)


@given(st.lists(hostile_lines(), min_size=1, max_size=3))
def test_the_project_command_reads_any_file_without_a_traceback(lines):
    status, printed, complaints, written = _run(lines, "project", "-o", "{out}")
    assert "Traceback" not in complaints
    if lines[0].startswith(COMPRESSION_MAGIC):
        return  # read as the compressed stream its first bytes say it is: its lines are the stream's
    readable = [line for line in lines if line.strip() and not isinstance(read_record(line, "rollout"), Diagnostic)]
    # A record that is read but cannot be projected (no identity, contradicting evidence) fails the run too.
    failed_projections = sum(json.loads(printed)["projection_failures"].values())
    every_line_read = len(readable) == len([line for line in lines if line.strip()])
    assert (status == 0) == (every_line_read and failed_projections == 0)
    assert len(written) == len(readable)


def test_a_record_read_but_not_projected_fails_the_project_command():
    status, printed, complaints, written = _run([b'{"ng_agent_observations":null}'], "project", "-o", "{out}")
    assert status == 1
    assert json.loads(printed)["projection_failures"] == {"KeyError": 1}
    assert "Traceback" not in complaints
    assert len(written) == 1


# ------------------------------------------------------------------------------------------ pinned cases


@pytest.mark.parametrize(
    "record",
    [
        {"source": "pi", "records": [{"kind": []}]},
        {"source": "pi", "records": [{"kind": {"a": 1}, "invocation_id": "x"}]},
        {"ng_agent_observations": {"source": "pi", "records": [{"kind": "tool_call", "invocation_id": {"a": 1}}]}},
        {"harness": "claude_code", "response_status": "failed", "failure_kind": []},
        {"source": "pi", "records": [], "gaps": [{"code": 10**5000}]},
        {"task_id": "7", "rollout_id": "7-0", "model_calls": [{"model_call_id": 10**5000}]},
        {"task_id": "7", "rollout_id": "7-0", "turns": [{"invocation_id": [], "turn_no": {}}]},
        {"source": "pi", "records": nested([], 5000)},
    ],
)
def test_the_crashes_found_by_fuzzing_are_diagnostics(record):
    found = list(iter_diagnostics(record, now=NOW))
    assert any(d.severity == "error" for d in found)


@pytest.mark.parametrize("key", ["_ng_rollout_id", "_ng_task_index", "_ng_attempt_index"])
def test_an_id_nested_past_the_interpreters_depth_is_a_value_error(key):
    # Found by the thorough run: the error message once wrote the value out in full, recursively.
    body = {"_ng_task_index": 7, "_ng_rollout_index": 0, key: nested("x", 5000)}
    with pytest.raises(ValueError, match=r"not a valid rollout id|cannot make an id|is not an integer"):
        rollout_id_from_run_body(body)


@pytest.mark.parametrize("depth", [984, 1024])
@pytest.mark.parametrize("rollout_index", [{}, {"_ng_rollout_index": 0}])
def test_an_index_nested_as_deep_as_the_readers_allow_is_no_identity_not_a_recursion_error(depth, rollout_index):
    # Found by the thorough run: with one index missing, the rollout id was written from the other with
    # str(), which recursed once per level of its nesting.
    row = {"task_id": "7", "_ng_task_index": nested(None, depth), **rollout_index}
    result = {"ng_agent_observations": {"source": "pi", "records": []}}
    with pytest.raises((KeyError, ValueError)):
        build_trajectory(row, result)
    assert [gap.code for gap in project(row, result).gaps] == ["trajectory_projection_failed"]


@pytest.mark.parametrize("task_id", [nested("x", 5000), ["a"], {"a": 1}])
def test_a_task_id_that_is_no_id_gives_a_projection_gap_not_an_exception(task_id):
    row = {"_ng_task_index": 7, "_ng_rollout_index": 0, "task_id": task_id}
    result = {"ng_agent_observations": {"source": "pi", "records": []}}
    with pytest.raises(ValueError, match="cannot make an id"):
        build_trajectory(row, result)
    record = project(row, result)
    assert record.task_id == "unknown"
    assert [gap.code for gap in record.gaps] == ["trajectory_projection_failed"]
    attached = attach_trajectory(row, result)
    gaps = [gap["code"] for gap in attached["ng_agent_observations"]["gaps"]]
    assert "ng_trajectory" not in attached
    assert gaps == ["trajectory_projection_failed"]


@pytest.mark.parametrize(
    ("content", "lines"),
    [
        (b"\x1f\x8b\n", 1),  # found by the thorough run: gzip's magic bytes and nothing after them
        (b"\x1f\x8b{}\n{}\n{}\n", 1),  # the stream breaks at its header: its first line onwards is lost
        (b'\x1f\x8b\n{"dialect":"messages"}\n', 1),  # found by Hypothesis through the command: the same
        (gzip.compress(b'{"source":"pi","records":[]}\n' * 3, mtime=0)[:-12], None),  # cut inside the deflate data
    ],
)
def test_a_damaged_stream_counts_the_line_where_it_broke(tmp_path: Path, content: bytes, lines: int | None):
    path = tmp_path / "misnamed.jsonl"
    path.write_bytes(content)
    report = check_files([str(path)], now=NOW)
    expected = lines if lines is not None else report.records + 1  # the records read before the break, then it
    assert (report.lines, report.damaged_lines, report.by_code["input_truncated"]) == (expected, 1, 1)
    assert report.blank_lines + report.damaged_lines + report.records == report.lines


FUZZED_LINES = [
    b'{"source":"pi","records":[{"kind":[]}]}',
    b'{"ng_agent_observations":{"source":"pi","records":[{"kind":"tool_call","invocation_id":{"a":1}}]}}',
    b'{"harness":"claude_code","response_status":"failed","failure_kind":[]}',
    b'{"source":"pi","records":[],"gaps":[{"code":' + b"7" * 5000 + b"}]}",
    b'{"task_id":"7","rollout_id":"7-0","model_calls":[{"model_call_id":' + b"7" * 5000 + b"}]}",
]


def test_a_file_of_the_lines_that_crashed_is_reported_line_by_line(tmp_path: Path):
    path = tmp_path / "fuzzed.jsonl"
    path.write_bytes(b"\n".join(FUZZED_LINES) + b"\n")
    out, err = io.TextIOWrapper(io.BytesIO()), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["validate", str(path), "--format", "json"])
    out.seek(0)
    report = json.loads(out.read())
    assert (status, report["records"], report["invalid_records"]) == (1, 5, 5)
    assert sorted({d["line"] for d in report["diagnostics"]}) == [1, 2, 3, 4, 5]
    assert err.getvalue() == ""


def _deep_line_with_a_long_number(padding: int) -> bytes:
    """A record whose 4,302-digit number (too long for Python's int) sits 240 levels deep, after ``padding`` bytes."""
    chain = '{"content":' * 240 + "[" + "1" * 4302 + ',2.9354626292484364e+16,"x",""]' + "}" * 240
    return ('{"pad":"' + "x" * padding + '","v":[' + chain + "]}").encode()


def test_a_long_number_deep_in_a_record_is_read_and_written_without_harming_memory(tmp_path: Path):
    # Found by the thorough run: orjson 3.13, given such a number as a Fragment, wrote the closing brackets
    # after it past the end of its buffer, and the process aborted (SIGABRT) in validate and project. The
    # fault depends on where the buffer ends, so the number is placed at every fifth byte of 4 KiB; the
    # commands run in their own processes, since a harmed heap ends the whole process.
    rollouts = tmp_path / "deep-numbers.jsonl"
    rollouts.write_bytes(b"".join(_deep_line_with_a_long_number(padding) + b"\n" for padding in range(0, 4200, 5)))
    printed = {}
    for command in ("validate", "project"):
        arguments = ["--format", "json"] if command == "validate" else ["-o", str(tmp_path / "out.jsonl")]
        result = subprocess.run(
            [sys.executable, "-m", "gym_contract", command, *arguments, str(rollouts)], capture_output=True, text=True
        )
        assert result.returncode in (0, 1), (command, result.returncode, result.stderr[-2000:])
        assert "Traceback" not in result.stderr
        printed[command] = json.loads(result.stdout)
    assert (printed["validate"]["records"], printed["validate"]["damaged_lines"]) == (840, 0)
    for padding in (0, 893, 4195):
        line = _deep_line_with_a_long_number(padding)
        assert dumps(loads(line)) == line
