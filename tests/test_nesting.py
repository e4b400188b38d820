"""Values nested up to the readers' limit, in every place a record holds one, through every command and entry point.

The readers take 1,024 levels. Whatever recurses once per level — Python's `repr`, jsonschema's
messages, pydantic's, a walk written as a recursive function — would stop somewhere below that,
at a depth that depends on the interpreter and on the caller's stack. Each command runs here as a
user runs it, in a process of its own, on records nested 480 to 1,024 levels deep; what it says of
them is what it says of the same records nested 200 levels deep, where nothing comes near a limit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from gym_contract import (
    AgentObservationBundle,
    ContractError,
    chain,
    classify_claude_code,
    derive_record,
    iter_diagnostics,
    validate,
)
from gym_contract._deep_values import REPR_LEVELS, python_repr, python_str, repr_safe
from gym_contract._json_writing import dumps
from gym_contract._limits import MAX_DEPTH, depth_beyond
from gym_contract.checking import check_files
from gym_contract.interop import to_atif, to_otel
from gym_contract.reading._json_parsing import loads
from tests.support import REPO

NOW = 1_786_100_000.0
SHALLOW = 200
DEPTHS = (480, 600, 990, 1020, MAX_DEPTH)
STYLES = ("dict", "list", "mixed")
SMALL = orjson.loads((REPO / "examples" / "rollout-7-0.jsonl").read_bytes())
FULL = orjson.loads((REPO / "examples" / "rollouts.jsonl").read_bytes().splitlines()[0])

# (name, base record, path of the value, changes that go with it)
PLACES: list[tuple[str, dict[str, Any], tuple[Any, ...], dict[tuple[Any, ...], Any]]] = [
    ("gap detail", SMALL, ("ng_agent_observations", "gaps", 0, "detail"), {}),
    ("gap details", SMALL, ("ng_agent_observations", "gaps", 0, "details"), {}),
    ("tool arguments", SMALL, ("ng_agent_observations", "records", 0, "conversation", 2, "arguments"), {}),
    ("metadata", SMALL, ("responses_create_params", "metadata"), {}),
    ("conversation item", SMALL, ("ng_agent_observations", "records", 0, "conversation", 2, "extra"), {}),
    (
        "beside a violation",
        SMALL,
        ("ng_agent_observations", "records", 0, "conversation", 2, "extra"),
        {("ng_agent_observations", "records", 0, "conversation", 2, "status"): 5},
    ),
    ("invocation id", SMALL, ("ng_agent_observations", "records", 0, "invocation_id"), {}),
    ("tool call's invocation", SMALL, ("ng_agent_observations", "records", 1, "invocation_id"), {}),
    ("record kind", SMALL, ("ng_agent_observations", "records", 0, "kind"), {}),
    ("trajectory turn", FULL, ("ng_trajectory", "turns", 0, "question"), {}),
    ("trajectory call request", FULL, ("ng_trajectory", "model_calls", 0, "request", "metadata"), {}),
]


def nested(levels: int, style: str) -> Any:
    """A chain of ``levels`` objects, arrays, or both in turn, around the number 1."""
    value: Any = 1
    for level in range(levels):
        value = {"k": value} if style == "dict" or (style == "mixed" and level % 2) else [value]
    return value


def _put(record: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        record = record[part]
    record[path[-1]] = value


def record_at(place: int, style: str, depth: int) -> dict[str, Any]:
    """The base record of ``place`` with a value there that makes the record nest exactly ``depth`` levels."""
    _, base, path, changes = PLACES[place]
    record = orjson.loads(orjson.dumps(base))
    for where, value in changes.items():
        _put(record, where, value)
    _put(record, path, nested(depth - len(path), style))  # each step of the path is inside one container
    assert depth_beyond(record, depth) is None
    assert depth_beyond(record, depth - 1) is not None
    return record


CASES = [(place, style) for place in range(len(PLACES)) for style in STYLES]


def case_id(case: tuple[int, str]) -> str:
    return f"{PLACES[case[0]][0]}, {case[1]}"


@pytest.fixture(scope="module")
def rollouts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, str, int]]]:
    """One file of every place, style and depth (the shallow one included), and what each line holds."""
    lines, keys = [], []
    for place, style in CASES:
        for depth in (SHALLOW, *DEPTHS):
            lines.append(dumps(record_at(place, style, depth)))
            keys.append((place, style, depth))
    path = tmp_path_factory.mktemp("deep") / "deep.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, keys


def gym_contract(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "gym_contract", *args], capture_output=True, text=True, check=False, timeout=600
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "Exception ignored" not in done.stderr, done.stderr[-3000:]
    return done


def _said(report: dict[str, Any], keys: list[tuple[int, str, int]]) -> dict[tuple[int, str, int], list[Any]]:
    said: dict[tuple[int, str, int], list[Any]] = {key: [] for key in keys}
    for diagnostic in report["diagnostics"]:
        said[keys[diagnostic["line"] - 1]].append(
            (diagnostic["code"], diagnostic["severity"], diagnostic["path"], diagnostic["message"])
        )
    return said


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_validate_says_of_a_deep_record_what_it_says_of_a_shallow_one(rollouts, jobs):
    path, keys = rollouts
    done = gym_contract("validate", str(path), "--format", "json", "--max-diagnostics", "100000", "--jobs", jobs)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["records"] == len(keys)
    assert report["damaged_lines"] == 0
    said = _said(report, keys)
    for place, style, depth in keys:
        assert said[(place, style, depth)] == said[(place, style, SHALLOW)], (PLACES[place][0], style, depth)
    valid = {"metadata", "conversation item", "trajectory turn", "trajectory call request"}
    for place, style, depth in keys:
        errors = [entry for entry in said[(place, style, depth)] if entry[1] == "error"]
        assert (errors == []) == (PLACES[place][0] in valid), (PLACES[place][0], said[(place, style, depth)])


def test_validate_refuses_every_record_one_level_too_deep_among_wide_ones_on_this_interpreter(tmp_path):
    # Records with more brackets than the limit, as real rollouts have, around records one level beyond it
    # in every place and style: the command, as this interpreter runs it, takes the wide ones and refuses
    # each deep one as the parsed path does, whichever way it measures nesting (see `depth_checked`).
    wide = orjson.loads(orjson.dumps(FULL))
    wide["response"] = {"id": "r", "output": [{"k": [index]} for index in range(MAX_DEPTH)]}
    lines, deep = [dumps(wide)] * 3, []
    for case in CASES:
        deep.append(len(lines) + 1)
        lines += [dumps(record_at(*case, MAX_DEPTH + 1)), dumps(wide)]
    assert lines[0].count(b"[") > MAX_DEPTH
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    done = gym_contract("validate", str(path), "--format", "json", "--max-diagnostics", "100000")
    report = json.loads(done.stdout)
    assert [(entry["line"], entry["code"]) for entry in report["diagnostics"]] == [(n, "json_invalid") for n in deep]
    assert all("nesting" in entry["message"] for entry in report["diagnostics"])
    precise = check_files([str(path)], fast=False, max_diagnostics=100000).to_dict()
    assert report["diagnostics"] == precise["diagnostics"]
    assert (report["records"], report["damaged_lines"]) == (precise["records"], precise["damaged_lines"])


@pytest.mark.parametrize("form", ["text", "sarif", "junit", "github"])
def test_every_format_of_validate_reports_deep_records(rollouts, form):
    path, _ = rollouts
    assert gym_contract("validate", str(path), "--format", form).returncode == 1


def test_the_report_draws_deep_records(rollouts, tmp_path):
    pytest.importorskip("plotly")
    path, keys = rollouts
    page = tmp_path / "report.html"
    done = gym_contract("report", str(path), "-o", str(page), "--sample", str(len(keys)), "--quiet")
    assert done.returncode == 1  # some records break the contract
    assert page.stat().st_size > 0


def test_a_record_validate_passes_is_drawn_in_the_report(tmp_path):
    pytest.importorskip("plotly")
    path = tmp_path / "deep.jsonl"
    path.write_bytes(dumps(record_at(4, "dict", 600)) + b"\n")
    assert gym_contract("validate", str(path), "--quiet").returncode == 0
    assert gym_contract("report", str(path), "-o", str(tmp_path / "report.html"), "--quiet").returncode == 0


def test_export_otel_writes_deep_values_as_their_text(rollouts, tmp_path):
    path, keys = rollouts
    out = tmp_path / "spans.json"
    assert gym_contract("export", "otel", str(path), "-o", str(out)).returncode == 0
    traces = loads(out.read_bytes())["resourceSpans"]
    assert len(traces) == len(keys)
    for (place, style, depth), trace in zip(keys, traces, strict=True):
        if PLACES[place][0] != "gap detail":
            continue
        (span,) = [span for span in trace["scopeSpans"][0]["spans"] if span["events"]]
        attributes = {item["key"]: item["value"] for item in span["events"][0]["attributes"]}
        detail = nested(depth - 4, style)
        assert attributes["gap.detail"] == {"stringValue": python_repr(detail)}


def test_export_atif_writes_deep_records(rollouts, tmp_path):
    path, keys = rollouts
    done = gym_contract("export", "atif", str(path), "-o", str(tmp_path / "atif"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list((tmp_path / "atif").iterdir())) == len(keys)  # a file per record, repeated rollout ids too


@pytest.mark.parametrize("command", [["coverage"], ["project", "-o", "OUT"]])
def test_the_other_rollout_commands_read_deep_records(rollouts, tmp_path, command):
    path, _ = rollouts
    arguments = [str(tmp_path / "out.jsonl") if part == "OUT" else part for part in command]
    done = gym_contract(*arguments, str(path))
    assert done.returncode == 0, done.stderr[-3000:]  # 1 would say a line was damaged or not projected


def test_lineage_chains_a_capture_whose_payloads_nest_to_the_limit(tmp_path):
    lines = []
    for index, style in enumerate(STYLES):
        part = {"type": "input_image", "detail": nested(MAX_DEPTH - 10, style)}
        exchange = {
            "model_call_id": f"c{index}",
            "dialect": "responses",
            "request": {"input": [{"role": "user", "content": [part]}]},
            "response": {"id": f"r{index}", "output": []},
        }
        lines.append(dumps(exchange))
    path = tmp_path / "7-0.capture.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    done = gym_contract("lineage", str(path))
    assert done.returncode == 0, done.stderr[-3000:]  # every call is a root: none is unresolved
    assert done.stdout.count("  root") == len(STYLES)


# ------------------------------------------------------------------------------------------ the Python API


def _at_stack_depth(frames: int, work: Any) -> Any:
    """``work()`` called under ``frames`` more frames, as a caller's own stack would hold it."""
    return work() if frames == 0 else _at_stack_depth(frames - 1, work)


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("style", STYLES)
def test_a_model_refuses_a_deep_value_with_a_validation_error(depth, style):
    part = {"type": "input_video", "video_url": "https://v", "video": "v", "extra": nested(depth - 9, style)}
    conversation = [{"role": "user", "content": [part]}]
    invocation = {"kind": "agent_invocation", "invocation_id": "a", "conversation": conversation}
    bundle = {"source": "pi", "records": [invocation]}
    with pytest.raises(ValidationError):
        _at_stack_depth(100, lambda: AgentObservationBundle.model_validate(bundle))
    with pytest.raises(ContractError):
        _at_stack_depth(100, lambda: validate(bundle, "bundle", now=NOW))
    part.pop("video")  # now the part is sound: the model takes the deep value as it is
    taken = _at_stack_depth(100, lambda: AgentObservationBundle.model_validate(bundle))
    assert taken.records[0].conversation[0].content[0].extra == part["extra"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_model_refuses_a_deep_record_kind_without_a_word_on_stderr(depth, capfd):
    bundle = {"source": "pi", "records": [{"kind": nested(depth - 3, "dict"), "invocation_id": "a"}]}
    with pytest.raises(ValidationError):
        _at_stack_depth(100, lambda: AgentObservationBundle.model_validate(bundle))
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("place", range(len(PLACES)))
def test_diagnostics_of_a_deep_record_are_those_of_a_shallow_one_through_the_api(place):
    for style in STYLES:
        shallow = [(d.code, d.path, d.message) for d in iter_diagnostics(record_at(place, style, SHALLOW), now=NOW)]
        for depth in (600, MAX_DEPTH):
            record = record_at(place, style, depth)
            deep = _at_stack_depth(100, lambda record=record: list(iter_diagnostics(record, now=NOW)))
            assert [(d.code, d.path, d.message) for d in deep] == shallow


@pytest.mark.parametrize("place", range(len(PLACES)))
def test_exports_take_deep_records_through_the_api(place):
    for style in STYLES:
        record = record_at(place, style, MAX_DEPTH)
        _at_stack_depth(100, lambda record=record: to_otel([record]))
        _at_stack_depth(100, lambda record=record: to_atif(record))


SUBTYPES = {
    "objects": lambda: nested(1020, "dict"),
    "arrays": lambda: nested(1020, "list"),
    "5,000 digits": lambda: 10**5000,
}


@pytest.mark.parametrize("subtype", SUBTYPES)
def test_claude_code_classifies_a_result_of_any_subtype(subtype):
    subtype = SUBTYPES[subtype]()
    outcome = _at_stack_depth(100, lambda: classify_claude_code([{"type": "result", "subtype": subtype}]))
    assert outcome.failure_kind == "unknown_error"
    assert len(outcome.signals[-1].value) < 200


def test_derive_record_nulls_a_model_ref_the_model_cannot_hold():
    ref = {"type": "responses_api_models", "name": "policy", "\ud800": 1}
    assert derive_record({"model_call_id": "a", "model_ref": ref}, 0).model_ref is None


def test_chain_raises_the_value_error_it_documents_for_nan():
    exchange = {
        "model_call_id": "a",
        "dialect": "responses",
        "request": {"input": [{"role": "user", "content": [{"type": "input_image", "x": float("nan")}]}]},
        "response": {"id": "r", "output": []},
    }
    with pytest.raises(ValueError, match="NaN"):
        chain([derive_record(exchange, 0)])
    assert "NaN" in (chain.__doc__ or "")


# ------------------------------------------------------------------------------------------ the helpers


SCALARS = [None, True, False, 0, -1, 2**63, 2**64, 1.5, -0.0, float("inf"), "", "a'b\"c\\", "\ud800", "é\n\x00"]


@pytest.mark.parametrize("value", [*SCALARS, SCALARS, {"a": SCALARS, "b": {}, "c": [[], {}]}, {"\ud800": [1]}])
def test_python_repr_writes_what_repr_writes(value):
    assert python_repr(value) == repr(value)
    assert python_str(value) == str(value)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("depth", [REPR_LEVELS - 1, REPR_LEVELS, REPR_LEVELS + 1, 1000, MAX_DEPTH, 3000])
def test_a_repr_safe_view_is_equal_and_writes_the_same_text_in_bounded_recursion(style, depth):
    value = nested(depth, style)
    view = repr_safe(value)
    assert (view is value) == (depth <= REPR_LEVELS)
    assert dumps(view) == dumps(value)  # equal, compared without recursion
    assert python_repr(view) == python_repr(value)
    if sys.version_info < (3, 12):  # from 3.12 on, `repr` recursion is bounded apart from the limit set here
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(len(_frames()) + REPR_LEVELS + 50)
        try:
            assert repr(view) == python_repr(value)
        finally:
            sys.setrecursionlimit(limit)


def _frames() -> list[Any]:
    import inspect

    return inspect.stack(0)


def test_python_repr_writes_an_integer_python_refuses_to():
    assert python_repr([10**5000]) == "[1" + "0" * 5000 + "]"
