"""Hypothesis strategies for realistic rollouts: subagent trees, captured calls, tools observed twice, compactions.

Each generated rollout is what a harness and the capture middleware would leave behind — a rollout
record with its `ng_agent_observations` (and often a producer `ng_trajectory`), and the raw
capture lines of its rollout id — with the awkward cases real runs produce: partial invocation
trees, references that match no call, several calls or a call someone else owns, tools observed
twice (alike or not), compactions with their own calls, damaged capture lines, an incomplete
marker. Some rollouts are also given evidence that contradicts itself (a bundle or producer
trajectory that breaks the contract's rules, a producer and a harness that disagree).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

POLICY = {"type": "responses_api_models", "name": "policy"}
JUDGE = {"type": "responses_api_models", "name": "judge"}
START = 1_786_000_000.0
GAP_CODES = (
    "no_sandbox_runtime",
    "tool_timing_unavailable",
    "subagent_hierarchy_unavailable",
    "resolution_unavailable",
)


@dataclass
class Rollout:
    """One generated rollout: the record a harness returns and what the capture store holds for it."""

    record: dict[str, Any]
    capture_lines: list[bytes] = field(default_factory=list)
    incomplete: bool = False

    @property
    def rollout_id(self) -> str:
        return f"{self.record['_ng_task_index']}-{self.record['_ng_rollout_index']}"

    def write_capture(self, directory: Path) -> None:
        if self.capture_lines:
            (directory / f"{self.rollout_id}.capture.jsonl").write_bytes(b"\n".join(self.capture_lines) + b"\n")
        if self.incomplete:
            (directory / f"{self.rollout_id}.capture.incomplete").touch()


def _exchange(index: int, response_id: str | None, server: dict[str, Any] | None, clock: float) -> dict[str, Any]:
    """One raw capture line of the Responses dialect, as the middleware writes it."""
    response: dict[str, Any] = {
        "object": "response",
        "status": "completed",
        "model": "qwen3-8b",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"a{index}"}]}],
        "usage": {"input_tokens": 100 + index, "output_tokens": 20, "total_tokens": 120 + index},
    }
    if response_id is not None:
        response["id"] = response_id
    return {
        "model_call_id": f"mc{index}",
        "dialect": "responses",
        "model_ref": server,
        "started_at": clock,
        "completed_at": clock + 0.5,
        "latency_ms": 500.0,
        "latency_ttft_ms": None,
        "status_code": 200,
        "error_category": None,
        "request": {"model": "qwen3-8b", "input": [{"role": "user", "content": f"q{index}"}]},
        "response": response,
    }


@st.composite
def _captured(draw: st.DrawFn) -> list[dict[str, Any]]:
    """The captured calls: response ids sometimes shared (ambiguous), some without one, some of a judge."""
    calls = []
    for index in range(draw(st.integers(0, 6))):
        response_id = draw(st.sampled_from([f"resp{index}", f"resp{index}", "resp_shared", None]))
        server = draw(st.sampled_from([POLICY, POLICY, POLICY, JUDGE, None]))
        calls.append(_exchange(index, response_id, server, START + 10 * index))
    return calls


def _ref(draw: st.DrawFn, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """A model-call reference as a harness writes one: by id, by (server, response id), or to nothing."""
    form = draw(st.sampled_from(["id", "response", "response", "unmatched"]))
    if not calls or form == "unmatched":
        return {"model_call_id": f"missing{draw(st.integers(0, 3))}"}
    call = draw(st.sampled_from(calls))
    response_id = (call.get("response") or {}).get("id")
    if form == "id" or response_id is None or call["model_ref"] is None:
        return {"model_call_id": call["model_call_id"]}
    return {"model_ref": call["model_ref"], "response_id": response_id}


def _conversation(draw: st.DrawFn, spawns: list[str], tools: list[str]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "solve it", "type": "message"}]
    for call_id in [*spawns, *tools]:
        name = "Task" if call_id in spawns else "lookup"
        items.append({"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"})
        if draw(st.booleans()):
            items.append({"type": "function_call_output", "call_id": call_id, "output": f"out {call_id}"})
    return items


def _timing(draw: st.DrawFn, clock: float) -> dict[str, Any]:
    started = clock + draw(st.integers(0, 30))
    length = draw(st.sampled_from([0.0, 0.2, 1.5]))
    fields: dict[str, Any] = {"started_at": started, "completed_at": started + length, "duration_ms": length * 1000}
    for name in draw(st.sets(st.sampled_from(sorted(fields)), max_size=2)):
        fields[name] = None
    return {name: value for name, value in fields.items() if value is not None}


@st.composite
def _observations(draw: st.DrawFn, calls: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """An observation bundle: an invocation tree (often partial), its tools and compactions, and gaps."""
    count = draw(st.integers(1, 4))
    ids = ["root"] + [f"sub{n}" for n in range(1, count)]
    parents = {child: draw(st.sampled_from(ids[:position])) for position, child in enumerate(ids) if position}
    spawns = {child: f"spawn_{child}" for child in parents}
    tools = {invocation: [f"t_{invocation}_{n}" for n in range(draw(st.integers(0, 2)))] for invocation in ids}
    # A partial tree: some invocations are not observed, though their children and tools are.
    hidden = set(draw(st.sets(st.sampled_from(ids), max_size=1)))
    records: list[dict[str, Any]] = []
    for invocation in ids:
        if invocation in hidden:
            continue
        children = [spawns[child] for child, parent in parents.items() if parent == invocation]
        record: dict[str, Any] = {
            "kind": "agent_invocation",
            "invocation_id": invocation,
            "status": draw(st.sampled_from(["completed", "failed", "incomplete", "unknown"])),
            "model_calls": [_ref(draw, calls) for _ in range(draw(st.integers(0, 3)))],
            "conversation": _conversation(draw, children, tools[invocation]),
        }
        if invocation in parents:
            record["parent_invocation_id"] = parents[invocation]
            record["spawned_by_tool_call_id"] = spawns[invocation]
        records.append(record)
    for invocation, tool_ids in tools.items():
        for tool_id in tool_ids + ([spawns[invocation]] if invocation in spawns else []):
            owner = parents.get(invocation, invocation) if tool_id.startswith("spawn_") else invocation
            observed = {"kind": "tool_call", "invocation_id": owner, "tool_call_id": tool_id, "tool_name": "lookup"}
            observed |= _timing(draw, START)
            observed["status"] = draw(st.sampled_from(["completed", "failed", "unknown"]))
            records.append(observed)
            if draw(st.integers(0, 3)) == 0:  # observed twice: at two boundaries, alike or not
                again = dict(observed) if draw(st.booleans()) else {**observed, **_timing(draw, START)}
                records.append(again)
    for _ in range(draw(st.integers(0, 2))):
        compaction: dict[str, Any] = {
            "kind": "context_compaction",
            "invocation_id": draw(st.sampled_from([*ids, "elsewhere"])),
            "observed_at": START + draw(st.integers(0, 60)),
            "tokens_before": draw(st.integers(0, 5000)),
            "tokens_after": draw(st.integers(0, 5000)),
            "outcome": draw(st.sampled_from(["completed", "unknown"])),
            "model_calls": [_ref(draw, calls) for _ in range(draw(st.integers(0, 1)))],
        }
        if draw(st.booleans()):
            compaction["before_model_call"] = _ref(draw, calls)
        if draw(st.booleans()):
            compaction["after_model_call"] = _ref(draw, calls)
        records.append(compaction)
    records = draw(st.permutations(records))
    bundle = {
        "source": draw(st.sampled_from(["claude_code", "opencode", "pi", "hermes"])),
        "records": records,
        "gaps": [{"code": code} for code in draw(st.lists(st.sampled_from(GAP_CODES), max_size=2))],
    }
    return bundle, ids


@st.composite
def _producer(draw: st.DrawFn, rollout_id: str, ids: list[str], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """A producer's own trajectory: turns, some of the invocations, model calls and tool calls of its own."""
    own_id = draw(st.sampled_from([rollout_id, rollout_id, "other-0"]))  # a producer may not know the canonical id
    invocations = [
        {"invocation_id": invocation, "status": "completed", "conversation": _conversation(draw, [], [])}
        for invocation in draw(st.sets(st.sampled_from([*ids, "producer_only"]), max_size=2))
    ]
    turns = [
        {
            "invocation_id": draw(st.sampled_from([*ids, "producer_only"])),
            "task_id": "task",
            "rollout_id": own_id,
            "turn_no": number,
            "timestamp": START + number,
            "step_count": number - 1,
            "model_calls": [_ref(draw, calls)],
        }
        for number in range(1, draw(st.integers(0, 3)) + 1)
    ]
    call_ids = [call["model_call_id"] for call in calls] + ["producer_call"]
    model_calls = [{"model_call_id": call_id} for call_id in draw(st.sets(st.sampled_from(call_ids), max_size=2))]
    tool_calls = [
        {"kind": "tool_call", "invocation_id": invocation, "tool_call_id": f"t_{invocation}_0"} | _timing(draw, START)
        for invocation in draw(st.sets(st.sampled_from(ids), max_size=2))
    ]
    return {
        "schema_version": "1.0",
        "task_id": "task",
        "rollout_id": own_id,
        "invocations": invocations,
        "turns": turns,
        "model_calls": model_calls,
        "tool_calls": tool_calls,
        "gaps": [],
    }


CONTRADICTIONS = (
    "none",
    "none",
    "none",
    "bundle_duplicate_invocation",
    "bundle_parent_cycle",
    "bundle_reversed_tool",
    "producer_reversed_tool",
    "producer_duplicate_call",
    "cross_source_cycle",
)


def _contradict(draw: st.DrawFn, how: str, bundle: dict[str, Any], producer: dict[str, Any] | None) -> None:
    """Break the evidence the way a buggy harness or producer breaks it."""
    invocations = [r for r in bundle["records"] if r["kind"] == "agent_invocation"]
    tools = [r for r in bundle["records"] if r["kind"] == "tool_call"]
    if how == "bundle_duplicate_invocation" and invocations:
        bundle["records"].append(dict(draw(st.sampled_from(invocations))))
    elif how == "bundle_parent_cycle" and invocations:
        looped = draw(st.sampled_from(invocations))
        looped["parent_invocation_id"] = looped["invocation_id"]
    elif how == "bundle_reversed_tool" and tools:
        draw(st.sampled_from(tools)).update(started_at=START + 9, completed_at=START + 1)
    elif how == "producer_reversed_tool" and producer is not None:
        producer["tool_calls"].append(
            {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "late", "started_at": START + 9,
             "completed_at": START + 1}
        )  # fmt: skip
    elif how == "producer_duplicate_call" and producer is not None:
        producer["model_calls"] += [{"model_call_id": "twice"}, {"model_call_id": "twice"}]
    elif how == "cross_source_cycle" and producer is not None and invocations:
        child = draw(st.sampled_from(invocations))
        child["parent_invocation_id"] = "producer_root"
        producer["invocations"].append(
            {"invocation_id": "producer_root", "parent_invocation_id": child["invocation_id"]}
        )


@st.composite
def rollouts(draw: st.DrawFn) -> Rollout:
    """A realistic rollout, sometimes with self-contradicting evidence, and its capture store."""
    task, index = draw(st.integers(0, 40)), draw(st.integers(0, 3))
    rollout_id = f"{task}-{index}"
    calls = draw(_captured())
    bundle, ids = draw(_observations(calls))
    producer = draw(_producer(rollout_id, ids, calls)) if draw(st.booleans()) else None
    _contradict(draw, draw(st.sampled_from(CONTRADICTIONS)), bundle, producer)
    record: dict[str, Any] = {
        "responses_create_params": {"input": [{"role": "user", "content": "solve it", "type": "message"}]},
        "reward": draw(st.sampled_from([0.0, 1.0])),
        "_ng_task_index": task,
        "_ng_rollout_index": index,
        "ng_agent_observations": bundle,
    }
    if producer is not None:
        record["ng_trajectory"] = producer
    lines = [json.dumps(call, separators=(",", ":")).encode() for call in calls]
    if lines and draw(st.integers(0, 4)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), b'{"model_call_id": "damaged", ')
    if lines and draw(st.integers(0, 9)) == 0:  # a line written twice: two calls share one model_call_id
        lines.append(draw(st.sampled_from(lines)))
    return Rollout(record, lines, incomplete=draw(st.integers(0, 6)) == 0)


# ------------------------------------------------------------------------------------- large rollouts
# Clean rollouts of thousands of invocations, tool calls, compactions, gaps or captured calls, for the
# laws of scale: each is built from a few drawn numbers, so a draw stays cheap however large the rollout.

SHAPES = ("chain", "wide", "tree", "flat", "mixed")
"""How the invocations hang together: one parent chain, one parent with every other invocation as its
child, a binary tree, a single invocation holding everything (its tools, calls, compactions, gaps), or
all at once: a third of the units a chain, a third children of the root, a third the root's own tools."""


def _layout(size: int, shape: str) -> tuple[list[int | None], list[int]]:
    """Each invocation's parent (by position) and how many tools and calls it has of its own."""
    if shape == "flat":
        return [None], [size]
    if shape == "mixed":
        third = max(size // 3, 1)
        parents: list[int | None] = [None, *range(third - 1), *[0] * third]
        return parents, [third] + [1] * (len(parents) - 1)
    parent_of = {"chain": lambda n: n - 1, "wide": lambda n: 0, "tree": lambda n: (n - 1) // 2}[shape]
    return [None, *(parent_of(n) for n in range(1, size))], [1] * size


def large_rollout(size: int, shape: str, *, producer: bool = False) -> Rollout:
    """A clean rollout of ``size`` units of ``shape`` (see `SHAPES`): per unit a captured call and its
    reference, a tool call seen with its timing and answered in the conversation, a spawn in the parent's
    conversation, a gap, and every fourth tool a compaction; with ``producer``, a producer trajectory
    holding every second invocation."""
    parents, owns = _layout(size, shape)
    children: dict[int, list[int]] = {}
    for position, parent in enumerate(parents):
        if parent is not None:
            children.setdefault(parent, []).append(position)
    calls: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    for position, (parent, own) in enumerate(zip(parents, owns, strict=True)):
        invocation = f"inv{position}"
        tools = [f"t{position}_{n}" for n in range(own)]
        references = []
        for tool in tools:
            call = _exchange(len(calls), f"resp{len(calls)}", POLICY, START + len(calls))
            # Each call asks for one tool, so that the exports tell which call made which step.
            call["response"]["output"] = [
                {"type": "function_call", "call_id": tool, "name": "lookup", "arguments": "{}"}
            ]
            references.append({"model_call_id": call["model_call_id"]})
            calls.append(call)
        conversation: list[dict[str, Any]] = [{"role": "user", "content": "solve it", "type": "message"}]
        for child in children.get(position, []):
            conversation.append(
                {"type": "function_call", "call_id": f"spawn_inv{child}", "name": "Task", "arguments": "{}"}
            )
        for tool in tools:
            conversation.append({"type": "function_call", "call_id": tool, "name": "lookup", "arguments": "{}"})
            conversation.append({"type": "function_call_output", "call_id": tool, "output": f"out {tool}"})
        record: dict[str, Any] = {"kind": "agent_invocation", "invocation_id": invocation, "status": "completed",
                                  "model_calls": references, "conversation": conversation}  # fmt: skip
        if parent is not None:
            record["parent_invocation_id"] = f"inv{parent}"
            record["spawned_by_tool_call_id"] = f"spawn_{invocation}"
        records.append(record)
        for n, tool in enumerate(tools):
            records.append(
                {"kind": "tool_call", "invocation_id": invocation, "tool_call_id": tool, "tool_name": "lookup",
                 "started_at": START + n, "completed_at": START + n + 0.5, "duration_ms": 500.0, "status": "completed"}
            )  # fmt: skip
            if n % 4 == 0:
                records.append(
                    {"kind": "context_compaction", "invocation_id": invocation, "observed_at": START + n,
                     "tokens_before": 4000, "tokens_after": 1000, "outcome": "completed"}
                )  # fmt: skip
    gaps = [{"code": "tool_timing_unavailable", "invocation_id": f"inv{n % len(parents)}", "detail": f"d{n}"}
            for n in range(size)]  # fmt: skip
    record = {
        "responses_create_params": {"input": [{"role": "user", "content": "solve it", "type": "message"}]},
        "reward": 1.0,
        "_ng_task_index": 7,
        "_ng_rollout_index": 0,
        "ng_agent_observations": {"source": "opencode", "records": records, "gaps": gaps},
    }
    if producer:
        invocations = [r for r in records if r["kind"] == "agent_invocation"]
        # Every second one: the others, merged in from the observations, hang from parents of both sources.
        kept = [{key: value for key, value in r.items() if key != "kind"} for r in invocations[::2]]
        record["ng_trajectory"] = {"schema_version": "1.0", "task_id": "7", "rollout_id": "7-0", "invocations": kept}
    return Rollout(record, [json.dumps(call, separators=(",", ":")).encode() for call in calls])


def large_rollouts(max_size: int = 2_000) -> st.SearchStrategy[Rollout]:
    """`large_rollout` of a drawn shape and size up to ``max_size`` units, with or without a producer."""
    return st.builds(large_rollout, st.integers(1, max_size), st.sampled_from(SHAPES), producer=st.booleans())
