"""What the commands say: the first line of a report, the usage a wrong option shows, options that need another."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gym_contract import cli
from tests.support import REPO

CLEAN = str(REPO / "examples" / "rollout-7-0.jsonl")
DAMAGED = str(REPO / "examples" / "damaged_rollouts.jsonl")


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The usage error ``args`` end in: its stderr, after checking the exit status is 2."""
    with pytest.raises(SystemExit) as stop:
        cli.main(list(args))
    assert stop.value.code == 2
    return capsys.readouterr().err


def test_a_clean_report_begins_with_its_verdict_not_a_blank_line():
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "validate", CLEAN], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == "PASS (fail on error)"


@pytest.mark.parametrize("flags", [[], ["--quiet"], ["--fail-on", "warning"]])
def test_no_text_report_begins_with_a_blank_line(capsys, flags):
    for path in (CLEAN, DAMAGED):
        cli.main(["validate", *flags, path])
        out = capsys.readouterr().out
        assert out.splitlines()[0].strip() != ""


def test_a_blank_line_still_parts_the_diagnostics_from_the_summary(capsys):
    assert cli.main(["validate", DAMAGED]) == 1
    lines = capsys.readouterr().out.splitlines()
    verdict = lines.index("FAIL (fail on error)")
    assert verdict > 1
    assert lines[verdict - 1] == ""


@pytest.mark.parametrize(
    "command",
    [
        ["validate"],
        ["coverage"],
        ["report", "-o", "r.html"],
        ["outcome", "claude-code"],
        ["outcome", "opencode"],
        ["observe", "claude-code"],
        ["export", "otel"],
        ["lineage"],
        ["schema", "show"],
    ],
)
def test_an_unknown_option_shows_the_usage_of_the_command_it_was_given_to(capsys, command):
    error = refused(capsys, *command, "--frobnicate", "x")
    name = " ".join(word for word in command if not word.startswith("-") and word != "r.html")
    assert error.startswith(f"usage: gym-contract {name} ")
    assert error.splitlines()[-1] == f"gym-contract {name}: error: unrecognized arguments: --frobnicate"


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["validate", CLEAN, "--address", "auto"], "--address"),
        (["coverage", CLEAN, "--address", "auto"], "--address"),
        (["project", CLEAN, "--address", "auto"], "--address"),
        (["validate", CLEAN, "--verbose"], "--verbose"),
        (["project", CLEAN, "--parquet", "-o", "out"], "--parquet"),
        (["validate", CLEAN, "--engine", "ray", "--jobs", "2"], "--jobs"),
        (["observe", "claude-code", str(REPO / "examples"), "--exit-code", "3"], "--exit-code"),
        (["observe", "claude-code", str(REPO / "examples"), "--timed-out"], "--timed-out"),
    ],
)
def test_an_option_that_means_nothing_without_another_is_refused(capsys, command, option):
    """Refused before anything runs (no Ray started, no file read), and named with what it needs."""
    last = refused(capsys, *command).splitlines()[-1]
    name = " ".join(command[:2]) if command[0] == "observe" else command[0]
    assert last.startswith(f"gym-contract {name}: error: {option} goes with ")
    assert "give --" in last
    assert f"or leave {option} out" in last


def test_address_with_engine_ray_is_taken():
    parsed = cli._parse(cli.build_parser(), ["validate", CLEAN, "--engine", "ray", "--address", "auto", "--verbose"])
    assert (parsed.engine, parsed.address, parsed.verbose) == ("ray", "auto", True)


CAPTURE = str(REPO / "examples" / "capture")
ROLLOUT = REPO / "examples" / "rollout-7-0.jsonl"


def test_join_takes_the_observations_of_a_rollout_record(tmp_path: Path, capsys):
    record = json.loads(ROLLOUT.read_text(encoding="utf-8"))
    bundle = tmp_path / "observations.json"
    bundle.write_text(json.dumps(record["ng_agent_observations"]), encoding="utf-8")
    assert cli.main(["join", "--capture", CAPTURE, "--rollout-id", "7-0", str(bundle)]) == 0
    from_bundle = capsys.readouterr().out
    assert cli.main(["join", "--capture", CAPTURE, "--rollout-id", "7-0", str(ROLLOUT)]) == 0
    assert capsys.readouterr().out == from_bundle
    # Among other rollouts' records, the one of the rollout id named is taken.
    several = tmp_path / "rollouts.jsonl"
    others = (REPO / "examples" / "rollouts.jsonl").read_text(encoding="utf-8")
    several.write_text(others + ROLLOUT.read_text(encoding="utf-8"), encoding="utf-8")
    assert cli.main(["join", "--capture", CAPTURE, "--rollout-id", "7-0", str(several)]) == 0
    assert capsys.readouterr().out == from_bundle


@pytest.mark.parametrize(
    ("content", "name", "said"),
    [
        (None, "rollouts.jsonl", "expected one ng_agent_observations bundle, or one rollout record of 7-0 that "
         "carries one; found 6 rollout records of other rollouts than 7-0"),
        ({"model_call_id": "m", "dialect": "chat"}, "call.json", "found 1 capture_exchange records"),
        ({"source": 5, "records": []}, "bundle.json", "the bundle cannot be joined: /source: schema_violation: "),
        ({"_ng_task_index": 7, "_ng_rollout_index": 0, "reward": 1.0}, "rollout.jsonl",
         "rollout.jsonl:1: the rollout record of 7-0 carries no ng_agent_observations to join"),
    ],
)  # fmt: skip
def test_join_says_what_it_expected_when_the_input_is_no_bundle(tmp_path: Path, capsys, content, name, said):
    path = REPO / "examples" / name if content is None else tmp_path / name
    if content is not None:
        path.write_text(json.dumps(content) + "\n", encoding="utf-8")
    assert cli.main(["join", "--capture", CAPTURE, "--rollout-id", "7-0", str(path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert said in line
    assert "ValidationError" not in line


def test_join_reads_a_rollouts_capture_file_as_its_directory(capsys):
    observations = str(REPO / "docs" / "examples" / "join_observations.json")
    capture = REPO / "examples" / "capture"
    joined = []
    for given in (capture, capture / "7-0.capture.jsonl"):
        assert cli.main(["join", "--capture", str(given), "--rollout-id", "7-0", observations]) == 0
        joined.append(json.loads(capsys.readouterr().out))
    assert joined[0] == joined[1]
    assert joined[0]["records"]


@pytest.mark.parametrize(
    "command",
    [
        ["project", "{input}", "-o", "{output}"],
        ["export", "otel", "{input}", "-o", "{output}"],
        ["report", "{input}", "-o", "{output}"],
    ],
    ids=["project", "export otel", "report"],
)
@pytest.mark.parametrize("naming", ["itself", "a link to it"])
def test_an_output_that_is_the_input_is_refused_and_the_input_left_whole(tmp_path: Path, capsys, command, naming):
    rollouts = (REPO / "examples" / "rollouts.jsonl").read_bytes()
    source = tmp_path / "rollouts.jsonl"
    source.write_bytes(rollouts)
    output = source
    if naming == "a link to it":
        output = tmp_path / "link.jsonl"
        output.symlink_to(source.name)
    assert cli.main([part.format(input=source, output=output) for part in command]) == 2
    said = capsys.readouterr().err
    assert f"{str(output)!r} is the input {str(source)!r}: writing it would destroy what is read" in said
    assert source.read_bytes() == rollouts


def test_report_names_the_file_it_writes_rather_than_stdout(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", str(REPO / "examples" / "rollouts.jsonl"), "-o", "-"]) == 2
    said = capsys.readouterr().err
    assert "the page is written to a file, not to stdout" in said
    assert not (tmp_path / "-").exists()
