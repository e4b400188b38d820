"""A harness written here — asyncio and threads, parallel tools, a subagent, a compaction, an abandoned tool —
records through the recorder and gets exactly the evidence it lived, valid under the contract."""

from __future__ import annotations

import asyncio
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gym_contract import iter_diagnostics
from gym_contract.producers import COMMON_SUMMARY_FIELDS, Observed
from gym_contract.recorder import Recorder

POLICY = {"type": "responses_api_models", "name": "policy"}
TIMES = ("started_at", "completed_at", "duration_ms", "observed_at")


def ref(response_id: str) -> dict[str, Any]:
    return {"model_call_id": None, "model_ref": POLICY, "response_id": response_id}


class Harness:
    """An agent loop as a harness runs one: each step records what it does, as it does it."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.both_running = threading.Barrier(2, timeout=10)
        self.release_abandoned = threading.Event()
        self.abandoned_started = threading.Event()
        self.pool = ThreadPoolExecutor(max_workers=4)

    async def run(self) -> None:
        recorder = self.recorder
        with recorder.invocation() as root:
            recorder.model_call("resp_1")  # the current invocation: the `with` block's
            # Two tools in parallel: one an asyncio task, one in a thread the task hands off to.
            await asyncio.gather(self.read_file(), asyncio.to_thread(self.grep))
            recorder.model_call("resp_2")
            # A tool that spawns a subagent, which runs in a worker thread of its own.
            with root.tool("call_task", "delegate_task") as task:
                await asyncio.get_running_loop().run_in_executor(self.pool, self.subagent, root, task)
            # A compaction: the summary call is made while it is open.
            with root.compaction(trigger="context_pressure", tokens_before=9000) as compaction:
                root.model_call("resp_summary")
                compaction.end(tokens_after=1200, summary="the task so far", first_kept_item_id="msg_7")
            recorder.model_call("resp_3")
            # A tool started in a thread that never comes back before the run ends.
            self.pool.submit(self.abandoned, root)
            assert self.abandoned_started.wait(10)

    async def read_file(self) -> None:
        with self.recorder.tool("call_read", "read_file"):
            await asyncio.to_thread(self.both_running.wait)

    def grep(self) -> None:
        # asyncio.to_thread copies the task's context: the invocation is current here too.
        with self.recorder.tool("call_grep", "grep"):
            self.both_running.wait()

    def subagent(self, parent: Any, spawning: Any) -> None:
        # A plain worker thread has no current invocation: parent and spawning call are given.
        with self.recorder.invocation(parent=parent, spawned_by=spawning) as child:
            child.model_call("resp_sub_1")
            try:
                with child.tool("call_ls", "ls"):
                    raise FileNotFoundError("no such directory")
            except FileNotFoundError:
                pass
            child.model_call("resp_sub_2")

    def abandoned(self, root: Any) -> None:
        with root.tool("call_sleep", "sleep", timing_source="harness"):
            self.abandoned_started.set()
            self.release_abandoned.wait(10)


def run_the_harness() -> tuple[Observed, Harness]:
    recorder = Recorder(source="recorder", model_ref="policy")
    harness = Harness(recorder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the harness uses the recorder rightly: not one warning
        asyncio.run(harness.run())
        observed = recorder.finish(outcome=recorder.outcome())
    harness.release_abandoned.set()
    harness.pool.shutdown(wait=True)
    return observed, harness


def without_times(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key not in TIMES}


def test_the_harness_gets_exactly_the_evidence_it_lived() -> None:
    observed, _ = run_the_harness()
    document = observed.document()
    bundle = document["ng_agent_observations"]
    records = sorted(bundle["records"], key=lambda r: (r["kind"], r["invocation_id"], r.get("tool_call_id") or ""))

    assert [without_times(record) for record in records] == [
        {
            "kind": "agent_invocation",
            "invocation_id": "root",
            "parent_invocation_id": None,
            "spawned_by_tool_call_id": None,
            "status": "completed",
            "error_type": None,
            "model_calls": [ref("resp_1"), ref("resp_2"), ref("resp_summary"), ref("resp_3")],
            "conversation": [],
        },
        {
            "kind": "agent_invocation",
            "invocation_id": "root.child-1",
            "parent_invocation_id": "root",
            "spawned_by_tool_call_id": "call_task",
            "status": "completed",
            "error_type": None,
            "model_calls": [ref("resp_sub_1"), ref("resp_sub_2")],
            "conversation": [],
        },
        {
            "kind": "context_compaction",
            "invocation_id": "root",
            "trigger": "context_pressure",
            "tokens_before": 9000,
            "tokens_after": 1200,
            "outcome": "completed",
            "summary": "the task so far",
            "first_kept_item_id": "msg_7",
            "before_model_call": ref("resp_2"),
            "model_calls": [ref("resp_summary")],
            "after_model_call": ref("resp_3"),
        },
        *(
            {
                "kind": "tool_call",
                "invocation_id": owner,
                "tool_call_id": call_id,
                "sandbox_id": None,
                "tool_name": name,
                "timing_source": source,
                "status": status,
                "error_type": error,
            }
            for owner, call_id, name, source, status, error in [
                ("root", "call_grep", "grep", "executor", "completed", None),
                ("root", "call_read", "read_file", "executor", "completed", None),
                ("root", "call_sleep", "sleep", "harness", "incomplete", None),
                ("root", "call_task", "delegate_task", "executor", "completed", None),
                ("root.child-1", "call_ls", "ls", "executor", "failed", "FileNotFoundError"),
            ]
        ),
    ]
    assert bundle["source"] == "recorder"
    assert bundle["gaps"] == [{"code": "tool_result_missing", "invocation_id": "root", "detail": "call_sleep"}]
    assert [d for d in iter_diagnostics(bundle, "bundle") if d.severity == "error"] == []
    assert document["ng_agent_outcome"]["response_status"] == "completed"
    assert document["run_summary"] == {
        **dict.fromkeys(COMMON_SUMMARY_FIELDS),
        "tool_calls": 5,
        "tool_errors": 1,
        "main_turns": 4,
        "subagent_turns": 2,
        "subagent_calls": 1,
        "compactions": 1,
        "duration_s": document["run_summary"]["duration_s"],
    }
    assert document["run_summary"]["duration_s"] > 0


def test_its_times_are_those_it_lived() -> None:
    observed, _ = run_the_harness()
    records = observed.document()["ng_agent_observations"]["records"]
    tools = {r["tool_call_id"]: r for r in records if r["kind"] == "tool_call"}
    invocations = {r["invocation_id"]: r for r in records if r["kind"] == "agent_invocation"}

    for call_id, tool in tools.items():
        if call_id == "call_sleep":  # abandoned: started, never completed
            assert tool["completed_at"] is None
            assert tool["duration_ms"] is None
            continue
        assert tool["started_at"] <= tool["completed_at"]
        assert tool["duration_ms"] == round((tool["completed_at"] - tool["started_at"]) * 1000, 3)
    # The parallel tools ran at once, and each has its own interval (C6).
    read, grep = tools["call_read"], tools["call_grep"]
    assert max(read["started_at"], grep["started_at"]) < min(read["completed_at"], grep["completed_at"])
    # The subagent ran inside its spawning call, and the root around everything.
    task = tools["call_task"]
    assert invocations["root.child-1"]["duration_ms"] <= task["duration_ms"]
    assert invocations["root"]["duration_ms"] >= sum(t["duration_ms"] for t in (task, read))
    compaction = next(r for r in records if r["kind"] == "context_compaction")
    assert task["completed_at"] <= compaction["observed_at"] <= tools["call_sleep"]["started_at"]
