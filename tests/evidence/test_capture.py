"""Captured model calls: records derived from raw exchanges, the tolerant store reader, metrics and the attachment."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import schemas
from gym_contract.capture import (
    PAYLOAD_KEYS,
    Capture,
    aggregate_metrics,
    capture_attachment,
    derive_record,
    error_category,
    metrics_diagnostics,
    read_capture,
)
from gym_contract.diagnostics import Diagnostic
from gym_contract.models import ModelCallRecord
from tests.support import REPO

POLICY = {"type": "responses_api_models", "name": "policy"}
TOKEN_FIELDS = ("tokens_in", "tokens_out", "tokens_reasoning", "tokens_total", "cached_tokens", "cache_creation_tokens")
NULL_RECORD: dict[str, Any] = {name: None for name in ModelCallRecord.model_fields} | {"tool_calls": []}


def expected(**fields: Any) -> dict[str, Any]:
    """A record dump: every field null (no tool calls) except those given."""
    return {**NULL_RECORD, **fields}


def derived(exchange: dict[str, Any], call_index: int = 0) -> dict[str, Any]:
    return derive_record(exchange, call_index).model_dump(mode="json")


def usage_record(usage: Any) -> dict[str, Any]:
    """Only the token fields of the record of a response with this `usage`."""
    record = derived({"model_call_id": "c", "response": {"usage": usage}})
    return {name: record[name] for name in (*TOKEN_FIELDS, "cache_hit")}


def tokens(**fields: Any) -> dict[str, Any]:
    return {name: None for name in (*TOKEN_FIELDS, "cache_hit")} | fields


def exchange(model_call_id: str, **fields: Any) -> dict[str, Any]:
    """A raw capture line with the middleware's bookkeeping filled in."""
    return {
        "model_call_id": model_call_id,
        "dialect": "responses",
        "model_ref": POLICY,
        "started_at": 1_786_000_000.0,
        "completed_at": 1_786_000_001.0,
        "latency_ms": 1000.0,
        "latency_ttft_ms": None,
        "status_code": 200,
        "error_category": None,
        **fields,
    }


# --- error_category (CONTRACT 3.4) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "category"),
    [
        (408, "timeout"),
        (504, "timeout"),
        (429, "rate_limit"),
        (401, "auth"),
        (403, "auth"),
        (404, "not_found"),
        (400, "client_error"),
        (418, "client_error"),
        (499, "client_error"),
        (500, "upstream_error"),
        (502, "upstream_error"),
        (503, "upstream_error"),
        (599, "upstream_error"),
        (200, None),
        (302, None),
        (399, None),
        (None, None),
    ],
)
def test_an_http_status_maps_to_its_error_category(status, category):
    assert error_category(status) == category


# Named like the exceptions of HTTP clients (httpx), which is what the classification reads.
class ReadTimeout(Exception):  # noqa: N818
    pass


class ConnectError(Exception):
    pass


@pytest.mark.parametrize(
    ("status", "exception", "category"),
    [
        (None, TimeoutError(), "timeout"),
        (None, ReadTimeout(), "timeout"),
        (None, ConnectError(), "connection"),
        (None, ConnectionResetError(), "connection"),
        (None, RuntimeError("boom"), "exception"),
        (503, ConnectError(), "upstream_error"),
        (429, TimeoutError(), "rate_limit"),
        (200, RuntimeError("body cut"), "exception"),
    ],
)
def test_an_exception_is_classed_by_the_status_first_then_by_its_type_name(status, exception, category):
    assert error_category(status, exception) == category


def test_a_boolean_is_not_a_status_code():
    assert error_category(True) is None  # type: ignore[arg-type]


# --- token normalisation (CONTRACT 3.5.1) ------------------------------------------------------------


def test_anthropic_cache_reads_and_writes_are_folded_into_input_tokens():
    usage = {
        "input_tokens": 100,
        "cache_read_input_tokens": 200,
        "cache_creation_input_tokens": 30,
        "output_tokens": 50,
    }
    assert usage_record(usage) == tokens(
        tokens_in=330, tokens_out=50, tokens_total=380, cached_tokens=200, cache_hit=True, cache_creation_tokens=30
    )


def test_a_fully_cached_anthropic_call_without_input_tokens_counts_its_cache_reads():
    usage = {"cache_read_input_tokens": 500, "output_tokens": 7}
    assert usage_record(usage) == tokens(
        tokens_in=500, tokens_out=7, tokens_total=507, cached_tokens=500, cache_hit=True
    )


def test_all_zero_cache_keys_without_input_tokens_leave_input_unknown_not_zero():
    usage = {"cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}
    assert usage_record(usage) == tokens(tokens_out=5, cached_tokens=0, cache_hit=False, cache_creation_tokens=0)


def test_openai_input_tokens_already_include_cached_tokens_and_are_not_folded():
    usage = {
        "input_tokens": 90,
        "input_tokens_details": {"cached_tokens": 40},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": 110,
    }
    assert usage_record(usage) == tokens(
        tokens_in=90, tokens_out=20, tokens_reasoning=12, tokens_total=110, cached_tokens=40, cache_hit=True
    )


def test_chat_completions_usage_is_read_from_its_prompt_and_completion_names():
    usage = {
        "prompt_tokens": 530,
        "completion_tokens": 41,
        "total_tokens": 571,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 18},
    }
    assert usage_record(usage) == tokens(
        tokens_in=530, tokens_out=41, tokens_reasoning=18, tokens_total=571, cached_tokens=0, cache_hit=False
    )


def test_a_reported_total_is_kept_as_given_even_when_it_disagrees_with_in_plus_out():
    assert usage_record({"input_tokens": 1, "output_tokens": 2, "total_tokens": 999})["tokens_total"] == 999


def test_the_total_is_in_plus_out_only_when_both_are_known():
    assert usage_record({"input_tokens": 3, "output_tokens": 4})["tokens_total"] == 7
    assert usage_record({"input_tokens": 3})["tokens_total"] is None


def test_reasoning_and_cached_counts_fall_back_to_the_flat_names():
    usage = {"input_tokens": 10, "cached_input_tokens": 6, "output_tokens": 5, "reasoning_output_tokens": 3}
    assert usage_record(usage) == tokens(
        tokens_in=10, tokens_out=5, tokens_reasoning=3, tokens_total=15, cached_tokens=6, cache_hit=True
    )


@pytest.mark.parametrize(
    ("usage", "cached"),
    [
        ({"prompt_tokens_details": {"cached_tokens": 1}, "cache_read_input_tokens": 2, "cached_input_tokens": 3}, 1),
        ({"input_tokens_details": {"cached_input_tokens": 4}, "cached_input_tokens": 3}, 4),
        ({"prompt_tokens_details": {"cached_tokens": None}, "input_tokens_details": {"cached_tokens": 5}}, 5),
        ({"prompt_tokens_details": {"cached_tokens": -1}, "cache_read_input_tokens": 2}, 2),
        ({"cached_input_tokens": 3}, 3),
        ({}, None),
    ],
)
def test_cached_tokens_follow_the_lookup_order_of_the_contract(usage, cached):
    assert usage_record(usage)["cached_tokens"] == cached


@pytest.mark.parametrize("bad", [True, False, -1, 1.5, 2.0, "5", None, [3], {"n": 3}])
def test_only_real_non_negative_ints_are_token_counts(bad):
    usage = {
        "input_tokens": bad,
        "output_tokens": bad,
        "total_tokens": bad,
        "output_tokens_details": {"reasoning_tokens": bad},
        "input_tokens_details": {"cached_tokens": bad},
    }
    assert usage_record(usage) == tokens()


def test_a_bad_input_tokens_value_falls_back_to_prompt_tokens():
    assert usage_record({"input_tokens": True, "prompt_tokens": 8})["tokens_in"] == 8


def test_a_response_without_usage_has_every_count_unknown():
    assert usage_record("not an object") == tokens()
    assert derived({"model_call_id": "c", "response": {"id": "r"}}) == expected(
        model_call_id="c", response_id="r", call_index=0, response={"id": "r"}
    )


# --- whole exchanges of each dialect (CONTRACT 3.3, 3.5) ---------------------------------------------


def test_a_responses_call_with_reasoning_and_a_function_call():
    request = {"model": "m-req", "input": "Factor 391."}
    response = {
        "id": "resp_1",
        "status": "completed",
        "model": "m",
        "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "a"}, {"text": "b"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": ""}]},
            {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": '{"q": "x"}'},
            {"type": "message", "content": [{"type": "output_text", "text": "done"}]},
        ],
        "usage": {"input_tokens": 90, "output_tokens": 20, "total_tokens": 110},
    }
    line = exchange("call-a", latency_ttft_ms=120.5, request=request, response=response)
    assert derived(line, 3) == expected(
        model_call_id="call-a",
        response_id="resp_1",
        call_index=3,
        model_ref=POLICY,
        model="m",
        dialect="responses",
        status_code=200,
        response_status="completed",
        started_at=1_786_000_000.0,
        completed_at=1_786_000_001.0,
        tokens_in=90,
        tokens_out=20,
        tokens_total=110,
        request=request,
        response=response,
        tool_calls=[{"call_id": "call_1", "name": "lookup", "arguments": {"q": "x"}}],
        reasoning_content="a\nb",
        latency_total_ms=1000.0,
        latency_ttft_ms=120.5,
    )


def test_an_incomplete_responses_call_takes_its_finish_reason_from_incomplete_details():
    response = {"id": "resp_2", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    record = derived(exchange("call-b", error_category="incomplete", response=response))
    assert (record["response_status"], record["finish_reason"], record["error_category"]) == (
        "incomplete",
        "max_output_tokens",
        "incomplete",
    )


def test_a_chat_call_with_tool_calls_and_reasoning_content():
    response = {
        "id": "chatcmpl-1",
        "model": "qwen",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "reasoning_content": "think",
                    "reasoning": "ignored: reasoning_content comes first",
                    "tool_calls": [
                        {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
                        {"id": "t2", "type": "function", "function": {"name": "g", "arguments": "{not json"}},
                    ],
                },
            },
            {"index": 1, "finish_reason": "stop", "message": {"tool_calls": [{"id": "t9"}]}},
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }
    line = exchange("call-c", dialect="chat", request={"model": "qwen-req"}, response=response)
    record = derived(line)
    assert record["tool_calls"] == [
        {"call_id": "t1", "name": "f", "arguments": {"a": 1}},
        {"call_id": "t2", "name": "g", "arguments": {"_raw": "{not json"}},
    ]
    assert (record["finish_reason"], record["reasoning_content"], record["model"]) == ("tool_calls", "think", "qwen")
    assert (record["tokens_in"], record["tokens_out"], record["tokens_total"]) == (50, 10, 60)


def test_a_chat_message_without_reasoning_content_uses_its_reasoning_field():
    response = {"choices": [{"message": {"reasoning": "r", "content": "x"}}]}
    assert derived(exchange("c", dialect="chat", response=response))["reasoning_content"] == "r"


def test_a_truncated_stream_keeps_its_partial_reconstruction_raw_text_and_category():
    raw = 'data: {"id":"chatcmpl-9","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'
    partial = {"id": "chatcmpl-9", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hel"}}]}
    line = exchange(
        "call-d",
        dialect="chat",
        latency_ttft_ms=80.0,
        error_category="stream_truncated",
        request={"model": "qwen", "stream": True},
        response=partial,
        response_raw=raw,
    )
    assert derived(line) == expected(
        model_call_id="call-d",
        response_id="chatcmpl-9",
        call_index=0,
        model_ref=POLICY,
        model="qwen",
        dialect="chat",
        status_code=200,
        started_at=1_786_000_000.0,
        completed_at=1_786_000_001.0,
        request={"model": "qwen", "stream": True},
        response=partial,
        response_raw=raw,
        error_category="stream_truncated",
        latency_total_ms=1000.0,
        latency_ttft_ms=80.0,
    )


def test_a_rate_limited_call_has_only_the_raw_error_body_and_unknown_counts():
    body = '{"error":{"type":"rate_limit_error","message":"slow down"}}'
    line = exchange(
        "call-e",
        dialect="messages",
        status_code=429,
        error_category=error_category(429),
        latency_ms=35.5,
        request={"model": "claude-x", "stream": True},
        response=None,
        response_raw=body,
    )
    assert derived(line, 1) == expected(
        model_call_id="call-e",
        call_index=1,
        model_ref=POLICY,
        model="claude-x",
        dialect="messages",
        status_code=429,
        started_at=1_786_000_000.0,
        completed_at=1_786_000_001.0,
        request={"model": "claude-x", "stream": True},
        response_raw=body,
        error_category="rate_limit",
        latency_total_ms=35.5,
    )


def test_an_anthropic_call_with_thinking_and_tool_use_blocks():
    response = {
        "id": "msg_1",
        "type": "message",
        "model": "claude-x",
        "content": [
            {"type": "thinking", "thinking": "first", "signature": "s"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "thinking", "thinking": "second"},
            {"type": "text", "text": "Calling the tool."},
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "ls"}},
            {"type": "tool_use", "id": "toolu_2", "name": "noop"},
        ],
        "stop_reason": "tool_use",
        "usage": {
            "input_tokens": 100,
            "cache_read_input_tokens": 200,
            "cache_creation_input_tokens": 30,
            "output_tokens": 50,
        },
    }
    line = exchange("call-f", dialect="messages", response=response)
    assert derived(line) == expected(
        model_call_id="call-f",
        response_id="msg_1",
        call_index=0,
        model_ref=POLICY,
        model="claude-x",
        dialect="messages",
        status_code=200,
        finish_reason="tool_use",
        started_at=1_786_000_000.0,
        completed_at=1_786_000_001.0,
        tokens_in=330,
        tokens_out=50,
        tokens_total=380,
        response=response,
        tool_calls=[
            {"call_id": "toolu_1", "name": "bash", "arguments": {"cmd": "ls"}},
            {"call_id": "toolu_2", "name": "noop", "arguments": {}},
        ],
        reasoning_content="first\nsecond",
        cache_hit=True,
        cached_tokens=200,
        cache_creation_tokens=30,
        latency_total_ms=1000.0,
    )


@pytest.mark.parametrize(
    ("arguments", "parsed"),
    [
        ('{"a": [1, 2]}', {"a": [1, 2]}),
        ("not json", {"_raw": "not json"}),
        ("", {"_raw": ""}),
        ("[1, 2]", {"_raw": "[1, 2]"}),
        ('"text"', {"_raw": '"text"'}),
        ({"kept": True}, {"kept": True}),
        (None, {}),
        ([1, 2], {"_raw": "[1, 2]"}),
    ],
)
def test_tool_arguments_are_an_object_and_text_that_is_not_one_is_kept_raw(arguments, parsed):
    response = {"output": [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": arguments}]}
    assert derived(exchange("c", response=response))["tool_calls"] == [
        {"call_id": "c1", "name": "f", "arguments": parsed}
    ]


def test_a_request_body_that_is_not_an_object_is_kept_as_raw_text_only():
    record = derived(exchange("c", request="plain text body", request_raw="plain text body", response=[1, 2]))
    assert (record["request"], record["request_raw"], record["response"]) == (None, "plain text body", None)


def test_the_model_falls_back_to_the_request_when_the_response_names_none():
    assert derived(exchange("c", request={"model": "asked"}, response={"model": None}))["model"] == "asked"
    assert derived(exchange("c", request={"model": "asked"}, response={"model": "served"}))["model"] == "served"


def test_fields_of_the_wrong_type_read_as_unknown():
    line = {
        "model_call_id": 7,
        "dialect": ["chat"],
        "model_ref": {"type": "other", "name": "x"},
        "started_at": "yesterday",
        "completed_at": True,
        "latency_ms": -5.0,
        "latency_ttft_ms": "fast",
        "status_code": "200",
        "error_category": 429,
        "request_raw": {"not": "text"},
        "response": {"id": 42, "status": 1, "stop_reason": None, "choices": "none", "output": {}, "content": "x"},
    }
    assert derived(line) == expected(
        call_index=0,
        response={"id": 42, "status": 1, "stop_reason": None, "choices": "none", "output": {}, "content": "x"},
    )


def test_a_negative_call_index_is_refused():
    with pytest.raises(ValueError, match="call_index"):
        derive_record({}, -1)


# --- the capture store (CONTRACT 3.2) ----------------------------------------------------------------


def write_capture(directory: Path, rollout_id: str, lines: list[bytes | dict[str, Any]]) -> Path:
    path = directory / f"{rollout_id}.capture.jsonl"
    path.write_bytes(
        b"".join((json.dumps(line).encode() if isinstance(line, dict) else line) + b"\n" for line in lines)
    )
    return path


def test_damaged_lines_leave_holes_in_call_index(tmp_path):
    write_capture(tmp_path, "7-0", [exchange("a"), b"{garbage", exchange("b")])
    capture = read_capture(tmp_path, "7-0")
    assert [(r.model_call_id, r.call_index) for r in capture.records] == [("a", 0), ("b", 2)]
    assert [(d.code, d.line, d.source) for d in capture.damaged_lines] == [
        ("json_invalid", 2, str(tmp_path / "7-0.capture.jsonl"))
    ]
    assert (capture.found, capture.incomplete, capture.unreadable) == (True, False, None)


def test_blank_lines_take_no_position(tmp_path):
    write_capture(tmp_path, "7-0", [b"", exchange("a"), b"   ", b"\r", exchange("b")])
    capture = read_capture(tmp_path, "7-0")
    assert [r.call_index for r in capture.records] == [0, 1]
    assert capture.damaged_lines == ()


def test_every_kind_of_damaged_line_is_named_with_its_line_number(tmp_path):
    lines: list[bytes | dict[str, Any]] = [b"[1, 2]", b'"text"', b'{"model_call_id": "\xff"}', b"{} {}", exchange("a")]
    write_capture(tmp_path, "7-0", lines)
    capture = read_capture(tmp_path, "7-0")
    assert [(d.code, d.line) for d in capture.damaged_lines] == [
        ("record_not_object", 1),
        ("record_not_object", 2),
        ("utf8_invalid", 3),
        ("json_invalid", 4),
    ]
    assert [r.call_index for r in capture.records] == [4]


def test_a_line_over_the_size_limit_is_damaged_and_keeps_its_position(tmp_path):
    write_capture(tmp_path, "7-0", [exchange("a"), exchange("b", request={"model": "m" * 500}), exchange("c")])
    capture = read_capture(tmp_path, "7-0", max_line_bytes=400)
    assert [(r.model_call_id, r.call_index) for r in capture.records] == [("a", 0), ("c", 2)]
    assert [(d.code, d.line) for d in capture.damaged_lines] == [("line_too_long", 2)]


def test_a_repeated_key_is_read_as_the_reference_reads_it_with_the_last_value_winning(tmp_path):
    write_capture(tmp_path, "7-0", [b'{"model_call_id": "first", "model_call_id": "last"}'])
    capture = read_capture(tmp_path, "7-0")
    assert [r.model_call_id for r in capture.records] == ["last"]
    assert capture.damaged_lines == ()


def test_a_capture_file_can_be_named_directly(tmp_path):
    path = write_capture(tmp_path, "7-0", [exchange("a")])
    (tmp_path / "7-0.capture.incomplete").touch()
    by_file, by_directory = read_capture(path, "7-0"), read_capture(str(tmp_path), "7-0")
    assert by_file == by_directory
    assert (by_file.found, by_file.incomplete, len(by_file.records)) == (True, True, 1)


def test_the_capture_file_of_another_rollout_is_refused(tmp_path):
    path = write_capture(tmp_path, "7-0", [exchange("a")])
    with pytest.raises(ValueError, match="another rollout"):
        read_capture(path, "7-1")


def test_a_path_that_is_neither_a_directory_nor_a_capture_file_is_refused(tmp_path):
    other = tmp_path / "rollouts.jsonl"
    other.write_text("{}\n")
    with pytest.raises(ValueError, match="neither a capture directory"):
        read_capture(other, "7-0")


@pytest.mark.parametrize("rollout_id", ["", "a/b", "../a", "a b", "é", "7-0\n", "a\\b"])
def test_a_rollout_id_that_cannot_name_a_file_is_refused_before_any_reading(tmp_path, rollout_id):
    with pytest.raises(ValueError, match="rollout id"):
        read_capture(tmp_path, rollout_id)


@pytest.mark.parametrize("rollout_id", ["7-0", ".hidden", "-x", "a_b.c-a1", "..", "A9"])
def test_file_safe_rollout_ids_are_accepted_even_where_the_url_pattern_is_stricter(tmp_path, rollout_id):
    assert read_capture(tmp_path, rollout_id).found is False


def test_a_capture_file_that_cannot_be_read_is_reported_not_raised(tmp_path):
    (tmp_path / "7-0.capture.jsonl").mkdir()
    capture = read_capture(tmp_path, "7-0")
    assert capture.found is True
    assert capture.unreadable
    assert capture_attachment(capture)["gaps"] == [{"code": "model_call_capture_unreadable"}]


def test_an_exchange_that_cannot_become_a_record_counts_as_damaged(tmp_path, monkeypatch):
    from gym_contract.evidence import _capture as capture_module

    def failing(exchange: dict[str, Any], call_index: int) -> ModelCallRecord:
        if exchange.get("model_call_id") == "bad":
            return ModelCallRecord.model_validate({"call_index": -1})
        return derive_record(exchange, call_index)

    monkeypatch.setattr(capture_module, "derive_record", failing)
    write_capture(tmp_path, "7-0", [exchange("bad"), exchange("good")])
    capture = read_capture(tmp_path, "7-0")
    assert [(d.code, d.line) for d in capture.damaged_lines] == [("schema_violation", 1)]
    assert [r.call_index for r in capture.records] == [1]


# --- metrics (CONTRACT 3.7) --------------------------------------------------------------------------


def call(index: int, **fields: Any) -> ModelCallRecord:
    return ModelCallRecord.model_validate({"call_index": index, **fields})


def test_metrics_sum_the_known_values_and_count_every_call():
    records = [
        call(0, tokens_in=10, tokens_out=5, tokens_total=15, cached_tokens=0, latency_total_ms=100.25),
        call(1, tokens_in=20, tokens_out=None, tokens_reasoning=None, latency_total_ms=None),
        call(2, tokens_in=30, tokens_out=7, tokens_total=37, cached_tokens=4, latency_total_ms=0.5),
    ]
    assert aggregate_metrics(records).model_dump() == {
        "tokens_in": 60,
        "tokens_out": 12,
        "tokens_reasoning": None,
        "tokens_total": 52,
        "cached_tokens": 4,
        "latency_total_ms": 100.75,
        "num_calls": 3,
    }


def test_metrics_of_no_calls_are_all_unknown():
    assert aggregate_metrics([]).model_dump() == {
        "tokens_in": None,
        "tokens_out": None,
        "tokens_reasoning": None,
        "tokens_total": None,
        "cached_tokens": None,
        "latency_total_ms": None,
        "num_calls": 0,
    }


def test_a_partial_sum_is_warned_about_at_its_metric():
    records = [call(0, tokens_in=10, tokens_out=5), call(1, tokens_in=20)]
    found = metrics_diagnostics(records)
    assert [(d.code, d.severity, d.path) for d in found] == [("metrics_partial_sum", "warning", "/metrics/tokens_out")]
    assert found[0].message == "tokens_out 5 sums 1 of 2 calls; the rest are unknown"


def test_no_partial_sum_when_a_field_is_known_for_every_call_or_for_none():
    assert metrics_diagnostics([call(0, tokens_in=1), call(1, tokens_in=0)]) == []
    assert metrics_diagnostics([]) == []


# --- the attachment (CONTRACT 3.6, 2.6) --------------------------------------------------------------

CAPTURE_VALIDATOR = schemas.validator("model_call_capture")


def damage(line: int) -> Diagnostic:
    return Diagnostic.of("json_invalid", "bad", line=line)


def test_the_attachment_of_a_damaged_incomplete_capture(tmp_path):
    request, response = {"model": "m"}, {"id": "r1", "usage": {"input_tokens": 9, "output_tokens": 1}}
    write_capture(tmp_path, "7-0", [b"nope", exchange("a", request=request, response=response), b"[]"])
    (tmp_path / "7-0.capture.incomplete").touch()
    attachment = capture_attachment(read_capture(tmp_path, "7-0"), include_payloads=False)
    assert attachment == {
        "rollout_id": "7-0",
        "metrics": {
            "tokens_in": 9,
            "tokens_out": 1,
            "tokens_reasoning": None,
            "tokens_total": 10,
            "cached_tokens": None,
            "latency_total_ms": 1000.0,
            "num_calls": 1,
        },
        "calls": [
            {
                key: value
                for key, value in expected(
                    model_call_id="a",
                    response_id="r1",
                    call_index=1,
                    model_ref=POLICY,
                    model="m",
                    dialect="responses",
                    status_code=200,
                    started_at=1_786_000_000.0,
                    completed_at=1_786_000_001.0,
                    tokens_in=9,
                    tokens_out=1,
                    tokens_total=10,
                    latency_total_ms=1000.0,
                ).items()
                if key not in PAYLOAD_KEYS
            }
        ],
        "gaps": [
            {"code": "model_call_capture_records_unreadable", "detail": "count=2"},
            {"code": "model_call_capture_incomplete"},
        ],
    }
    assert CAPTURE_VALIDATOR.is_valid(attachment)


def test_payloads_stay_in_the_calls_unless_left_out():
    record = derive_record(exchange("a", request={"model": "m"}, request_raw="x", response={"id": "r"}), 0)
    capture = Capture("7-0", records=(record,), found=True)
    kept = capture_attachment(capture)["calls"][0]
    assert {key: kept[key] for key in PAYLOAD_KEYS} == {
        "request": {"model": "m"},
        "request_raw": "x",
        "response": {"id": "r"},
        "response_raw": None,
    }
    assert PAYLOAD_KEYS.isdisjoint(capture_attachment(capture, include_payloads=False)["calls"][0])
    assert "gaps" not in capture_attachment(capture)


@pytest.mark.parametrize(
    ("capture", "gaps"),
    [
        (Capture("7-0"), [{"code": "model_call_capture_no_records"}]),
        (Capture("7-0", found=True), [{"code": "model_call_capture_no_records"}]),
        (Capture("7-0", found=True, incomplete=True), [{"code": "model_call_capture_incomplete"}]),
        (
            Capture("7-0", damaged_lines=(damage(1),), found=True),
            [{"code": "model_call_capture_records_unreadable", "detail": "count=1"}],
        ),
        (
            Capture("7-0", damaged_lines=(damage(1),), found=True, incomplete=True),
            [
                {"code": "model_call_capture_records_unreadable", "detail": "count=1"},
                {"code": "model_call_capture_incomplete"},
            ],
        ),
        (
            Capture("7-0", damaged_lines=(damage(2),), found=True, incomplete=True, unreadable="I/O error"),
            [{"code": "model_call_capture_unreadable"}],
        ),
    ],
)
def test_each_capture_gap_is_reported_when_its_condition_holds(capture, gaps):
    attachment = capture_attachment(capture)
    assert attachment["gaps"] == gaps
    assert attachment["calls"] == []
    assert CAPTURE_VALIDATOR.is_valid(attachment)


def test_a_missing_store_and_an_empty_file_both_have_no_records(tmp_path):
    missing = read_capture(tmp_path / "nowhere", "7-0")
    assert (missing.found, missing.incomplete, missing.records, missing.damaged_lines) == (False, False, (), ())
    (tmp_path / "7-0.capture.jsonl").write_bytes(b"\n\n")
    empty = read_capture(tmp_path, "7-0")
    assert empty.found is True
    for capture in (missing, empty):
        assert capture_attachment(capture)["gaps"] == [{"code": "model_call_capture_no_records"}]


def test_a_marker_without_a_file_is_found_and_incomplete(tmp_path):
    (tmp_path / "7-0.capture.incomplete").touch()
    capture = read_capture(tmp_path, "7-0")
    assert (capture.found, capture.incomplete, capture.records) == (True, True, ())


def test_the_example_capture_directory_reads_as_its_readme_says():
    capture = read_capture(REPO / "examples" / "capture", "7-0")
    assert capture.damaged_lines == ()
    assert [(r.dialect, r.status_code, r.error_category) for r in capture.records] == [
        ("responses", 200, None),
        ("chat", 429, "rate_limit"),
        ("chat", 200, None),
        ("messages", 200, None),
    ]
    attachment = capture_attachment(capture, include_payloads=False)
    assert attachment["metrics"] == {
        "tokens_in": 1272,
        "tokens_out": 187,
        "tokens_reasoning": 82,
        "tokens_total": 1459,
        "cached_tokens": 584,
        "latency_total_ms": 3060.41,
        "num_calls": 4,
    }
    assert "gaps" not in attachment
    assert [d.path for d in metrics_diagnostics(capture.records)] == [
        "/metrics/tokens_in",
        "/metrics/tokens_out",
        "/metrics/tokens_reasoning",
        "/metrics/tokens_total",
        "/metrics/cached_tokens",
    ]
    assert CAPTURE_VALIDATOR.is_valid(capture_attachment(capture))


# --- laws (Hypothesis) -------------------------------------------------------------------------------

# Arbitrary JSON, with the keys and values the derivation looks for mixed in so that they turn up.
KNOWN_KEYS = ("model_call_id", "response", "usage", "choices", "message", "output", "content", "type", "input_tokens")
KNOWN_VALUES = ("function_call", "reasoning", "tool_use", "thinking", "responses_api_models", '{"a": 1}')

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(KNOWN_VALUES),
)
json_keys = st.sampled_from(KNOWN_KEYS) | st.text(max_size=6)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(json_keys, children, max_size=6),
    max_leaves=40,
)
json_objects = st.dictionaries(json_keys, json_values, max_size=12)


def sometimes_anything(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`value` nine draws in ten, any JSON value in the tenth (one_of would give each half the draws)."""
    return st.integers(min_value=0, max_value=9).flatmap(lambda draw: json_values if draw == 0 else value)


def shaped(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects of a known shape, where any field may be missing or, now and then, be any JSON value instead."""
    return st.fixed_dictionaries({}, optional={key: sometimes_anything(value) for key, value in fields.items()})


counts = st.integers(min_value=-3, max_value=10**6) | st.booleans() | st.none()
short_text = st.text(max_size=6)
tool_arguments = short_text | st.sampled_from(['{"a": 1}', "[1]", ""]) | json_objects
FLAT_USAGE_KEYS = (
    "input_tokens",
    "prompt_tokens",
    "output_tokens",
    "completion_tokens",
    "total_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "cached_input_tokens",
    "reasoning_output_tokens",
)
usage_shapes = shaped(
    **dict.fromkeys(FLAT_USAGE_KEYS, counts),
    input_tokens_details=shaped(cached_tokens=counts, cached_input_tokens=counts),
    prompt_tokens_details=shaped(cached_tokens=counts, cached_input_tokens=counts),
    output_tokens_details=shaped(reasoning_tokens=counts),
    completion_tokens_details=shaped(reasoning_tokens=counts),
)
output_items = shaped(
    type=st.sampled_from(["function_call", "reasoning", "message"]),
    call_id=short_text,
    name=short_text,
    arguments=tool_arguments,
    summary=st.lists(shaped(text=short_text), max_size=3),
)
choices = shaped(
    finish_reason=short_text,
    message=shaped(
        tool_calls=st.lists(shaped(id=short_text, function=shaped(name=short_text, arguments=tool_arguments))),
        reasoning_content=short_text,
        reasoning=short_text,
    ),
)
content_blocks = shaped(
    type=st.sampled_from(["thinking", "tool_use", "text"]),
    thinking=short_text,
    id=short_text,
    name=short_text,
    input=tool_arguments,
)
responses = shaped(
    id=short_text,
    model=short_text,
    status=short_text,
    stop_reason=short_text,
    incomplete_details=shaped(reason=short_text),
    usage=usage_shapes,
    output=st.lists(output_items, max_size=3),
    choices=st.lists(choices, max_size=2),
    content=st.lists(content_blocks, max_size=3),
)
shaped_exchanges = shaped(
    model_call_id=short_text,
    dialect=st.sampled_from(["responses", "chat", "messages"]),
    model_ref=shaped(type=st.just("responses_api_models"), name=short_text),
    started_at=st.floats(min_value=0, max_value=2e9),
    completed_at=st.floats(min_value=0, max_value=2e9),
    latency_ms=st.floats(min_value=-10, max_value=1e6),
    latency_ttft_ms=st.floats(min_value=-10, max_value=1e6),
    status_code=st.integers(min_value=100, max_value=599),
    error_category=st.sampled_from(["rate_limit", "stream_truncated", "capture_parse_error"]),
    request=shaped(model=short_text),
    response=responses,
    request_raw=short_text,
    response_raw=short_text,
)
exchanges = sometimes_anything(shaped_exchanges)


@given(exchanges, st.integers(min_value=0, max_value=10_000))
def test_deriving_a_record_never_raises_and_gives_a_valid_record(exchange_line, call_index):
    record = derive_record(exchange_line, call_index)
    assert record.call_index == call_index
    assert schemas.validator("model_call_record").is_valid(record.model_dump(mode="json"))


@given(exchanges)
def test_token_counts_are_never_negative_and_never_booleans(exchange_line):
    record = derive_record(exchange_line, 0)
    for name in TOKEN_FIELDS:
        value = getattr(record, name)
        assert value is None or (type(value) is int and value >= 0), (name, value)
    assert record.cache_hit is None if record.cached_tokens is None else record.cache_hit == (record.cached_tokens > 0)


@given(st.lists(exchanges, max_size=6), st.randoms(use_true_random=False))
def test_metrics_do_not_depend_on_the_order_of_the_calls(exchange_lines, rng: random.Random):
    records = [derive_record(line, index) for index, line in enumerate(exchange_lines)]
    shuffled = records[:]
    rng.shuffle(shuffled)
    assert aggregate_metrics(shuffled) == aggregate_metrics(records)
    assert metrics_diagnostics(shuffled) == metrics_diagnostics(records)


file_safe_ids = st.text(alphabet="abcXYZ019._-", min_size=1, max_size=12)


@given(
    file_safe_ids,
    st.lists(exchanges, max_size=4),
    st.lists(st.integers(min_value=1, max_value=99), max_size=3),
    st.booleans(),
    st.booleans(),
    st.none() | st.text(min_size=1, max_size=10),
    st.booleans(),
)
def test_the_attachment_always_validates_against_its_schema(
    rollout_id, exchange_lines, damaged_at, incomplete, found, unreadable, include_payloads
):
    capture = Capture(
        rollout_id,
        records=tuple(derive_record(line, index) for index, line in enumerate(exchange_lines)),
        damaged_lines=tuple(map(damage, damaged_at)),
        incomplete=incomplete,
        found=found,
        unreadable=unreadable,
    )
    attachment = capture_attachment(capture, include_payloads)
    assert CAPTURE_VALIDATOR.is_valid(attachment)
    json.dumps(attachment, allow_nan=False)  # JSON-ready: plain JSON types only
    assert attachment.get("gaps", None) != []
    assert all(None not in gap.values() for gap in attachment.get("gaps", []))
