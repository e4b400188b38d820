"""The producer kit: one `observe` shape, the registry, and Claude Code's document unchanged by moving onto them."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from gym_contract._vocabulary import CRITERIA
from gym_contract.cli import build_parser
from gym_contract.producers import (
    COMMON_SUMMARY_FIELDS,
    ArtifactForm,
    Observed,
    Producer,
    Rating,
    RunSummary,
    by_source,
    producer,
    producers,
)
from gym_contract.producers._kit import gap
from gym_contract.producers.claude_code import observe, read_run
from tests.support import run_in_process

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "claude-code" / "spotter-v2.1.39"
STREAM = ROOT / "examples" / "claude-code" / "spotter-v2.1.39.stream.jsonl"
# Written by the producer before it moved onto the kit: the digest of each bundle, the outcome, the summary.
GOLDEN = json.loads((Path(__file__).parent / "golden" / "claude_code_documents.json").read_text())
ADDED = {"compactions", "input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens"}


class Done:
    """A command's exit status and output, run in this process."""

    def __init__(self, *arguments: str) -> None:
        self.returncode, self.stdout, self.stderr = run_in_process(*arguments)


cli = Done


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def observe_commands() -> set[str]:
    """The harnesses `gym-contract observe` takes, read from its parser."""
    return set(subcommands(subcommands(build_parser())["observe"]))


def digest(bundle: Any) -> str:
    canonical = json.dumps(bundle, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "arguments"),
    [("transcripts", []), ("stream", ["--stream", str(STREAM), "--exit-code", "0"])],
)
def test_the_claude_code_document_is_what_it_was_before_the_kit(name: str, arguments: list[str]) -> None:
    done = cli("observe", "claude-code", str(EXAMPLE), "--model-ref", "policy", *arguments)

    assert (done.returncode, done.stderr) == (0, "")
    document = json.loads(done.stdout)
    golden = GOLDEN[name]
    assert digest(document["ng_agent_observations"]) == golden["ng_agent_observations_sha256"]
    assert document["ng_agent_outcome"] == golden["ng_agent_outcome"]
    summary = document["run_summary"]
    # Every number it had keeps its value; the summary only gains the fields every producer fills.
    assert {key: value for key, value in summary.items() if key not in ADDED} == golden["run_summary"]
    assert list(summary)[: len(COMMON_SUMMARY_FIELDS)] == list(COMMON_SUMMARY_FIELDS)
    assert (summary["compactions"], summary["input_tokens"]) == (1, None)


def test_read_run_is_observe_with_positional_stream_and_model_server() -> None:
    observed = observe(EXAMPLE, model_ref="policy", stream=STREAM, exit_code=0)

    assert isinstance(observed, Observed)
    assert read_run(EXAMPLE, STREAM, "policy", exit_code=0) == observed
    assert observed.summary.compactions == sum(
        1 for record in observed.observations.records if record.kind == "context_compaction"
    )


def test_a_run_summary_reads_as_its_document_and_keeps_common_and_own_fields_apart() -> None:
    summary = RunSummary(tool_calls=3, duration_s=1.5, extra={"result_success": True})

    assert summary == summary.as_dict()
    assert summary["tool_calls"] == 3
    assert summary["result_success"] is True
    assert summary["input_tokens"] is None
    assert list(summary) == [*COMMON_SUMMARY_FIELDS, "result_success"]
    with pytest.raises(ValueError, match="tool_calls"):
        RunSummary(extra={"tool_calls": 1})
    with pytest.raises(TypeError):
        summary.extra["result_success"] = False  # type: ignore[index]


def test_the_registry_finds_each_producer_by_harness_and_by_source() -> None:
    assert [declared.name for declared in producers()] == sorted(declared.name for declared in producers())
    for declared in producers():
        assert producer(declared.name) is declared
        assert by_source(declared.source) is declared
        assert declared.observe.__module__.startswith("gym_contract.producers.")
    assert by_source("no_such_harness") is None
    with pytest.raises(KeyError, match="claude-code"):
        producer("no-such-harness")


def test_every_registered_producer_has_an_observe_command_and_list_names_its_forms() -> None:
    listed = cli("observe", "--list")
    described = json.loads(cli("observe", "--list", "--format", "json").stdout)["producers"]

    assert listed.returncode == 0
    assert [entry["harness"] for entry in described] == [declared.name for declared in producers()]
    for declared, entry in zip(producers(), described, strict=True):
        assert entry["capability"] == {
            criterion: {"verdict": rating.verdict, "reason": rating.reason}
            for criterion, rating in declared.capability.items()
        }
        assert f"{declared.name}  (source {declared.source};" in listed.stdout
        for form in declared.forms:
            assert f"- {form.name}: {form.description}" in listed.stdout
    # Interchange formats that may hold many rollouts are read by commands of their own, not by a producer;
    # `observe pinchbench` is OpenClaw's producer held to one of its forms, whose bundles are OpenClaw's.
    assert {declared.name for declared in producers()} == observe_commands() - {"atif", "otel", "pinchbench"}
    assert "otel  (not a harness:" in listed.stdout
    assert "pinchbench  (openclaw's PinchBench output folder form" in listed.stdout
    assert any(form.name == "PinchBench output folder" for form in producer("openclaw").forms)
    # The JSON listing names every command of `observe`, and the forms of those that are no producer.
    others = json.loads(cli("observe", "--list", "--format", "json").stdout)["other_readers"]
    assert {entry["harness"] for entry in described} | {entry["command"] for entry in others} == observe_commands()
    otel_forms = next(entry["artifact_forms"] for entry in others if entry["command"] == "otel")
    assert [form["name"] for form in otel_forms] == ["OTLP/JSON document", "Collector file"]


def test_observe_without_a_harness_or_list_is_a_usage_error() -> None:
    done = cli("observe")

    assert done.returncode == 2
    assert "--list" in done.stderr
    assert done.stdout == ""


def test_a_document_that_breaks_the_contract_is_printed_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    from gym_contract.cli._observe import print_observed
    from gym_contract.models import AgentObservationBundle

    reversed_timing = {
        "kind": "tool_call",
        "invocation_id": "S",
        "tool_call_id": "t",
        "tool_name": "Read",
        "started_at": 1784714410.0,
        "completed_at": 1784714405.0,
        "timing_source": "artifact",
        "status": "completed",
    }
    bundle = AgentObservationBundle.model_validate({"source": "claude_code", "records": [reversed_timing]})

    status = print_observed(Observed(bundle, None, RunSummary(tool_calls=1)))

    out, err = capsys.readouterr()
    assert status == 1
    assert "ng_agent_observations/records/0/completed_at: tool_timing_reversed:" in err
    assert json.loads(out)["run_summary"]["tool_calls"] == 1


def fake_observe(path: Any, *, model_ref: str | None = None, exit_code: int | None = None, timed_out: bool = False):
    """A producer that reads one JSON file and says what it was given."""
    from gym_contract.models import AgentObservationBundle

    read = json.loads(Path(path).read_text())
    bundle = AgentObservationBundle.model_validate({"source": "fake", "records": [], "gaps": []})
    given = {"model_ref": model_ref, "exit_code": exit_code, "timed_out": timed_out}
    return Observed(bundle, None, RunSummary(tool_calls=read["tool_calls"], extra=given))


FAKE = Producer(
    name="fake-harness",
    source="fake",
    summary="a file that says how many tool calls ran",
    forms=(ArtifactForm("count file", "a JSON object with tool_calls"),),
    capability={criterion: Rating("X", "it observes nothing") for criterion in CRITERIA},
    observe=fake_observe,
)


def test_a_producer_command_runs_the_registered_observe_with_what_every_producer_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import gym_contract.cli._observe as observe_cli
    from gym_contract.cli._parsers import producer_command

    # Registered for this test only: the command finds its producer by name.
    monkeypatch.setattr(observe_cli, "producer", lambda name: FAKE if name == FAKE.name else producer(name))
    parser = argparse.ArgumentParser()
    producer_command(
        parser.add_subparsers(dest="harness"), FAKE.name, help="h", description="d.", path="FILE", path_help="p"
    )
    counts = tmp_path / "counts.json"
    counts.write_text('{"tool_calls": 3}')

    args = parser.parse_args([FAKE.name, str(counts), "--model-ref", "policy", "--exit-code", "1", "--timed-out"])
    assert args.handler(args) == 0
    summary = json.loads(capsys.readouterr().out)["run_summary"]
    assert summary["tool_calls"] == 3
    assert (summary["model_ref"], summary["exit_code"], summary["timed_out"]) == ("policy", 1, True)

    args = parser.parse_args([FAKE.name, str(tmp_path / "absent.json")])
    assert args.handler(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "cannot read" in err


def test_a_gap_detail_naming_a_file_that_is_not_utf8_stays_writable_text(tmp_path: Path) -> None:
    # A transcript file named with a byte that is not UTF-8: its gaps name it, and the document is still JSON.
    folder = tmp_path / "config" / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / os.fsdecode(b"\xff-x.jsonl")).write_bytes(b"{\n")
    status, out, err = run_in_process("observe", "claude-code", str(tmp_path / "config"))
    assert (status, err) == (0, "")
    details = [found["detail"] for found in json.loads(out)["ng_agent_observations"]["gaps"]]
    assert "p/\ufffd-x.jsonl:1" in details
    assert gap("transcript_unreadable", None, "\ud800").detail == "\ufffd"
