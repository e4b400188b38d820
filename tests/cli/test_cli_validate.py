"""`gym-contract validate` on good and damaged inputs, run as a user runs it."""

from __future__ import annotations

import ast
import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard

from gym_contract import schemas
from gym_contract.validation import _checking, _streamed
from tests.support import REPO

TRAJECTORY = schemas.get("trajectory")["examples"][0]
GOOD = json.dumps(TRAJECTORY).encode()
BAD_TURN = json.dumps({**TRAJECTORY, "turns": [{**TRAJECTORY["turns"][0], "task_id": "8"}]}).encode()


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "validate", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in result.stderr + result.stdout
    return result


def report(path: Path, *args: str) -> tuple[int, dict]:
    result = run(str(path), "--format", "json", *args)
    return result.returncode, json.loads(result.stdout)


def lines_file(tmp_path: Path, *lines: bytes, name: str = "rollouts.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def codes_at(summary: dict) -> list[tuple[str, int]]:
    return [(d["code"], d["line"]) for d in summary["diagnostics"]]


def test_a_clean_file_passes(tmp_path):
    code, summary = report(lines_file(tmp_path, GOOD, GOOD))
    assert code == 0
    assert summary["verdict"] == "pass"
    assert summary["records"] == summary["valid_records"] == 2
    assert summary["records_by_kind"] == {"trajectory": 2}
    assert summary["tokens"]["prompt_tokens"] == {"sum": 180, "unknown": 0}
    assert summary["gaps_by_code"] == {"resolution_unavailable": 2}


def test_a_contract_error_fails_with_its_location(tmp_path):
    code, summary = report(lines_file(tmp_path, GOOD, BAD_TURN, GOOD))
    assert code == 1
    assert codes_at(summary) == [("turn_identity_mismatch", 2)]
    (diagnostic,) = summary["diagnostics"]
    assert diagnostic["path"] == "/turns/0/task_id"
    assert diagnostic["record"] == 1
    assert diagnostic["docs"].endswith("#turn_identity_mismatch")
    assert summary["valid_records"] == 2


def test_text_output_groups_by_record_and_summarises(tmp_path):
    result = run(str(lines_file(tmp_path, GOOD, BAD_TURN)))
    assert result.returncode == 1
    assert "rollouts.jsonl:2 (record 1)" in result.stdout
    assert "error turn_identity_mismatch at /turns/0/task_id" in result.stdout
    assert "FAIL (fail on error)" in result.stdout
    assert "resolution_unavailable" in result.stdout


def test_fail_on_warning(tmp_path):
    with_warning = json.dumps({**TRAJECTORY, "gaps": [{"code": "made_up"}]}).encode()
    path = lines_file(tmp_path, with_warning)
    assert run(str(path), "--quiet").returncode == 0
    assert run(str(path), "--quiet", "--fail-on", "warning").returncode == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(b"\xef\xbb\xbf" + GOOD + b"\n" + GOOD + b"\n", [], id="bom"),
        pytest.param(GOOD + b"\r\n" + GOOD + b"\r\n", [], id="crlf"),
        pytest.param(b"\n\n" + GOOD + b"\n   \n" + BAD_TURN + b"\n", [("turn_identity_mismatch", 5)], id="blank-lines"),
        pytest.param(GOOD + b"\n" + b'{"task_id": "\xff"}\n' + GOOD + b"\n", [("utf8_invalid", 2)], id="utf8"),
        pytest.param(GOOD + b"\n[1, 2]\n" + GOOD + b"\n", [("record_not_object", 2)], id="not-object"),
        pytest.param(GOOD + b"\n" + GOOD[:100], [("json_invalid", 2)], id="truncated-last-line"),
        pytest.param(b'{"task_id": NaN}\n' + GOOD + b"\n", [("json_invalid", 1)], id="nan"),
        pytest.param(GOOD + b'\n{"a": Infinity}\n', [("json_invalid", 2)], id="infinity"),
        pytest.param(
            b'{"task_id": "7", "task_id": "8", "rollout_id": "7-0"}\n' + GOOD, [("json_duplicate_key", 1)], id="dup"
        ),
        pytest.param(b"[" * 100_000 + b"]" * 100_000 + b"\n" + GOOD + b"\n", [("json_invalid", 1)], id="deep"),
    ],
)
def test_damaged_lines_are_diagnostics_and_the_rest_is_checked(tmp_path, content, expected):
    path = tmp_path / "input.jsonl"
    path.write_bytes(content)
    code, summary = report(path)
    assert codes_at(summary) == expected
    assert code == (1 if expected else 0)
    assert summary["damaged_lines"] == sum(1 for c, _ in expected if c != "turn_identity_mismatch")
    assert summary["valid_records"] >= 1


def test_a_line_of_50_mb_is_checked(tmp_path):
    big = {**TRAJECTORY, "tool_calls": [{**TRAJECTORY["tool_calls"][0], "output": "x" * 50_000_000}]}
    path = lines_file(tmp_path, json.dumps(big).encode(), BAD_TURN)
    code, summary = report(path)
    assert code == 1
    assert summary["records"] == 2
    assert codes_at(summary) == [("turn_identity_mismatch", 2)]


def test_a_line_over_the_limit_is_reported_and_skipped(tmp_path):
    path = lines_file(tmp_path, GOOD, b'{"x": "' + b"y" * 5000 + b'"}', GOOD)
    code, summary = report(path, "--max-line-bytes", "4096")
    assert code == 1
    assert codes_at(summary) == [("line_too_long", 2)]
    assert summary["records"] == 2


def test_an_empty_file_checks_nothing_and_fails_unless_allowed(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    code, summary = report(path)
    assert code == 1
    assert summary["records"] == summary["lines"] == 0
    assert summary["diagnostics_by_code"] == {"no_records": 1}
    code, summary = report(path, "--allow-empty")
    assert (code, summary["verdict"]) == (0, "pass")


def test_a_truncated_gzip_stream_keeps_what_came_before(tmp_path):
    whole = gzip.compress(b"\n".join([GOOD] * 50) + b"\n")
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) * 3 // 4])
    code, summary = report(path)
    assert code == 1
    assert summary["diagnostics_by_code"] == {"input_truncated": 1}
    assert summary["records"] > 0


def test_compressed_and_plain_inputs_agree(tmp_path):
    plain = lines_file(tmp_path, GOOD, BAD_TURN)
    packed = tmp_path / "rollouts.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert codes_at(report(plain)[1]) == codes_at(report(packed)[1])


def test_stdin(tmp_path):
    result = run("-", "--format", "json", stdin=GOOD + b"\n" + BAD_TURN + b"\n")
    summary = json.loads(result.stdout)
    assert result.returncode == 1
    assert summary["inputs"] == ["<stdin>"]
    assert codes_at(summary) == [("turn_identity_mismatch", 2)]


def test_a_json_document(tmp_path):
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(TRAJECTORY, indent=2))
    code, summary = report(path)
    assert code == 0
    assert summary["records_by_kind"] == {"trajectory": 1}


def test_an_input_that_cannot_be_opened_is_a_one_line_error(tmp_path):
    result = run(str(tmp_path / "missing.jsonl"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "missing.jsonl" in result.stderr


def test_usage_errors_exit_2(tmp_path):
    assert run(str(lines_file(tmp_path, GOOD)), "--kind", "turn").returncode == 2
    assert run(str(lines_file(tmp_path, GOOD)), "--jobs", "0").returncode == 2
    wrong = run(str(lines_file(tmp_path, GOOD)), "--jobs", "all")
    assert wrong.returncode == 2
    assert "argument --jobs: expected a number of worker processes from 1 to 1,024, or auto, got 'all'" in wrong.stderr


def test_jobs_auto_uses_every_core_and_reports_the_same(tmp_path):
    path = lines_file(tmp_path, *([GOOD, BAD_TURN] * 400))
    _, auto = report(path, "--jobs", "auto")
    _, one = report(path)
    assert _without_timing(auto) == _without_timing(one)


def test_counts_stay_complete_when_the_list_is_capped(tmp_path):
    path = lines_file(tmp_path, *([BAD_TURN] * 30))
    code, summary = report(path, "--max-diagnostics", "5")
    assert code == 1
    assert len(summary["diagnostics"]) == 5
    assert summary["diagnostics_truncated"] is True
    assert summary["diagnostics_by_code"] == {"turn_identity_mismatch": 30}
    assert summary["invalid_records"] == 30


def test_kind_can_be_forced(tmp_path):
    code, summary = report(lines_file(tmp_path, GOOD), "--kind", "bundle")
    assert code == 1
    assert summary["records_by_kind"] == {"bundle": 1}


def test_parallel_jobs_give_the_same_report(tmp_path):
    lines = [GOOD if i % 7 else BAD_TURN for i in range(1, 800)]
    lines[456] = b"{broken"
    path = lines_file(tmp_path, *lines)
    assert path.stat().st_size > 1024 * 1024  # large enough to be shared between workers
    _, one = report(path)
    _, two = report(path, "--jobs", "2")
    for key in ("records", "lines", "valid_records", "invalid_records", "damaged_lines", "diagnostics_by_code"):
        assert one[key] == two[key], key
    assert codes_at(one) == codes_at(two)


def _without_timing(summary: dict) -> dict:
    return {key: value for key, value in summary.items() if key not in ("seconds", "mb_per_s")}


@pytest.mark.parametrize(
    "start", [b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"\xef\xbb\xbf"], ids=["gzip magic", "zstd magic", "byte order mark"]
)
def test_a_share_that_starts_with_a_damaged_line_reads_it_as_the_middle_of_the_file_it_is(tmp_path, monkeypatch, start):
    from gym_contract.validation import _checking as checking

    monkeypatch.setattr(checking, "_PARALLEL_MIN_BYTES", 0)
    path = lines_file(tmp_path, *[GOOD] * 8, start + GOOD, *[GOOD] * 6)
    # The second share starts with the line that starts with these bytes, as the first line of a file may.
    assert checking._shares(str(path), path.stat().st_size, 2)[1][0] == 8 * (len(GOOD) + 1)
    one = checking.check_files([str(path)], now=1_790_000_000.0)
    two = checking.check_files([str(path)], jobs=2, now=1_790_000_000.0)
    assert (one.records, one.damaged_lines) == (14, 1)
    assert _without_timing(two.to_dict()) == _without_timing(one.to_dict())


def test_a_byte_order_mark_that_starts_a_file_cut_into_shares_is_skipped_as_with_one_job(tmp_path, monkeypatch):
    monkeypatch.setattr(_checking, "_PARALLEL_MIN_BYTES", 0)
    path = lines_file(tmp_path, b"\xef\xbb\xbf" + GOOD, *[GOOD] * 9)
    assert len(_checking._shares(str(path), path.stat().st_size, 2)) == 2
    one = _checking.check_files([str(path)], now=1_790_000_000.0)
    two = _checking.check_files([str(path)], jobs=2, now=1_790_000_000.0)
    assert (one.records, one.damaged_lines) == (10, 0)
    assert _without_timing(two.to_dict()) == _without_timing(one.to_dict())


def test_jobs_spread_several_inputs_and_the_report_is_the_one_of_a_single_job(tmp_path):
    big = [GOOD if i % 7 else BAD_TURN for i in range(1, 800)]
    big[321] = b"{broken"
    inputs = [
        lines_file(tmp_path, *big, name="big.jsonl"),  # shared between workers
        tmp_path / "part-1.jsonl.gz",
        tmp_path / "part-2.jsonl.zst",
        lines_file(tmp_path, GOOD, b"[1]", name="small.jsonl"),
        tmp_path / "one.json",
    ]
    inputs[1].write_bytes(gzip.compress(b"\n".join([BAD_TURN, GOOD, b"{"]) + b"\n"))
    inputs[2].write_bytes(zstandard.ZstdCompressor().compress(b"\n".join([GOOD, BAD_TURN]) + b"\n"))
    inputs[4].write_bytes(b"[" + GOOD + b"," + BAD_TURN + b"]")
    names = [str(path) for path in inputs]
    one = run(*names, "--format", "json", "--max-diagnostics", "100000")
    for jobs in ("2", "3", "8"):
        many = run(*names, "--format", "json", "--max-diagnostics", "100000", "--jobs", jobs)
        assert many.returncode == one.returncode == 1
        assert _without_timing(json.loads(many.stdout)) == _without_timing(json.loads(one.stdout))
    sources = [d["source"] for d in json.loads(one.stdout)["diagnostics"]]
    assert sources == sorted(sources, key=names.index)  # in input order
    assert set(sources) == set(names)


def test_stdin_is_read_by_the_parent_while_workers_check_the_files(tmp_path):
    part = tmp_path / "part.jsonl.gz"
    part.write_bytes(gzip.compress(b"\n".join([BAD_TURN, GOOD]) + b"\n"))
    other = lines_file(tmp_path, GOOD, BAD_TURN, name="other.jsonl")
    args = (str(part), "-", str(other), "--format", "json")
    one = run(*args, stdin=GOOD + b"\n" + BAD_TURN + b"\n")
    two = run(*args, "--jobs", "2", stdin=GOOD + b"\n" + BAD_TURN + b"\n")
    assert _without_timing(json.loads(two.stdout)) == _without_timing(json.loads(one.stdout))
    assert [d["source"] for d in json.loads(two.stdout)["diagnostics"]] == [str(part), "<stdin>", str(other)]


def test_an_input_that_cannot_be_opened_stops_a_parallel_run_with_status_2(tmp_path):
    good = [lines_file(tmp_path, GOOD, name=f"part-{i}.jsonl") for i in range(3)]
    result = run(str(good[0]), str(tmp_path / "missing.jsonl"), str(good[1]), str(good[2]), "--jobs", "2")
    assert result.returncode == 2
    assert "missing.jsonl" in result.stderr
    assert "No such file or directory" in result.stderr


def test_the_shipped_examples():
    clean = run(str(REPO / "examples" / "rollouts.jsonl"), "--format", "json")
    assert clean.returncode == 0
    assert json.loads(clean.stdout)["records_by_kind"] == {"rollout": 6}
    damaged = run(str(REPO / "examples" / "damaged_rollouts.jsonl"), "--format", "json")
    assert damaged.returncode == 1
    summary = json.loads(damaged.stdout)
    assert [(d["line"], d["code"], d["path"]) for d in summary["diagnostics"]] == [
        (1, "schema_violation", "/ng_agent_observations/records/1"),
        (3, "schema_violation", "/ng_trajectory/tool_calls/0/duration_ms"),
        (3, "duration_mismatch", "/ng_trajectory/tool_calls/0/duration_ms"),
    ]


def _damaged_stream() -> bytes:
    lines = [GOOD if i % 5 else BAD_TURN for i in range(1, 120)]
    lines[17] = b"{broken"
    lines[40] = b""
    lines[77] = b"[1, 2]"
    return b"\n".join(lines) + b"\n" + GOOD[:30]  # a last line cut short


@pytest.mark.parametrize("compress", ["zstd", "gzip", "gzip cut short"])
def test_a_single_compressed_input_is_read_once_and_checked_in_batches_by_the_workers(tmp_path, monkeypatch, compress):
    from gym_contract.validation import _checking as checking

    data = _damaged_stream()
    if compress == "zstd":
        packed = zstandard.ZstdCompressor().compress(data)
    else:
        packed = gzip.compress(data)
        packed = packed[: len(packed) * 2 // 3] if compress == "gzip cut short" else packed
    path = tmp_path / "rollouts.jsonl.gz"
    path.write_bytes(packed)
    monkeypatch.setattr(_streamed, "_BATCH_BYTES", 2_000)  # many batches out of a small input
    seen: list[tuple[int, int | None]] = []
    one = checking.check_files([str(path)], now=1_790_000_000.0)
    many = checking.check_files([str(path)], jobs=2, now=1_790_000_000.0, progress=lambda *at: seen.append(at))
    assert _without_timing(many.to_dict()) == _without_timing(one.to_dict())
    assert one.damaged_lines >= 2
    assert seen
    assert seen[-1] == (path.stat().st_size, path.stat().st_size)


def test_a_long_line_cut_short_by_a_truncated_stream_gives_lines_that_add_up_with_any_jobs(tmp_path):
    """The last line read is over the limit and cut short: one damaged line, not two, with one job or several."""
    packed = gzip.compress((REPO / "examples" / "rollouts.jsonl").read_bytes())
    path = tmp_path / "rollouts.jsonl.gz"
    path.write_bytes(packed[: len(packed) // 2])
    reports = [_checking.check_files([str(path)], jobs=jobs, max_line_bytes=2_000) for jobs in (1, 2)]
    assert _without_timing(reports[1].to_dict()) == _without_timing(reports[0].to_dict())
    one = reports[0]
    assert one.diagnostics[-1].code == "input_truncated"
    assert one.lines == one.records + one.blank_lines + one.damaged_lines
    assert one.blank_lines >= 0


def test_a_batch_measured_ahead_in_several_runs_gives_the_report_of_one_job(tmp_path, monkeypatch):
    """Where lines are measured for nesting ahead (Python 3.12 and later), a worker measures its batch a
    run at a time, each just before it is checked: runs of a few lines, damaged ones among them."""
    path = tmp_path / "rollouts.jsonl.gz"
    path.write_bytes(gzip.compress(_damaged_stream()))
    one = _checking.check_files([str(path)], now=1_790_000_000.0)
    monkeypatch.setattr(_streamed, "_BATCH_BYTES", 6_000)
    monkeypatch.setattr(_streamed, "_AHEAD_BYTES", 2 * len(GOOD))
    many = _checking.check_files([str(path)], jobs=2, now=1_790_000_000.0)
    assert _without_timing(many.to_dict()) == _without_timing(one.to_dict())
    assert one.damaged_lines >= 2


def _batches_of_a_worker_stopped_alone(task: Any, check_batch: Any = _streamed._check_batch) -> Any:
    """`_check_batch`, in a worker that took SIGTERM on its own as the batch holding item 40 came."""
    from gym_contract import _interrupts

    if task[1][0][0] <= 40 <= task[1][-1][0]:
        _interrupts._stop_asked = True
    return check_batch(task)


def test_a_batch_its_worker_cut_short_ends_the_report_of_a_compressed_input(tmp_path, monkeypatch):
    path = tmp_path / "rollouts.jsonl.gz"
    path.write_bytes(gzip.compress(_damaged_stream()))
    one = _checking.check_files([str(path)], now=1_790_000_000.0)
    monkeypatch.setattr(_streamed, "_BATCH_BYTES", 2_000)
    monkeypatch.setattr(_streamed, "_check_batch", _batches_of_a_worker_stopped_alone)
    cut = _checking.check_files([str(path)], jobs=2, now=1_790_000_000.0)
    assert cut.interrupted
    assert 0 < cut.lines < one.lines
    # The lines up to the batch cut short, and none after it: a leading part of the input.
    assert cut.diagnostics == [d for d in one.diagnostics if d.line <= cut.lines]


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="no /dev/fd to name a pipe by")
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_a_pipe_named_as_a_file_is_read_once_from_its_start_with_workers(tmp_path, compress):
    data = _damaged_stream()
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes(gzip.compress(data) if compress else data)
    one = _checking.check_files([str(path)], now=1_790_000_000.0)
    # As `<(zcat rollouts.jsonl.gz)` names it: a pipe that one reader takes from the start, once.
    with subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE) as writer:
        assert writer.stdout is not None
        piped = _checking.check_files([f"/dev/fd/{writer.stdout.fileno()}"], jobs=2, now=1_790_000_000.0)
    assert (piped.lines, piped.records, piped.damaged_lines) == (one.lines, one.records, one.damaged_lines)
    assert [(d.code, d.line) for d in piped.diagnostics] == [(d.code, d.line) for d in one.diagnostics]


def test_stdin_alone_is_checked_in_batches_with_the_same_report(tmp_path):
    data = _damaged_stream()
    one = run("-", "--format", "json", stdin=data)
    two = run("-", "--format", "json", "--jobs", "2", stdin=data)
    assert two.returncode == one.returncode == 1
    assert _without_timing(json.loads(two.stdout)) == _without_timing(json.loads(one.stdout))


def test_the_summary_counts_bytes_as_stored_and_as_json(tmp_path):
    data = b"\n".join([GOOD] * 50) + b"\n"
    packed = tmp_path / "rollouts.jsonl.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(data))
    code, summary = report(packed)
    assert code == 0
    assert (summary["bytes"], summary["decoded_bytes"]) == (packed.stat().st_size, len(data))
    plain = lines_file(tmp_path, *([GOOD] * 50))
    _, summary = report(plain)
    assert summary["bytes"] == summary["decoded_bytes"] == plain.stat().st_size
    text = run(str(packed), "--quiet").stdout.splitlines()[-1]
    assert re.fullmatch(r"  [\d.]+ MB read, [\d.]+ MB of JSON, in [\d.]+ s \([\d.,]+ MB/s of JSON\)", text), text


def test_deep_nesting_anywhere_in_a_record_is_a_diagnostic_never_a_traceback(tmp_path):
    # After a clean line the next one is tried on the fast path first, whose decoder recurses.
    def nested(depth: int) -> str:
        return "[" * depth + "1" + "]" * depth

    compact = json.dumps(TRAJECTORY, separators=(",", ":"))
    request = '"request":{"model":"m","input":"q"}'
    call_id = f'"model_call_id":"{TRAJECTORY["model_calls"][0]["model_call_id"]}"'
    assert request in compact
    assert call_id in compact
    lines = [
        compact,
        compact.replace(request, f'"request":{nested(1000)}', 1),  # opaque: fine at any depth JSON allows
        compact.replace(call_id, f'"model_call_id":{nested(1000)}', 1),  # a string expected: explained
        compact.replace(request, f'"request":{nested(5000)}', 1),  # deeper than any reader takes
    ]
    code, summary = report(lines_file(tmp_path, *(line.encode() for line in lines)), "--kind", "trajectory")
    assert code == 1
    assert codes_at(summary) == [("schema_violation", 3), ("json_invalid", 4)]


SLOW_IMPORTS = (
    "pydantic",
    "gym_contract.models",
    "jsonschema",
    "jsonschema_rs",
    "concurrent.futures.process",
    "referencing",
    "rich",
)


def imported_by(arguments: list[str], **how: Any) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """Which of the slow imports a run of the command with ``arguments`` made, and how the run went."""
    probe = (
        "import contextlib, sys\n"
        "from gym_contract.cli import main\n"
        "with contextlib.suppress(SystemExit):\n"
        f"    main({arguments!r})\n"
        "sys.stdout.flush()\n"
        f"print('\\nimported:', [name for name in {SLOW_IMPORTS!r} if name in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], stdout=subprocess.PIPE, text=True, check=True, **how)
    return ast.literal_eval(result.stdout.split("\nimported: ")[-1]), result


@pytest.mark.parametrize(
    "arguments",
    [["validate", "--quiet", "{path}"], ["validate", "{path}"], ["validate", "{empty}"], ["--version"]],
)
def test_checking_valid_records_imports_neither_the_models_nor_the_schema_validators_nor_rich(tmp_path, arguments):
    # Start-up is most of a small file's time: what a valid record never needs is never imported, and
    # off a terminal the report's tables are laid out without rich.
    path, empty = lines_file(tmp_path, GOOD, GOOD), tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    imported, result = imported_by([argument.format(path=path, empty=empty) for argument in arguments])
    assert imported == []
    if arguments[0] == "validate":
        assert re.search(r"^    +\d+  \w+$", result.stdout, re.MULTILINE), result.stdout  # a table was drawn


def test_rich_colours_the_tables_where_colour_is_asked_for(tmp_path):
    environment = {**os.environ, "FORCE_COLOR": "1"}
    imported, result = imported_by(["validate", str(lines_file(tmp_path, GOOD))], env=environment)
    assert imported == ["rich"]
    assert "\x1b[32mV\x1b[0m" in result.stdout  # the coverage table's verdicts


@pytest.mark.skipif(sys.platform == "win32", reason="uses a POSIX pseudo-terminal")
def test_rich_draws_the_progress_bar_on_a_terminal(tmp_path):
    master, terminal = os.openpty()
    try:
        imported, _ = imported_by(["validate", str(lines_file(tmp_path, GOOD))], stderr=terminal)
    finally:
        os.close(terminal)
        os.close(master)
    assert imported == ["rich"]
