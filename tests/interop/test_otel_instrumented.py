"""GenAI spans written by the official GenAI instrumentation library through the real SDK, read back as bundles.

The agent below is a harness as an instrumented framework is one: `opentelemetry-util-genai`'s
`TelemetryHandler` (the library OpenTelemetry's GenAI instrumentations are built on) writes its
`invoke_agent`, `chat` and `execute_tool` spans while it calls a stub model server over HTTP, runs
tools in parallel threads and in asyncio tasks, lets one fail, and spawns a subagent from a tool. The
spans reach the package two ways — the span exporter on the tracer provider, and an OTLP/JSON file
in the OpenTelemetry Collector's file-exporter form, encoded by the SDK's own OTLP encoder — and
both give the same valid bundle.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util.genai.handler import TelemetryHandler

from gym_contract import iter_diagnostics
from gym_contract.recorder.otel import SpanExporter

POLICY = {"type": "responses_api_models", "name": "policy"}


class _StubModel(BaseHTTPRequestHandler):
    """A Chat Completions server that answers every request with a numbered response and its usage."""

    served = 0
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with _StubModel.lock:
            _StubModel.served += 1
            number = _StubModel.served
        answer = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": ""}}],
            "usage": {"prompt_tokens": 100 + number, "completion_tokens": 10, "total_tokens": 110 + number},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def model_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _StubModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join()


def _chat(handler: TelemetryHandler, url: str, model: str) -> None:
    """One model call to the stub server, recorded as the instrumentation records one."""
    with handler.inference("openai", request_model=model, server_address="127.0.0.1") as call:
        request = urllib.request.Request(
            f"{url}/v1/chat/completions",
            data=json.dumps({"model": model, "messages": [{"role": "user", "content": "go"}]}).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.loads(response.read())
        call.response_id = answer["id"]
        call.response_model_name = answer["model"]
        call.finish_reasons = [answer["choices"][0]["finish_reason"]]
        call.input_tokens = answer["usage"]["prompt_tokens"]
        call.output_tokens = answer["usage"]["completion_tokens"]


def _tool(handler: TelemetryHandler, parent: Any, name: str, call_id: str, fail: bool = False) -> None:
    with handler.tool(name, context=parent) as tool:
        tool.tool_call_id = call_id
        if fail:
            raise RuntimeError(f"{name} failed")


async def _async_tools(handler: TelemetryHandler, parent: Any) -> None:
    async def one(call_id: str) -> None:
        with handler.tool("read_file", context=parent) as tool:
            tool.tool_call_id = call_id
            await asyncio.sleep(0.001)

    await asyncio.gather(one("call_async_1"), one("call_async_2"))


def run_agent(provider: TracerProvider, url: str) -> None:
    """The instrumented harness: a model call, two tools in threads (one fails), two asyncio tools, a subagent."""
    handler = TelemetryHandler(tracer_provider=provider)
    with handler.invoke_local_agent(agent_name="coder", request_model="qwen3") as agent:
        _chat(handler, url, "qwen3")
        with ThreadPoolExecutor(2) as pool:
            jobs = [
                pool.submit(_tool, handler, agent.context, "bash", "call_bash"),
                pool.submit(_tool, handler, agent.context, "grep", "call_grep", True),
            ]
        for job in jobs:
            with contextlib.suppress(RuntimeError):
                job.result()
        asyncio.run(_async_tools(handler, agent.context))
        with handler.tool("delegate") as spawn:
            spawn.tool_call_id = "call_delegate"
            with handler.invoke_local_agent(agent_name="reviewer", request_model="qwen3"):
                _chat(handler, url, "qwen3")
        _chat(handler, url, "qwen3")


def _provider(processor: Any) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"gym_contract.rollout_id": "7-0", "service.name": "coder"}))
    provider.add_span_processor(processor)
    return provider


def _records(bundle: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [record for record in bundle["records"] if record["kind"] == kind]


def _check(bundle: dict[str, Any]) -> None:
    """What the harness did, counted from what it was told to do, against the bundle read from its spans."""
    assert [d for d in iter_diagnostics(bundle, "bundle") if d.severity == "error"] == []
    invocations = {record["invocation_id"]: record for record in _records(bundle, "agent_invocation")}
    assert len(invocations) == 2
    root = next(record for record in invocations.values() if record.get("parent_invocation_id") is None)
    child = next(record for record in invocations.values() if record.get("parent_invocation_id") is not None)
    assert child["parent_invocation_id"] == root["invocation_id"]
    assert child["spawned_by_tool_call_id"] == "call_delegate"
    assert [ref["response_id"] for ref in child["model_calls"]] == ["chatcmpl-2"]
    assert sorted(ref["response_id"] for ref in root["model_calls"]) == ["chatcmpl-1", "chatcmpl-3"]
    assert all(ref["model_ref"] == POLICY for record in invocations.values() for ref in record["model_calls"])
    tools = {record["tool_call_id"]: record for record in _records(bundle, "tool_call")}
    expected = {"call_bash", "call_grep", "call_async_1", "call_async_2", "call_delegate"}
    assert set(tools) == expected
    assert all(tool["invocation_id"] == root["invocation_id"] for tool in tools.values())
    assert all(tool["timing_source"] == "executor" for tool in tools.values())
    assert all(tool["started_at"] <= tool["completed_at"] for tool in tools.values())
    assert tools["call_grep"]["status"] == "failed"
    assert tools["call_grep"]["error_type"] == "RuntimeError"
    assert {tool["status"] for name, tool in tools.items() if name != "call_grep"} == {"completed"}
    # The delegate tool encloses the subagent it spawned, as the spans nest.
    assert tools["call_delegate"]["duration_ms"] >= child["duration_ms"]
    codes = sorted(gap["code"] for gap in bundle["gaps"])
    assert codes == ["agent_transcript_unavailable", "agent_transcript_unavailable"]


def test_the_span_exporter_on_a_tracer_provider_gives_the_bundle_of_an_instrumented_agent(model_server):
    exporter = SpanExporter(model_ref="policy")
    provider = _provider(SimpleSpanProcessor(exporter))
    _StubModel.served = 0
    run_agent(provider, model_server)
    [observed] = exporter.observe()
    assert observed.rollout_id == "7-0"
    _check(observed.bundle)
    summary = observed.observed().summary
    assert (summary.tool_calls, summary.tool_errors, summary.main_turns, summary.subagent_turns) == (5, 1, 2, 1)
    assert summary.subagent_calls == 1
    assert summary.input_tokens == 101 + 102 + 103
    assert summary.output_tokens == 30


def test_a_batch_processor_hands_over_the_same_spans_from_its_own_thread(model_server):
    exporter = SpanExporter(model_ref="policy")
    processor = BatchSpanProcessor(exporter, schedule_delay_millis=5)
    provider = _provider(processor)
    _StubModel.served = 0
    run_agent(provider, model_server)
    provider.force_flush()
    [observed] = exporter.observe()
    _check(observed.bundle)
    provider.shutdown()
    assert exporter.export([]).name == "FAILURE"  # after shutdown, as the SDK's exporters refuse


def _collector_line(spans: list[ReadableSpan]) -> str:
    """One line of the Collector's file exporter: the request as OTLP/JSON, ids in hex as OTLP/JSON has them."""
    request = json_format.MessageToDict(encode_spans(spans))

    def hex_ids(value: Any) -> Any:
        if isinstance(value, dict):
            ids = ("traceId", "spanId", "parentSpanId")
            return {k: base64.b64decode(v).hex() if k in ids else hex_ids(v) for k, v in value.items()}
        return [hex_ids(item) for item in value] if isinstance(value, list) else value

    return json.dumps(hex_ids(request))


def test_observe_otel_reads_the_same_spans_from_a_collector_file(model_server, tmp_path: Path):
    memory = InMemorySpanExporter()
    exporter = SpanExporter(model_ref="policy")
    provider = _provider(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _StubModel.served = 0
    run_agent(provider, model_server)
    spans = list(memory.get_finished_spans())
    # The Collector writes a request per batch: here the spans of each agent come in a request of their own.
    halves = [spans[: len(spans) // 2], spans[len(spans) // 2 :]]
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(_collector_line(half) + "\n" for half in halves))
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "observe", "otel", str(path), "--model-ref", "policy"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    [live] = exporter.observe()
    assert document["ng_agent_observations"] == live.observed().observations.model_dump(mode="json")
    assert document["run_summary"] == json.loads(json.dumps(live.summary.as_dict()))
    _check(document["ng_agent_observations"])
