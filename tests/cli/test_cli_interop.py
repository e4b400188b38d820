"""`gym-contract export atif|otel` and `gym-contract observe atif`, run as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gym_contract import cli
from gym_contract.validation import is_valid
from tests.support import REPO

ROLLOUTS = str(REPO / "examples" / "rollouts.jsonl")
REAL = REPO / "tests" / "data" / "atif" / "terminus-2-hello-world-timeout.trajectory.json"


def main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The CLI in this process: exit status, stdout, stderr."""
    status = cli.main(list(args))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return status, captured.out, captured.err


def test_export_atif_writes_one_trajectory_per_rollout(tmp_path, capsys):
    status, out, err = main(capsys, "export", "atif", ROLLOUTS, "-o", str(tmp_path / "atif"))
    assert (status, err) == (0, "")
    written = out.split()
    assert sorted(Path(path).name for path in written) == [
        f"{n}.json" for n in ("0-0", "0-1", "0-2", "0-3", "1-0", "1-1")
    ]
    document = json.loads(Path(written[0]).read_text())
    assert document["schema_version"] == "ATIF-v1.8"
    assert document["session_id"] == Path(written[0]).stem


def test_export_atif_writes_the_version_asked_for(tmp_path, capsys):
    rollout = str(REPO / "examples" / "rollout-7-0.jsonl")
    status, out, _ = main(capsys, "export", "atif", "--atif-version", "1.7", rollout, "-o", str(tmp_path))
    assert status == 0
    assert json.loads(Path(out.strip()).read_text())["schema_version"] == "ATIF-v1.7"


def test_a_damaged_line_is_reported_with_its_number_and_the_rest_is_still_exported(tmp_path, capsys):
    lines = (REPO / "examples" / "rollouts.jsonl").read_text().splitlines()
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join([lines[0], "{not json", '{"unrelated": true}', lines[1]]) + "\n")
    status, out, err = main(capsys, "export", "atif", str(source), "-o", str(tmp_path / "out"))
    assert status == 1
    assert len(out.split()) == 2
    problems = err.strip().splitlines()
    assert len(problems) == 2
    assert f"{source}:2:" in problems[0]
    assert f"{source}:3: not exported:" in problems[1]


def test_an_input_that_cannot_be_opened_or_a_directory_that_cannot_be_made_is_a_usage_error(tmp_path, capsys):
    status, _, err = main(capsys, "export", "atif", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "out"))
    assert status == 2
    assert len(err.strip().splitlines()) == 1
    (tmp_path / "file").write_text("")
    status, _, err = main(capsys, "export", "atif", ROLLOUTS, "-o", str(tmp_path / "file"))
    assert status == 2
    assert "cannot write to the directory" in err


def test_export_otel_writes_one_request_with_a_trace_per_rollout(tmp_path, capsys):
    status, out, _ = main(capsys, "export", "otel", ROLLOUTS)
    assert status == 0
    request = json.loads(out)
    assert len(request["resourceSpans"]) == 6
    status, out, _ = main(capsys, "export", "otel", ROLLOUTS, "-o", str(tmp_path / "spans.json"))
    assert (status, out.strip()) == (0, f"{tmp_path / 'spans.json'}: 6 traces")
    assert json.loads((tmp_path / "spans.json").read_text()) == request


def test_observe_atif_prints_a_bundle_the_contract_accepts(capsys):
    status, out, err = main(capsys, "observe", "atif", str(REAL))
    assert (status, err) == (0, "")
    bundle = json.loads(out)
    assert bundle["source"] == "terminus-2"
    assert is_valid(bundle, "bundle")


def test_observe_atif_reads_back_what_export_atif_wrote(tmp_path, capsys):
    main(capsys, "export", "atif", str(REPO / "examples" / "rollout-7-0.jsonl"), "-o", str(tmp_path))
    status, out, _ = main(capsys, "observe", "atif", str(tmp_path / "7-0.json"))
    assert status == 0
    original = json.loads((REPO / "examples" / "rollout-7-0.jsonl").read_text())["ng_agent_observations"]
    assert json.loads(out)["gaps"] == original["gaps"]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("not json", "json_invalid"),
        ("[1, 2]", "expected one ATIF trajectory object, found 2 values (a JSON array, or lines of JSONL)"),
        ('{"schema_version": "ATIF-v3.0", "agent": {"name": "a"}, "steps": []}', "unknown ATIF version 'ATIF-v3.0'"),
        ('{"schema_version": "ATIF-v1.6", "agent": {"name": "a"}, "steps": {}}', "/steps: expected the list of steps"),
    ],
)
def test_bad_input_gives_one_line_and_exit_2(tmp_path, capsys, content, said):
    path = tmp_path / "trajectory.json"
    path.write_text(content)
    status, out, err = main(capsys, "observe", "atif", str(path))
    assert status == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert said in err


def test_a_bundle_read_that_breaks_the_contract_exits_1_and_names_its_place_in_the_bundle(tmp_path, capsys):
    damaged = str(REPO / "examples" / "damaged_rollouts.jsonl")
    main(capsys, "export", "atif", damaged, "-o", str(tmp_path))
    refused = []
    for path in sorted(tmp_path.glob("*.json")):
        status, out, err = main(capsys, "observe", "atif", str(path))
        if status == 1:
            refused.append(err)
            assert json.loads(out)["records"]  # the bundle is printed all the same
    assert refused  # a negative duration_ms travels through ATIF's extra and is caught on the way back
    for err in refused:
        assert all(line.startswith("gym-contract: /records/") for line in err.splitlines()), err
