"""`observe otel`: OTLP/JSON spans read back into bundles; `export otel` then `observe otel` gives the bundle back."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import given

from gym_contract import iter_diagnostics
from gym_contract import strategies as contract
from gym_contract._json_writing import dumps
from gym_contract._values import finite, text
from gym_contract.interop import to_otel
from gym_contract.producers.otel import ObservedSpans, OtlpInput, map_spans
from gym_contract.producers.otel._otlp import spans_of_request
from tests.interop.test_atif import EXAMPLE_ROLLOUTS
from tests.rollout_strategies import rollouts
from tests.support import REPO


def observe(request: dict[str, Any], model_ref: str | None = None) -> list[ObservedSpans]:
    read = OtlpInput()
    spans_of_request(json.loads(json.dumps(request)), "document", read)
    assert read.unreadable == []
    return map_spans(read.spans, model_ref=model_ref)


def _nanos(seconds: Any) -> Decimal | None:
    value = finite(seconds)
    return None if value is None else Decimal(repr(value)).scaleb(9).to_integral_value()


def _times(tool: dict[str, Any]) -> dict[str, float]:
    """A tool call's times as spans carry them: to the nanosecond, the end from start + duration, none out of order."""
    start, end = _nanos(tool.get("started_at")), _nanos(tool.get("completed_at"))
    duration = finite(tool.get("duration_ms"))
    if end is None and start is not None and duration is not None:
        end = start + Decimal(repr(duration)).scaleb(6).to_integral_value()
    if start is None or end is None or end < start:
        return {}
    return {"started_at": float(start.scaleb(-9)), "completed_at": float(end.scaleb(-9))}


def carried(bundle: dict[str, Any]) -> dict[str, Any]:
    """The bundle as its spans carry it (docs/guides/otel.md, "What is not carried back").

    Each invocation and tool call is a span that keeps every field but the conversation, its times
    to the nanosecond; any other record (a compaction, a sandbox, a record told again with the same
    id) is an event that keeps it whole, unless the contract refuses the record on its own: then it is
    the gap `otel_span_unreadable` (its detail, which names the span, is not compared).
    """
    records: list[dict[str, Any]] = []
    unread: list[dict[str, Any]] = []
    invocations: set[str] = set()
    tools: set[tuple[str, str]] = set()
    for record in bundle.get("records", []):
        if record.get("kind") == "agent_invocation" and record["invocation_id"] not in invocations:
            invocations.add(record["invocation_id"])
            kept = {
                "kind": "agent_invocation",
                "invocation_id": record["invocation_id"],
                "parent_invocation_id": text(record.get("parent_invocation_id")),
                "spawned_by_tool_call_id": text(record.get("spawned_by_tool_call_id")),
                "status": text(record.get("status")) or "unknown",
                "duration_ms": finite(record.get("duration_ms")),
                "error_type": text(record.get("error_type")),
            }
            refs = record.get("model_calls")
            records.append({**{k: v for k, v in kept.items() if v is not None}, "model_calls": refs or []})
        elif record.get("kind") == "tool_call" and (record["invocation_id"], record["tool_call_id"]) not in tools:
            tools.add((record["invocation_id"], record["tool_call_id"]))
            kept = {
                "kind": "tool_call",
                "invocation_id": record["invocation_id"],
                "tool_call_id": record["tool_call_id"],
                "tool_name": text(record.get("tool_name")),
                "status": text(record.get("status")) or "unknown",
                "timing_source": text(record.get("timing_source")),
                "sandbox_id": text(record.get("sandbox_id")),
                "duration_ms": finite(record.get("duration_ms")),
                "error_type": text(record.get("error_type")),
                **_times(record),
            }
            records.append({k: v for k, v in kept.items() if v is not None})
        elif refused_alone(record):
            unread.append({"code": "otel_span_unreadable", "invocation_id": None, "detail": None})
        else:
            records.append(record)
    gaps = [{key: gap.get(key) for key in ("code", "invocation_id", "detail")} for gap in bundle.get("gaps", [])]
    gaps += unread
    return {"source": bundle["source"], "records": _sorted(records), "gaps": _sorted(gaps)}


def refused_alone(record: dict[str, Any]) -> bool:
    """Whether the contract's check refuses a record on its own; how it relates to others (a parent loop) aside."""
    tree = ("invocation_parent_cycle", "invocation_id_duplicate")
    found = iter_diagnostics({"source": "pi", "records": [record]}, "bundle")
    return any(diagnostic.severity == "error" and diagnostic.code not in tree for diagnostic in found)


def _sorted(values: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records and gaps are unordered (the contract): compared as multisets."""
    return sorted(values, key=lambda value: dumps(value, sort_keys=True))


def round_trip(bundle: dict[str, Any]) -> dict[str, Any]:
    [observed] = observe(to_otel([bundle]))
    got = observed.bundle
    gaps = [{**gap, "detail": None} if gap["code"] == "otel_span_unreadable" else gap for gap in got["gaps"]]
    return {"source": got["source"], "records": _sorted(got["records"]), "gaps": _sorted(gaps)}


@given(rollouts())
def test_law_export_then_observe_gives_the_bundle_back_as_spans_carry_it(rollout):
    bundle = rollout.record["ng_agent_observations"]
    assert round_trip(bundle) == carried(bundle)


@given(contract.bundles())
def test_law_a_clean_bundle_comes_back_clean_and_equal(bundle):
    assert round_trip(bundle) == carried(bundle)
    [observed] = observe(to_otel([bundle]))
    observed.observed()  # keeps the contract: the model takes it


def test_the_projects_own_export_of_its_examples_reads_back_valid_with_each_trajectory_s_facts():
    projected = [record for record in EXAMPLE_ROLLOUTS if "ng_trajectory" in record]
    assert len(projected) >= 5
    for record in projected:
        [observed] = observe(to_otel([record]), model_ref="policy")
        bundle = observed.observed().observations.model_dump(mode="json")
        trajectory = record["ng_trajectory"]
        assert observed.rollout_id == trajectory["rollout_id"]
        invocations = {r["invocation_id"]: r for r in bundle["records"] if r["kind"] == "agent_invocation"}
        assert set(invocations) == {i["invocation_id"] for i in trajectory["invocations"]}
        for invocation in trajectory["invocations"]:
            assert (
                invocations[invocation["invocation_id"]]["parent_invocation_id"] == invocation["parent_invocation_id"]
            )
        call_ids = {call["model_call_id"] for call in trajectory["model_calls"]}
        refs = [ref["model_call_id"] for r in invocations.values() for ref in r["model_calls"]]
        assert len(refs) == len(set(refs))
        assert set(refs) <= call_ids
        tools = sorted(r["tool_call_id"] for r in bundle["records"] if r["kind"] == "tool_call")
        assert tools == sorted(t["tool_call_id"] for t in trajectory["tool_calls"])
        tokens = [call["token_stats"]["prompt_tokens"] for call in trajectory["model_calls"]]
        if refs and all(isinstance(count, int) for count in tokens):
            owned = [c["token_stats"]["prompt_tokens"] for c in trajectory["model_calls"] if c["model_call_id"] in refs]
            assert observed.summary.input_tokens == sum(owned)


def gym_contract(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "gym_contract", *args]
    return subprocess.run(command, capture_output=True, text=True, input=stdin, cwd=REPO)


def documents(stdout: str) -> list[dict[str, Any]]:
    """What `observe otel` prints: the one document, or JSONL, a document on each line."""
    try:
        return [json.loads(stdout)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in stdout.splitlines()]


def test_observe_otel_prints_a_valid_document_per_rollout_of_the_export(tmp_path: Path):
    spans = tmp_path / "spans.json"
    exported = gym_contract("export", "otel", "examples/rollouts.jsonl", "-o", str(spans))
    assert exported.returncode == 0, exported.stderr
    result = gym_contract("observe", "otel", str(spans))
    assert result.returncode == 0, result.stderr
    printed = documents(result.stdout)
    rollout_ids = [
        json.loads(line)["ng_trajectory"]["rollout_id"] for line in (REPO / "examples/rollouts.jsonl").open()
    ]
    assert [document["run_summary"]["rollout_id"] for document in printed] == rollout_ids
    for document in printed:
        assert set(document) == {"ng_agent_observations", "ng_agent_outcome", "run_summary"}
        assert not [d for d in iter_diagnostics(document["ng_agent_observations"], "bundle") if d.severity == "error"]


def test_several_bundles_are_printed_as_jsonl_and_one_bundle_as_one_indented_document(tmp_path: Path):
    several = gym_contract("export", "otel", "examples/rollouts.jsonl", "-o", str(tmp_path / "several.json"))
    one = gym_contract("export", "otel", "examples/rollout-7-0.jsonl", "-o", str(tmp_path / "one.json"))
    assert several.returncode == one.returncode == 0, several.stderr + one.stderr

    printed = gym_contract("observe", "otel", str(tmp_path / "several.json"))
    alone = gym_contract("observe", "otel", str(tmp_path / "one.json"))

    assert printed.returncode == alone.returncode == 0, printed.stderr + alone.stderr
    lines = printed.stdout.splitlines()
    rollouts = (REPO / "examples/rollouts.jsonl").read_text().splitlines()
    assert len(lines) == len(rollouts) > 1
    for line in lines:
        assert set(json.loads(line)) == {"ng_agent_observations", "ng_agent_outcome", "run_summary"}
    document = json.loads(alone.stdout)
    assert alone.stdout == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert set(document) == {"ng_agent_observations", "ng_agent_outcome", "run_summary"}


def _one_request_per_line(request: dict[str, Any]) -> list[str]:
    return [json.dumps({"resourceSpans": [part]}) for part in request["resourceSpans"]]


def test_a_collector_file_with_a_damaged_line_is_read_around_it_and_the_line_is_named(tmp_path: Path):
    lines = _one_request_per_line(to_otel(EXAMPLE_ROLLOUTS[:3]))
    lines.insert(1, '{"resourceSpans": [')
    path = tmp_path / "traces.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    result = gym_contract("observe", "otel", str(path))
    assert result.returncode == 1
    assert f"{path}:2: json_invalid" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(documents(result.stdout)) == 3


def test_input_that_cannot_be_read_exits_2_without_a_traceback(tmp_path: Path):
    missing = gym_contract("observe", "otel", str(tmp_path / "absent.json"))
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr
    garbage = gym_contract("observe", "otel", "-", stdin='{"resourceSpans": [\n  {"scopeSpans": \n')
    assert garbage.returncode == 2
    assert "Traceback" not in garbage.stderr
    assert "<stdin>:" in garbage.stderr
    assert "no span could be read" in garbage.stderr


def test_a_bundle_that_breaks_the_contract_is_printed_and_exits_1():
    bundle = {
        "source": "pi",
        "records": [{"kind": "agent_invocation", "invocation_id": "a", "parent_invocation_id": "a"}],
    }
    result = gym_contract("observe", "otel", "-", stdin=json.dumps(to_otel([bundle])))
    assert result.returncode == 1
    [document] = documents(result.stdout)
    assert document["ng_agent_observations"]["records"][0]["parent_invocation_id"] == "a"
    assert "ng_agent_observations" in result.stderr
    assert "Traceback" not in result.stderr


def test_every_field_a_span_carries_comes_back():
    bundle = {
        "source": "hermes",
        "records": [
            {"kind": "agent_invocation", "invocation_id": "root", "status": "failed", "error_type": "context_overflow",
             "duration_ms": 1234.5, "model_calls": [{"model_call_id": "m1"},
                                                    {"model_ref": {"type": "responses_api_models", "name": "policy"},
                                                     "response_id": "resp_1"}]},
            {"kind": "context_compaction", "invocation_id": "root", "observed_at": 1788358334.5, "tokens_before": 9,
             "tokens_after": 3, "outcome": "completed", "before_model_call": {"model_call_id": "m1"}},
            {"kind": "sandbox", "role": "agent", "sandbox_id": "box-1", "outcome": "completed", "wall_time_s": 2.5},
            {"kind": "agent_invocation", "invocation_id": "sub", "parent_invocation_id": "absent",
             "spawned_by_tool_call_id": "t1", "status": "incomplete"},
            {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "t1", "tool_name": "terminal",
             "sandbox_id": "box-1", "started_at": 1788358333.1, "completed_at": 1788358334.25, "duration_ms": 999.0,
             "timing_source": "executor", "status": "timeout", "error_type": "TimeoutError"},
            {"kind": "tool_call", "invocation_id": "absent", "tool_call_id": "t2", "started_at": 1788358333.1,
             "duration_ms": 500.5, "status": "cancelled"},
        ],
        "gaps": [{"code": "tool_timing_unavailable", "invocation_id": "root", "detail": "t9"}],
    }  # fmt: skip
    expected = carried(bundle)
    assert round_trip(bundle) == expected
    [observed] = observe(to_otel([bundle]))
    assert [d for d in iter_diagnostics(observed.bundle, "bundle") if d.severity == "error"] == []
    kinds = sorted(r["kind"] for r in observed.bundle["records"])
    assert kinds == ["agent_invocation", "agent_invocation", "context_compaction", "sandbox", "tool_call", "tool_call"]
    tools = {r["tool_call_id"]: r for r in expected["records"] if r["kind"] == "tool_call"}
    assert tools["t1"]["sandbox_id"] == "box-1"
    assert tools["t1"]["duration_ms"] == 999.0
    assert tools["t2"]["completed_at"] == 1788358333.6005


def span(name: str, span_id: str, parent: str | None, attributes: dict[str, Any], **more: Any) -> dict[str, Any]:
    """An OTLP/JSON span as an instrumentation other than this package writes one."""
    values = [
        {"key": key, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}
        for key, v in attributes.items()
    ]
    written = {
        "traceId": more.pop("trace", "ab" * 16),
        "spanId": span_id * 8,
        "name": name,
        "startTimeUnixNano": str(more.pop("start", 1_788_000_000_000_000_000)),
        "endTimeUnixNano": str(more.pop("end", 1_788_000_001_000_000_000)),
        "attributes": values,
        **more,
    }
    if parent is not None:
        written["parentSpanId"] = parent * 8
    return written


def request(*spans: dict[str, Any], resource: dict[str, str] | None = None) -> dict[str, Any]:
    attributes = [{"key": k, "value": {"stringValue": v}} for k, v in (resource or {}).items()]
    return {"resourceSpans": [{"resource": {"attributes": attributes}, "scopeSpans": [{"spans": list(spans)}]}]}


def test_spans_of_another_instrumentation_map_by_the_semantic_conventions_with_gaps_for_the_rest():
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder"}
    observed = observe(
        request(
            span("invoke_agent coder", "01", None, {**agent, "gen_ai.agent.id": "coder"}),
            span("chat m", "02", "01", {"gen_ai.operation.name": "chat", "gen_ai.response.id": "r1",
                                        "gen_ai.usage.input_tokens": 7}),
            span("chat m", "03", "01", {"gen_ai.operation.name": "chat"}),
            span("execute_tool Task", "04", "01", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Task",
                                                   "gen_ai.tool.call.id": "c1"}),
            span("invoke_agent sub", "05", "04", {**agent, "gen_ai.agent.id": "helper"}, status={"code": 2},
                 start=1_788_000_000_200_000_000, end=1_788_000_000_700_000_000),
            span("invoke_agent sub", "06", "01", {**agent, "gen_ai.agent.id": "twin"}),
            span("invoke_agent sub", "07", "01", {**agent, "gen_ai.agent.id": "twin"}),
            span("execute_tool x", "08", "05", {"gen_ai.operation.name": "execute_tool", "error.type": "Boom"}),
            span("execute_tool y", "09", None, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c9"},
                 end=1_000),
            span("text_completion", "0a", None, {"gen_ai.operation.name": "text_completion", "gen_ai.response.id": "r2",
                                                 "gym_contract.model_server": "judge"}),
        )
    )  # fmt: skip
    [only] = observed
    bundle = only.bundle
    assert bundle["source"] == "otel"
    assert only.rollout_id is None
    assert only.trace_ids == ["ab" * 16]
    assert [d for d in iter_diagnostics(bundle, "bundle") if d.severity == "error"] == []
    invocations = {r["invocation_id"]: r for r in bundle["records"] if r["kind"] == "agent_invocation"}
    made = "trace-" + "ab" * 16
    assert set(invocations) == {"coder", "helper", f"twin@{'06' * 8}", f"twin@{'07' * 8}", made}
    assert invocations["helper"] | {} == {
        "kind": "agent_invocation", "invocation_id": "helper", "parent_invocation_id": "coder",
        "spawned_by_tool_call_id": "c1", "status": "failed", "duration_ms": 500.0, "model_calls": [],
    }  # fmt: skip
    assert invocations["coder"]["status"] == "completed"
    assert invocations["coder"]["model_calls"] == []  # r1 names no model server, the other call no response id
    assert invocations[made]["model_calls"] == [{"model_ref": {"type": "responses_api_models", "name": "judge"},
                                                 "response_id": "r2"}]  # fmt: skip
    tools = {r["tool_call_id"]: r for r in bundle["records"] if r["kind"] == "tool_call"}
    assert set(tools) == {"c1", "c9"}
    assert tools["c1"] | {} == {
        "kind": "tool_call", "invocation_id": "coder", "tool_call_id": "c1", "tool_name": "Task", "status": "completed",
        "timing_source": "executor", "started_at": 1788000000.0, "completed_at": 1788000001.0, "duration_ms": 1000.0,
    }  # fmt: skip
    assert tools["c9"]["invocation_id"] == made
    assert "started_at" not in tools["c9"]
    gaps = {(g["code"], g["invocation_id"], g["detail"]) for g in bundle["gaps"]}
    assert ("otel_model_server_unavailable", "coder", "r1") in gaps
    assert ("model_response_id_unavailable", "coder", None) in gaps
    assert ("tool_call_identity_unavailable", "helper", f"span {'08' * 8}") in gaps
    assert ("tool_timing_unavailable", made, "c9") in gaps
    assert ("otel_agent_span_missing", made, "model call and tool spans outside any invoke_agent span") in gaps
    assert ("subagent_spawn_tool_unavailable", f"twin@{'06' * 8}", None) in gaps
    assert ("subagent_spawn_tool_unavailable", "helper", None) not in gaps
    assert {g[1] for g in gaps if g[0] == "agent_transcript_unavailable"} == set(invocations) - {made}
    assert only.summary.input_tokens == 7
    assert only.summary.tool_errors == 0


def test_model_ref_names_the_server_of_chat_spans_that_name_none():
    spans = (
        span("invoke_agent", "01", None, {"gen_ai.operation.name": "invoke_agent"}),
        span("chat", "02", "01", {"gen_ai.operation.name": "chat", "gen_ai.response.id": "r1"}),
    )
    [observed] = observe(request(*spans), model_ref="policy")
    [invocation] = [r for r in observed.bundle["records"] if r["kind"] == "agent_invocation"]
    assert invocation["invocation_id"] == "span-" + "01" * 8
    assert invocation["model_calls"] == [{"model_ref": {"type": "responses_api_models", "name": "policy"},
                                          "response_id": "r1"}]  # fmt: skip


def test_traces_of_one_rollout_are_one_bundle_and_other_traces_bundles_of_their_own():
    agent = {"gen_ai.operation.name": "invoke_agent", "gym_contract.rollout_id": "7-0"}
    observed = observe(
        request(
            span("invoke_agent", "01", None, agent, trace="01" * 16),
            span("invoke_agent", "02", None, agent, trace="02" * 16),
            span("invoke_agent", "03", None, {"gen_ai.operation.name": "invoke_agent"}, trace="03" * 16),
        )
    )
    assert [(o.rollout_id, o.trace_ids) for o in observed] == [("7-0", ["01" * 16, "02" * 16]), (None, ["03" * 16])]
    assert len(observed[0].bundle["records"]) == 2


def test_spans_whose_parents_loop_give_invocations_without_a_parent_and_a_gap():
    agent = {"gen_ai.operation.name": "invoke_agent"}
    [observed] = observe(request(span("a", "01", "02", agent), span("b", "02", "01", agent)))
    assert [d for d in iter_diagnostics(observed.bundle, "bundle") if d.severity == "error"] == []
    assert (
        sorted(g["code"] for g in observed.bundle["gaps"] if g["code"] == "cyclic_subagent_parent")
        == ["cyclic_subagent_parent"] * 2
    )


def test_a_span_that_cannot_be_read_is_a_gap_of_its_trace_and_a_line_on_stderr():
    broken = span("chat", "01", None, {"gen_ai.operation.name": "chat"})
    broken["spanId"] = "not hex"
    good = span("invoke_agent", "02", None, {"gen_ai.operation.name": "invoke_agent"})
    result = gym_contract("observe", "otel", "-", stdin=json.dumps(request(broken, good)))
    assert result.returncode == 1
    assert "resourceSpans/0/scopeSpans/0/spans/0: not read: a span needs" in result.stderr
    [document] = documents(result.stdout)
    assert [g["code"] for g in document["ng_agent_observations"]["gaps"]].count("otel_span_unreadable") == 1


def test_a_file_of_something_else_is_refused_in_one_line_naming_the_forms_read():
    result = gym_contract("observe", "otel", "examples/rollouts.jsonl")
    assert result.returncode == 2
    assert result.stderr == (
        "gym-contract: cannot read examples/rollouts.jsonl: no request holds resourceSpans; "
        "otel reads: OTLP/JSON document, Collector file (see observe --list)\n"
    )
    assert result.stdout == ""


def test_invocation_ids_stay_unique_across_the_traces_of_one_rollout_whatever_the_spans_name():
    agent = {"gen_ai.operation.name": "invoke_agent", "gym_contract.rollout_id": "7-0"}
    observed = observe(
        request(
            span("invoke_agent", "01", None, agent, trace="01" * 16),
            span("invoke_agent", "01", None, agent, trace="02" * 16),
            span("invoke_agent", "02", None, {**agent, "gen_ai.agent.id": f"span-{'03' * 8}"}, trace="02" * 16),
            span("invoke_agent", "03", None, agent, trace="02" * 16),
            span("execute_tool", "04", None, {"gen_ai.operation.name": "execute_tool", "gen_ai.agent.id": "x",
                                              "gen_ai.tool.call.id": "c"}, trace="02" * 16),
        )
    )  # fmt: skip
    [bundle] = [o.bundle for o in observed]
    ids = [r["invocation_id"] for r in bundle["records"] if r["kind"] == "agent_invocation"]
    assert len(ids) == len(set(ids)) == 5
    assert f"span-{'01' * 16}-{'01' * 8}" in ids
    assert f"span-{'03' * 8}#2" in ids
    assert [d for d in iter_diagnostics(bundle, "bundle") if d.severity == "error"] == []


def test_numbers_written_as_text_are_read_only_when_they_are_decimal_digits():
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c1"}
    odd = span("execute_tool", "01", None, tool, start="²", end="1788000001000000000")
    odd["attributes"].append({"key": "gen_ai.usage.input_tokens", "value": {"intValue": "--5"}})
    odd["attributes"].append({"key": "gym_contract.rollout_id", "value": {"intValue": "٣"}})
    [observed] = observe(request(odd))
    [record] = [r for r in observed.bundle["records"] if r["kind"] == "tool_call"]
    assert "started_at" not in record
    assert observed.rollout_id is None


def test_the_run_summary_counts_each_tool_call_once_and_the_compactions_the_export_carries():
    bundle = {
        "source": "pi",
        "records": [
            {"kind": "agent_invocation", "invocation_id": "root"},
            {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "t", "status": "failed"},
            {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "t", "status": "completed"},
            {"kind": "context_compaction", "invocation_id": "root", "tokens_before": 9},
            {"invocation_id": "root", "note": "a record of no kind, as a broken bundle may hold"},
        ],
    }
    [observed] = observe(to_otel([bundle]))
    assert (observed.summary.tool_calls, observed.summary.tool_errors, observed.summary.compactions) == (1, 1, 1)
    assert len(observed.bundle["records"]) == 4  # the record of no kind is one no bundle holds: a gap instead
    [gap] = observed.bundle["gaps"]
    assert gap["code"] == "otel_span_unreadable"
    assert "gym_contract.record" in gap["detail"]
    agent = span("invoke_agent", "01", None, {"gen_ai.operation.name": "invoke_agent"})
    [foreign] = observe(request(agent))
    assert foreign.summary.compactions is None


def test_a_record_no_json_text_holds_is_exported_as_text_all_the_same_and_read_back_as_a_gap():
    bundle = {
        "source": "pi",
        "records": [
            {"kind": "agent_invocation", "invocation_id": "root"},
            {"kind": "context_compaction", "invocation_id": "root", "summary": "\ud800"},
        ],
    }
    request = to_otel([bundle])
    text = dumps(request)  # every attribute the export adds is JSON text, whatever the record holds
    [observed] = observe(json.loads(text))
    assert [r["kind"] for r in observed.bundle["records"]] == ["agent_invocation"]
    assert [g["code"] for g in observed.bundle["gaps"]] == ["otel_span_unreadable"]


def test_a_request_of_no_spans_observes_nothing_and_exits_1():
    result = gym_contract("observe", "otel", "-", stdin=json.dumps(to_otel([])))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "holds no span" in result.stderr
