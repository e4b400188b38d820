"""tools/make_corpus.py: byte-stable corpora whose records are valid, consistent and near the asked size."""

from __future__ import annotations

import copy
import gzip
import importlib.util
import itertools
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_contract import schemas
from gym_contract.checking import check_files
from gym_contract.validation import check_line
from tests.support import with_repeated_key

orjson = pytest.importorskip("orjson", reason="tools/make_corpus.py writes with orjson")

SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "make_corpus.py"
TARGET_KB = 24
ATTACHMENT_SCHEMAS = {
    "ng_trajectory": "trajectory",
    "ng_agent_observations": "agent_observations",
    "ng_model_call_capture": "model_call_capture",
}
# UTC Unix seconds of 2026-01-01 and 2027-01-01.
YEAR_2026 = (1_767_225_600, 1_798_761_600)


def load_script() -> Any:
    """tools/ is not a package: load the script by its path, as a benchmark would."""
    spec = importlib.util.spec_from_file_location("make_corpus", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_corpus = load_script()


@pytest.fixture(scope="module")
def records() -> list[dict]:
    """Two tasks of four rollouts each: every producer appears twice."""
    return [make_corpus.make_record(random.Random(f"test:{i}"), i // 4, i % 4, TARGET_KB) for i in range(8)]


def write_corpus(path: Path, *options: str) -> bytes:
    assert make_corpus.main([str(path), *options]) == 0
    return path.read_bytes()


def duplicates(values: list) -> list:
    return [value for value, count in Counter(values).items() if count > 1]


def span_problems(where: str, entry: dict) -> list[str]:
    """A start, an end and a duration that contradict each other or fall outside 2026."""
    started, completed, duration = entry["started_at"], entry["completed_at"], entry["duration_ms"]
    found = []
    if duration is not None and duration < 0:
        found.append(f"{where}: negative duration {duration}")
    for moment in (started, completed):
        if moment is not None and not YEAR_2026[0] <= moment < YEAR_2026[1]:
            found.append(f"{where}: {moment} is not in 2026")
    if started is not None and completed is not None:
        if completed < started:
            found.append(f"{where}: completed before it started")
        if duration is not None and abs(duration - (completed - started) * 1000) > 1:
            found.append(f"{where}: duration {duration} ms differs from the timestamps")
    return found


def schema_problems(record: dict) -> list[str]:
    return [
        f"{key}: {error.message}"
        for key, name in ATTACHMENT_SCHEMAS.items()
        for error in schemas.validator(name).iter_errors(record[key])
    ]


def identity_problems(record: dict) -> list[str]:
    """Ids that differ from the record's indices, or that repeat where they must be unique."""
    trajectory, bundle = record["ng_trajectory"], record["ng_agent_observations"]["records"]
    rollout_id = f"{record['_ng_task_index']}-{record['_ng_rollout_index']}"
    found = []
    if (trajectory["task_id"], trajectory["rollout_id"]) != (str(record["_ng_task_index"]), rollout_id):
        found.append("the trajectory names another task or rollout")
    if record["ng_model_call_capture"]["rollout_id"] != rollout_id:
        found.append("the capture names another rollout")
    for turn in trajectory["turns"]:
        if (turn["task_id"], turn["rollout_id"]) != (trajectory["task_id"], trajectory["rollout_id"]):
            found.append(f"turn {turn['turn_no']} names another task or rollout")
    keyed = {
        "invocation": [inv["invocation_id"] for inv in trajectory["invocations"]],
        "bundle invocation": [r["invocation_id"] for r in bundle if r["kind"] == "agent_invocation"],
        "tool call": [(t["invocation_id"], t["tool_call_id"]) for t in trajectory["tool_calls"]],
        "observed tool call": [(r["invocation_id"], r["tool_call_id"]) for r in bundle if r["kind"] == "tool_call"],
        "turn": [(t["invocation_id"], t["turn_no"]) for t in trajectory["turns"]],
        "model call": [call["model_call_id"] for call in trajectory["model_calls"]],
    }
    return found + [f"duplicate {kind} {key}" for kind, ids in keyed.items() for key in duplicates(ids)]


def reference_problems(record: dict) -> list[str]:
    """References to model calls, spawning tool calls and tool outputs that lead nowhere or elsewhere."""
    trajectory, bundle = record["ng_trajectory"], record["ng_agent_observations"]["records"]
    calls = {call["model_call_id"]: call["response_metadata"]["response_id"] for call in trajectory["model_calls"]}
    refs = [ref for inv in trajectory["invocations"] for ref in inv["model_calls"]]
    refs += [ref for turn in trajectory["turns"] for ref in turn["model_calls"]]
    for compaction in (r for r in bundle if r["kind"] == "context_compaction"):
        refs += [compaction["before_model_call"], compaction["after_model_call"], *compaction["model_calls"]]
    found = [f"{ref} leads to no model call" for ref in refs if calls.get(ref["model_call_id"]) != ref["response_id"]]
    invocations = {inv["invocation_id"]: inv for inv in trajectory["invocations"]}
    outputs = {}
    for inv in trajectory["invocations"]:
        for item in inv["conversation"]:
            if item.get("type") == "function_call_output":
                outputs[inv["invocation_id"], item["call_id"]] = item["output"]
        if inv["parent_invocation_id"] is not None:
            parent = invocations.get(inv["parent_invocation_id"], {"conversation": []})
            spawners = {item["call_id"] for item in parent["conversation"] if item.get("type") == "function_call"}
            if inv["spawned_by_tool_call_id"] not in spawners:
                found.append(f"invocation {inv['invocation_id']} names no tool call of its parent as its spawner")
    for tool in trajectory["tool_calls"]:
        if outputs.get((tool["invocation_id"], tool["tool_call_id"])) != tool["output"]:
            found.append(f"tool call {tool['tool_call_id']}'s output differs from its conversation's")
    return found


def timing_problems(record: dict) -> list[str]:
    trajectory, bundle = record["ng_trajectory"], record["ng_agent_observations"]["records"]
    found = [problem for call in trajectory["model_calls"] for problem in span_problems("model call", call)]
    tools = [*trajectory["tool_calls"], *(r for r in bundle if r["kind"] == "tool_call")]
    return found + [problem for tool in tools for problem in span_problems(f"tool call {tool['tool_call_id']}", tool)]


def token_problems(record: dict) -> list[str]:
    """Token counts that do not add up, or that differ between the payload, the trajectory and the capture."""
    capture, found = record["ng_model_call_capture"], []
    captured = {call["model_call_id"]: call for call in capture["calls"]}
    for call in record["ng_trajectory"]["model_calls"]:
        stats, usage, where = call["token_stats"], call["response"]["usage"], f"model call {call['model_call_id']}"
        if stats["total_tokens"] != stats["prompt_tokens"] + stats["completion_tokens"]:
            found.append(f"{where}: total tokens are not prompt + completion tokens")
        if stats["cached_tokens"] > stats["prompt_tokens"] or stats["reasoning_tokens"] > stats["completion_tokens"]:
            found.append(f"{where}: more cached or reasoning tokens than there can be")
        if (usage["input_tokens"], usage["output_tokens"]) != (stats["prompt_tokens"], stats["completion_tokens"]):
            found.append(f"{where}: token stats differ from the response's usage")
        capture_stats = [captured.get(call["model_call_id"], {}).get(key) for key in make_corpus.TOKEN_FIELDS.values()]
        if capture_stats != list(stats.values()):
            found.append(f"{where}: token stats differ from the capture's")
    for key, total in capture["metrics"].items():
        expected = len(capture["calls"]) if key == "num_calls" else sum(call[key] for call in capture["calls"])
        if total != expected:
            found.append(f"capture metric {key} is {total} where its calls sum to {expected}")
    return found


def problems(record: dict) -> list[str]:
    """Every way the record breaks its schemas or the consistency the corpus promises."""
    # The consistency checks read fields the schemas require, so they run on schema-valid records only.
    return schema_problems(record) or [
        *identity_problems(record),
        *reference_problems(record),
        *timing_problems(record),
        *token_problems(record),
    ]


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_bytes(tmp_path):
    options = ("--records", "3", "--record-kb", str(TARGET_KB))
    first = write_corpus(tmp_path / "a.jsonl", *options, "--seed", "7")
    assert first == write_corpus(tmp_path / "b.jsonl", *options, "--seed", "7")
    assert first != write_corpus(tmp_path / "c.jsonl", *options, "--seed", "8")
    # A record depends on its seed and position only, so a shorter corpus is a prefix of a longer one.
    shorter = write_corpus(tmp_path / "d.jsonl", "--records", "2", "--record-kb", str(TARGET_KB), "--seed", "7")
    assert first.startswith(shorter)
    assert first.count(b"\n") == 3


def test_compressed_corpora_hold_the_same_lines_and_are_byte_stable_too(tmp_path):
    options = ("--records", "2", "--record-kb", str(TARGET_KB), "--seed", "3")
    plain = write_corpus(tmp_path / "plain.jsonl", *options)
    packed = write_corpus(tmp_path / "one.jsonl.gz", *options)
    assert gzip.decompress(packed) == plain
    assert write_corpus(tmp_path / "two.jsonl.gz", *options) == packed
    zstandard = pytest.importorskip("zstandard")
    assert zstandard.ZstdDecompressor().decompressobj().decompress(write_corpus(tmp_path / "c.zst", *options)) == plain


def test_records_are_within_a_quarter_of_the_asked_size(records):
    for record in records:
        assert abs(len(orjson.dumps(record)) / (TARGET_KB * 1024) - 1) <= 0.25


def test_a_default_record_is_near_150_kb_with_many_calls_and_no_problems():
    record = make_corpus.make_record(random.Random("default"), 5, 1, 150)
    assert abs(len(orjson.dumps(record)) / (150 * 1024) - 1) <= 0.25
    trajectory = record["ng_trajectory"]
    # Requests resend the whole context, so fewer calls fill a record than with chained requests.
    assert 10 <= len(trajectory["model_calls"]) <= 30
    assert len(trajectory["tool_calls"]) >= len(trajectory["model_calls"])
    assert problems(record) == []
    # Parallel tool calls of one invocation overlap in time, which their independent timings must show.
    timed = [tool for tool in trajectory["tool_calls"] if tool["started_at"] is not None]
    spans = sorted((tool["invocation_id"], tool["started_at"], tool["completed_at"]) for tool in timed)
    assert any(first[0] == then[0] and then[1] < first[2] for first, then in itertools.pairwise(spans))


def test_every_attachment_validates_and_every_promise_holds(records):
    for record in records:
        assert problems(record) == []


def test_records_look_like_agent_rollouts(records):
    assert {record["ng_agent_observations"]["source"] for record in records} == set(make_corpus.SOURCES)
    for record in records:
        assert record["responses_create_params"]["input"][0]["role"] == "user"
        assert record["response"]["output"]
        assert record["response"]["usage"]["total_tokens"] > 0
        assert record["reward"] in (0.0, 1.0)
        invocations = record["ng_trajectory"]["invocations"]
        assert sum(inv["parent_invocation_id"] is None for inv in invocations) == 1
        assert 1 <= len(invocations) - 1 <= 3
        kinds = {item.get("type") for inv in invocations for item in inv["conversation"]}
        assert {"message", "function_call", "function_call_output"} <= kinds
        trajectory, capture = record["ng_trajectory"], record["ng_model_call_capture"]
        source = record["ng_agent_observations"]["source"]
        assert trajectory["model_calls"][0]["request"]["input"]
        assert trajectory["model_calls"][0]["request"]["tools"]
        spawner = dict(zip(make_corpus.TOOL_KINDS, make_corpus.TOOL_NAMES[source], strict=True))["spawn"]
        outputs = [tool["output"] for tool in trajectory["tool_calls"] if tool["tool_name"] != spawner]
        assert all("\n" in output for output in outputs if len(output) > 200)  # multi-line, as terminals print
        assert {gap["code"] for gap in [*trajectory["gaps"], *capture.get("gaps", [])]} <= set(schemas.gap_codes())
        assert not {key for call in capture["calls"] for key in call} & set(make_corpus.PAYLOAD_KEYS)


def test_some_rollouts_compact_their_context_and_stay_consistent():
    compacted = 0
    for index in range(12):
        record = make_corpus.make_record(random.Random(index), 0, index % 4, 60)
        compactions = [r for r in record["ng_agent_observations"]["records"] if r["kind"] == "context_compaction"]
        if compactions:
            compacted += 1
            assert problems(record) == []
            assert all(c["tokens_after"] < c["tokens_before"] for c in compactions)
    assert compacted


def test_the_invalid_share_breaks_exactly_that_share_of_records_once_each(tmp_path):
    options = ("--records", "8", "--record-kb", str(TARGET_KB), "--seed", "5")
    corpus = write_corpus(tmp_path / "broken.jsonl", *options, "--invalid-share", "0.5").splitlines()
    valid = write_corpus(tmp_path / "valid.jsonl", *options).splitlines()
    broken = [index for index, line in enumerate(corpus) if problems(orjson.loads(line))]
    assert len(broken) == 4
    assert broken == [index for index, (line, sound) in enumerate(zip(corpus, valid, strict=True)) if line != sound]


@pytest.mark.parametrize("defect", make_corpus.DEFECTS)
def test_each_defect_is_caught_by_the_schemas_or_the_consistency_checks(defect, records):
    for seed in range(200):  # the defect is drawn from the generator: find a seed that draws this one
        record = copy.deepcopy(records[seed % len(records)])
        if make_corpus.inject_defect(random.Random(seed), record) == defect:
            break
    assert problems(record)


def test_requests_resend_the_model_visible_context():
    record = make_corpus.make_record(random.Random("history"), 1, 0, 60)
    root = record["ng_trajectory"]["invocations"][0]
    by_id = {call["model_call_id"]: call for call in record["ng_trajectory"]["model_calls"]}
    requests = [by_id[ref["model_call_id"]]["request"] for ref in root["model_calls"]]
    compacted = any(o.get("kind") == "context_compaction" for o in record["ng_agent_observations"]["records"])
    for earlier, later in itertools.pairwise(requests):
        assert later["previous_response_id"] is None
        if not compacted:
            # Each request repeats the one before it, then adds what the model and the tools said since.
            assert later["input"][: len(earlier["input"])] == earlier["input"]
            assert len(later["input"]) > len(earlier["input"])


def test_chained_requests_carry_only_new_items():
    record = make_corpus.make_record(random.Random("history"), 1, 0, 60, full_history=False)
    requests = [call["request"] for call in record["ng_trajectory"]["model_calls"]]
    assert any(request["previous_response_id"] for request in requests)


def test_written_records_are_canonical_and_take_the_fast_path(tmp_path):
    from gym_contract.validation._fastpath import skeleton

    out = tmp_path / "corpus.jsonl"
    assert make_corpus.main([str(out), "--records", "3", "--seed", "4", "--record-kb", "30"]) == 0
    for line in out.read_bytes().splitlines():
        assert skeleton(line, "rollout") is not None
    fast, precise = (check_files([str(out)], now=1_790_000_000.0, fast=fast) for fast in (True, False))
    timing = ("seconds", "mb_per_s")
    assert {k: v for k, v in fast.to_dict().items() if k not in timing} == {
        k: v for k, v in precise.to_dict().items() if k not in timing
    }


@settings(max_examples=min(settings().max_examples, 25))
@given(st.integers(min_value=0))
def test_fast_and_precise_paths_agree_wherever_a_corpus_line_repeats_a_key(target):
    record = orjson.loads(orjson.dumps(make_corpus.make_record(random.Random("repeat"), 1, 0, 20)))
    unchanged, objects = with_repeated_key(record, -1)
    assert unchanged == orjson.dumps(record)  # the writer is orjson's, byte for byte
    line = with_repeated_key(record, target % objects)[0]
    fast, precise = (check_line(line, hint="rollout", now=1_790_000_000.0, fast=fast) for fast in (True, False))
    assert (fast.kind, fast.diagnostics) == (precise.kind, precise.diagnostics)
    codes = {d.code for d in precise.diagnostics}
    assert codes <= {"json_duplicate_key"}
