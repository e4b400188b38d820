"""The recorder call by call: ids checked or made, each kind of misuse as its gap and warning (or strict, raised),
explicit times as an exporter gives them, model-call references, compaction boundaries, outcomes and summaries."""

from __future__ import annotations

import asyncio
import itertools
import math
import threading
from typing import Any

import pytest

from gym_contract import iter_diagnostics
from gym_contract.producers import Observed
from gym_contract.recorder import MonotonicClock, Recorder, RecorderError, RecorderWarning

BASE = 1_790_000_000.0
POLICY = {"type": "responses_api_models", "name": "policy"}


def ticking(step: float = 0.5) -> Any:
    counter = itertools.count()
    return lambda: BASE + step * next(counter)


def gaps(observed: Observed) -> list[tuple[str, str | None, str | None]]:
    return [(gap.code, gap.invocation_id, gap.detail) for gap in observed.observations.gaps]


def records(observed: Observed, kind: str) -> list[dict[str, Any]]:
    document = observed.observations.model_dump(mode="json")
    return [record for record in document["records"] if record["kind"] == kind]


def no_errors(observed: Observed) -> bool:
    bundle = observed.observations.model_dump(mode="json")
    return not [d for d in iter_diagnostics(bundle, "bundle") if d.severity == "error"]


def test_ids_are_made_when_not_given_and_checked_when_given() -> None:
    recorder = Recorder(clock=ticking())
    with recorder.invocation() as root:
        with root.tool() as made, root.tool("call_7"):
            child = recorder.invocation()
            child.end()
        other = recorder.invocation(parent=None)
        other.end()
    with pytest.warns(RecorderWarning, match="invocation_id must be a non-empty string, not ''; one is made instead"):
        bad = recorder.invocation("", parent=None)
    bad.end()
    with recorder.invocation("other", parent=None) as other_root:
        other_root.tool("call-2").end()  # given: the id a made one would have been next
        with other_root.tool() as made_later:
            assert made_later.tool_call_id == "call-3"
    observed = recorder.finish()

    assert made.tool_call_id == "call-1"
    assert child.invocation_id == "root.child-1"
    assert (other.invocation_id, bad.invocation_id) == ("root-2", "root-3")
    assert [r["spawned_by_tool_call_id"] for r in records(observed, "agent_invocation")] == [
        None,
        "call_7",
        None,
        None,
        None,
    ]
    assert gaps(observed) == [
        ("recorder_misuse", None, "invocation_id must be a non-empty string, not ''; one is made instead")
    ]


def test_ending_a_tool_twice_keeps_the_first_end() -> None:
    recorder = Recorder(clock=ticking())
    with recorder.invocation() as root:
        call = root.tool("call_1", "bash")
        call.end("failed", error_type="exit_1")
        with pytest.warns(RecorderWarning, match="tool call 'call_1' of 'root' ended twice; the first end is kept"):
            call.end("completed")
    observed = recorder.finish()

    assert records(observed, "tool_call")[0]["status"] == "failed"
    assert gaps(observed) == [("duplicate_tool_call", "root", "call_1")]
    strict = Recorder(strict=True)
    call = strict.tool("call_1")
    call.end()
    with pytest.raises(RecorderError, match="ended twice"):
        call.end()


def test_an_unknown_parent_is_a_gap_and_a_warning_at_finish_and_raises_under_strict() -> None:
    recorder = Recorder(clock=ticking())
    recorder.invocation("child", parent="ghost", spawned_by="call_1").end()
    with pytest.warns(RecorderWarning, match="invocation 'child' names parent 'ghost', never started"):
        observed = recorder.finish()
    assert records(observed, "agent_invocation")[0]["parent_invocation_id"] == "ghost"
    assert ("subagent_parent_unavailable", "child", "ghost") in gaps(observed)
    assert no_errors(observed)

    strict = Recorder(strict=True)
    strict.invocation("child", parent="ghost", spawned_by="call_1").end()
    with pytest.raises(RecorderError, match="never started"):
        strict.finish()


def test_a_parent_cycle_is_broken_where_it_closes() -> None:
    recorder = Recorder(clock=ticking())
    recorder.invocation("a", parent="b", spawned_by="call_1").end()
    recorder.invocation("b", parent="a", spawned_by="call_2").end()
    with pytest.warns(RecorderWarning, match="a cycle"):
        observed = recorder.finish()
    assert [(r["invocation_id"], r["parent_invocation_id"]) for r in records(observed, "agent_invocation")] == [
        ("a", "b"),
        ("b", None),
    ]
    assert ("cyclic_subagent_parent", "b", "a") in gaps(observed)
    assert no_errors(observed)


def test_a_clock_that_runs_backwards_is_held_and_no_interval_runs_backwards() -> None:
    readings = iter([BASE + 10, BASE + 11, BASE + 5, BASE + 12, BASE + 13])
    recorder = Recorder(clock=lambda: next(readings))
    invocation = recorder.invocation("root")
    call = invocation.tool("call_1")
    with pytest.warns(RecorderWarning, match="the clock ran backwards"):
        call.end()
    invocation.tool("call_2").end()
    observed = recorder.finish()
    tool_times = [(r["started_at"], r["completed_at"]) for r in records(observed, "tool_call")]
    assert tool_times == [(BASE + 11, BASE + 11), (BASE + 12, BASE + 13)]
    assert gaps(observed)[0] == (
        "recorder_misuse",
        None,
        "the clock ran backwards; its readings are held at the latest",
    )


def test_the_default_clock_is_wall_time_that_never_runs_backwards() -> None:
    clock = MonotonicClock()
    readings = [clock() for _ in range(1000)]
    assert readings == sorted(readings)
    assert abs(readings[0] - __import__("time").time()) < 5


def test_explicit_times_in_any_order_as_an_exporter_gives_them() -> None:
    # Spans end child first: the tool and the model calls arrive before the invocation that made them.
    recorder = Recorder(model_ref="policy", clock=ticking())
    recorder.model_call("resp_1", invocation="agent", at=BASE + 2)
    recorder.tool("call_1", "search", invocation="agent", started_at=BASE + 3).end(at=BASE + 4.25)
    compaction = recorder.compaction(invocation="agent", trigger="auto", started_at=BASE + 5)
    recorder.model_call("resp_summary", invocation="agent", at=BASE + 5.5)
    compaction.end(at=BASE + 6)
    recorder.model_call("resp_2", invocation="agent", at=BASE + 7)
    recorder.invocation("agent", parent=None, started_at=BASE + 1).end("completed", at=BASE + 8)
    observed = recorder.finish()

    assert gaps(observed) == []
    [invocation] = records(observed, "agent_invocation")
    assert invocation["duration_ms"] == 7000.0
    assert [ref["response_id"] for ref in invocation["model_calls"]] == ["resp_1", "resp_summary", "resp_2"]
    [tool] = records(observed, "tool_call")
    assert (tool["started_at"], tool["completed_at"], tool["duration_ms"]) == (BASE + 3, BASE + 4.25, 1250.0)
    [compacted] = records(observed, "context_compaction")
    assert compacted["observed_at"] == BASE + 5
    assert [compacted[key]["response_id"] for key in ("before_model_call", "after_model_call")] == ["resp_1", "resp_2"]
    assert [ref["response_id"] for ref in compacted["model_calls"]] == ["resp_summary"]


def test_an_end_before_the_start_drops_the_completion_time() -> None:
    recorder = Recorder(clock=ticking())
    with pytest.warns(RecorderWarning, match="ends before it starts"):
        recorder.tool("call_1", started_at=BASE + 10).end(at=BASE + 9)
    observed = recorder.finish()
    tool = records(observed, "tool_call")[0]
    assert (tool["completed_at"], tool["duration_ms"]) == (None, None)
    assert ("tool_timing_invalid", "root", "call_1") in gaps(observed)
    assert no_errors(observed)


def test_model_call_references_and_the_gaps_of_calls_that_cannot_be_referenced() -> None:
    recorder = Recorder(clock=ticking())
    with recorder.invocation() as root:
        root.model_call(model_call_id="9f0c")
        root.model_call("resp_1", model_ref="judge")
        root.model_call("resp_2")  # no model server known: no reference
        root.model_call()  # no id at all
    observed = recorder.finish()
    assert records(observed, "agent_invocation")[0]["model_calls"] == [
        {"model_call_id": "9f0c", "model_ref": None, "response_id": None},
        {
            "model_call_id": None,
            "model_ref": {"type": "responses_api_models", "name": "judge"},
            "response_id": "resp_1",
        },
    ]
    assert gaps(observed) == [
        ("model_call_ownership_unavailable", "root", None),
        ("model_response_id_unavailable", "root", None),
    ]
    assert observed.summary.main_turns == 4


@pytest.mark.parametrize(
    ("error", "status", "error_type"),
    [
        (TimeoutError, "timeout", "TimeoutError"),
        (asyncio.CancelledError, "cancelled", "CancelledError"),
        (OSError, "failed", "OSError"),
    ],
)
def test_a_with_block_ends_a_tool_as_its_exception_says(
    error: type[BaseException], status: str, error_type: str
) -> None:
    recorder = Recorder(clock=ticking())
    with pytest.raises(error), recorder.invocation() as root, root.tool("call_1"):
        raise error()
    observed = recorder.finish()
    assert [(r["status"], r["error_type"]) for r in records(observed, "tool_call")] == [(status, error_type)]
    invocation = records(observed, "agent_invocation")[0]
    assert invocation["status"] == ("failed" if error is OSError else "incomplete")


def test_a_completion_hook_ends_a_call_by_its_id() -> None:
    recorder = Recorder(clock=ticking())
    with recorder.invocation() as root:
        recorder.tool("call_1", "terminal", timing_source="harness")
        recorder.end_tool("call_1", "failed", error_type="exit_2")
        with pytest.warns(RecorderWarning, match="'call_9' of 'root' ended but never started"):
            recorder.end_tool("call_9")
        assert recorder.current() is not None
        assert recorder.current().invocation_id == root.invocation_id  # type: ignore[union-attr]
    assert recorder.current() is None
    observed = recorder.finish()
    assert [(r["tool_call_id"], r["status"], r["started_at"] is None) for r in records(observed, "tool_call")] == [
        ("call_1", "failed", False),
        ("call_9", "completed", True),
    ]
    assert gaps(observed) == [("tool_start_missing", "root", "call_9")]


def test_asyncio_tasks_each_see_their_own_current_invocation() -> None:
    recorder = Recorder(clock=ticking())

    async def agent(name: str) -> None:
        with recorder.invocation(name, parent=None):
            await asyncio.sleep(0)
            recorder.tool(f"{name}-call").end()
            await asyncio.sleep(0)

    async def both() -> None:
        await asyncio.gather(agent("first"), agent("second"))

    asyncio.run(both())
    observed = recorder.finish()
    assert [(r["invocation_id"], r["tool_call_id"]) for r in records(observed, "tool_call")] == [
        ("first", "first-call"),
        ("second", "second-call"),
    ]


def test_what_is_recorded_after_finish_is_in_the_next_finish() -> None:
    recorder = Recorder(clock=ticking())
    with recorder.invocation():
        pass
    first = recorder.finish()
    with pytest.warns(RecorderWarning, match=r"recorded after finish\(\)"):
        recorder.tool("late").end()
    second = recorder.finish()
    assert records(first, "tool_call") == []
    assert [r["tool_call_id"] for r in records(second, "tool_call")] == ["late"]
    assert gaps(second)[0][0] == "recorder_misuse"


def test_sandbox_facts_are_recorded_and_a_sandbox_without_a_role_is_a_gap() -> None:
    recorder = Recorder(clock=ticking())
    recorder.sandbox("agent", provider="docker", sandbox_id="sb-1", outcome="oom", exit_code=137, peak_memory_mib=512)
    with pytest.warns(RecorderWarning):
        recorder.sandbox("judge", outcome="completed")  # type: ignore[arg-type]
    with pytest.warns(RecorderWarning, match="cpu_time_s must be a finite number"):
        recorder.sandbox("verifier", cpu_time_s=math.inf)
    observed = recorder.finish()
    assert [(r["role"], r["outcome"], r["exit_code"], r["cpu_time_s"]) for r in records(observed, "sandbox")] == [
        ("agent", "oom", 137, None),
        ("verifier", "unknown", None, None),
    ]
    assert [code for code, _, _ in gaps(observed)] == ["recorder_misuse", "recorder_misuse"]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, ("completed", None, False)),
        ({"status_code": 413, "message": "request too large"}, ("failed", "model_request_error", False)),
        ({"status_code": 429}, ("failed", "model_rate_limited", True)),
        ({"status_code": 503}, ("failed", "model_server_error", True)),
        ({"failure_kind": "model_context_limit", "status_code": 400}, ("incomplete", "model_context_limit", False)),
        ({"failure_kind": "agent_aborted"}, ("failed", "agent_aborted", False)),
        ({"error_name": "RuntimeError"}, ("failed", "unknown_error", False)),
    ],
)
def test_the_outcome_a_harness_states(given: dict[str, Any], expected: tuple[Any, ...]) -> None:
    outcome = Recorder(harness="hermes").outcome(**given)
    assert (outcome.response_status, outcome.failure_kind, outcome.retryable) == expected
    assert outcome.harness == "hermes"
    assert outcome.classifier.name == "gym_contract.recorder"
    assert not [d for d in iter_diagnostics(outcome.model_dump(mode="json"), "agent_outcome") if d.severity == "error"]


def test_an_unknown_failure_kind_is_misuse() -> None:
    recorder = Recorder()
    with pytest.warns(RecorderWarning, match="failure_kind must be one of"):
        outcome = recorder.outcome("exploded")
    assert outcome.failure_kind == "unknown_error"
    with pytest.raises(RecorderError, match="failure_kind must be one of"):
        Recorder(strict=True).outcome("exploded")


def test_the_summary_counts_what_was_recorded() -> None:
    recorder = Recorder(model_ref="policy", clock=ticking())
    with recorder.invocation() as root:
        root.model_call("r1")
        with root.tool("call_1", "delegate_task"), recorder.invocation() as child:
            child.model_call("r2")
            child.model_call("r3")
            child.tool("call_2").end("timeout")
        root.tool("call_3").end("failed")
        root.compaction().end()
    observed = recorder.finish()
    assert dict(observed.summary) | {"duration_s": None} == {
        "tool_calls": 3,
        "tool_errors": 2,
        "main_turns": 1,
        "subagent_turns": 2,
        "subagent_calls": 1,
        "compactions": 1,
        "duration_s": None,
        "input_tokens": None,
        "output_tokens": None,
        "cached_tokens": None,
        "reasoning_tokens": None,
    }
    assert observed.summary.duration_s == 7.0  # fourteen readings, half a second apart


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"source": ""}, ValueError, "source must be a non-empty string"),
        ({"harness": 3}, ValueError, "harness must be a non-empty string or None"),
        ({"model_ref": ""}, ValueError, "model_ref must be a server name or a ModelServerRef"),
        ({"model_ref": {"type": "other", "name": "x"}}, ValueError, "model_ref must be a server name"),
        ({"clock": 5.0}, TypeError, "clock must be a callable"),
    ],
)
def test_a_configuration_that_cannot_work_is_refused_at_once(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Recorder(**options)


def test_a_clock_that_raises_leaves_the_time_unknown_and_the_harness_running() -> None:
    def broken() -> float:
        raise OSError("no clock")

    recorder = Recorder(clock=broken)
    with pytest.warns(RecorderWarning, match="the clock raised OSError"):
        recorder.tool("call_1").end()
    observed = recorder.finish()
    tool = records(observed, "tool_call")[0]
    assert (tool["started_at"], tool["completed_at"], tool["timing_source"]) == (None, None, None)
    assert no_errors(observed)


def test_threads_recording_at_once_lose_nothing() -> None:
    recorder = Recorder(model_ref="policy")
    root = recorder.invocation()
    start = threading.Barrier(8)

    def worker(number: int) -> None:
        start.wait()
        for index in range(300):
            with root.tool(f"call_{number}_{index}", "bash"):
                root.model_call(f"resp_{number}_{index}")

    threads = [threading.Thread(target=worker, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    root.end()
    observed = recorder.finish()

    tools = records(observed, "tool_call")
    assert sorted(r["tool_call_id"] for r in tools) == sorted(f"call_{n}_{i}" for n in range(8) for i in range(300))
    assert {r["status"] for r in tools} == {"completed"}
    assert len(records(observed, "agent_invocation")[0]["model_calls"]) == 2400
    assert gaps(observed) == []
    assert no_errors(observed)
