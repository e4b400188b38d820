"""Clean records of every kind, drawn by Hypothesis: capture lines, bundles, rollouts, trajectories, outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from gym_contract._json_writing import dumps
from gym_contract._vocabulary import (
    CAPTURE,
    FAILURE_KINDS,
    INCOMPLETE_KINDS,
    OBSERVATIONS,
    TRAJECTORY,
    TRANSIENT_KINDS,
)
from gym_contract.capture import Capture, capture_attachment, derive_record
from gym_contract.join import join
from gym_contract.models import AgentObservationBundle
from gym_contract.projection import attach_trajectory
from gym_contract.schemas import gap_codes

START = 1_786_000_000.0
"""The moment drawn timestamps start from (2026-08-06 UTC): plausible now and for years to come."""
DIALECTS = ("responses", "chat", "messages")
"""The API dialects of a capture line."""
HARNESSES = ("claude_code", "opencode", "pi", "hermes")
POLICY = {"type": "responses_api_models", "name": "policy"}
MODEL = "qwen3-8b"

_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
_prose = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40)


# ------------------------------------------------------------------------------------- capture lines


def _usage(dialect: str, prompt: int, completion: int, cached: int) -> dict[str, Any]:
    """A usage object as each dialect writes it; every count known, so aggregates are exact."""
    if dialect == "responses":
        return {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
            "input_tokens_details": {"cached_tokens": cached},
        }
    if dialect == "chat":
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
    # Anthropic counts cache reads apart from input_tokens; the record adds them back.
    return {"input_tokens": prompt - cached, "output_tokens": completion, "cache_read_input_tokens": cached}


@dataclass(frozen=True)
class _ToolUse:
    """A tool call the model asks for in its response: the same call, written in any dialect."""

    call_id: str
    name: str
    arguments: dict[str, Any]

    def text(self) -> str:
        return dumps(self.arguments).decode()


def _tool_uses(index: int) -> st.SearchStrategy[list[_ToolUse]]:
    """None, or up to three calls with ids unique in the run (`call_<index>_<n>`) and JSON-object arguments."""
    arguments = st.dictionaries(_names, st.one_of(_prose, st.integers(-1_000, 1_000), st.booleans()), max_size=3)
    calls = st.lists(st.tuples(_names, arguments), max_size=3)
    return calls.map(lambda drawn: [_ToolUse(f"call_{index}_{n}", *call) for n, call in enumerate(drawn)])


def _response(dialect: str, response_id: str, answer: str, tools: list[_ToolUse]) -> dict[str, Any]:
    """A completed response in ``dialect``: the answer, then the tool calls the model asks for, if any."""
    if dialect == "responses":
        message = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}
        calls = [
            {"type": "function_call", "id": f"fc_{tool.call_id}", "call_id": tool.call_id, "name": tool.name,
             "arguments": tool.text(), "status": "completed"}
            for tool in tools
        ]  # fmt: skip
        return {
            "id": response_id, "object": "response", "status": "completed", "model": MODEL, "output": [message, *calls]
        }  # fmt: skip
    if dialect == "chat":
        said: dict[str, Any] = {"role": "assistant", "content": answer}
        if tools:
            said["tool_calls"] = [
                {"id": tool.call_id, "type": "function", "function": {"name": tool.name, "arguments": tool.text()}}
                for tool in tools
            ]
        choice = {"index": 0, "finish_reason": "tool_calls" if tools else "stop", "message": said}
        return {"id": response_id, "object": "chat.completion", "model": MODEL, "choices": [choice]}
    content: list[dict[str, Any]] = [{"type": "text", "text": answer}]
    content += [{"type": "tool_use", "id": tool.call_id, "name": tool.name, "input": tool.arguments} for tool in tools]
    return {
        "id": response_id, "type": "message", "role": "assistant", "model": MODEL, "content": content,
        "stop_reason": "tool_use" if tools else "end_turn",
    }  # fmt: skip


def _request(dialect: str, question: str) -> dict[str, Any]:
    if dialect == "responses":
        return {"model": MODEL, "input": [{"role": "user", "content": question, "type": "message"}]}
    return {"model": MODEL, "messages": [{"role": "user", "content": question}], "max_tokens": 1024}


@st.composite
def capture_exchanges(draw: st.DrawFn, dialect: str | None = None, index: int | None = None) -> dict[str, Any]:
    """One raw capture line (`capture_exchange`) of a successful call, in ``dialect`` or any of `DIALECTS`.

    Its response answers, and may ask for up to three tool calls the way the dialect writes them
    (Responses `function_call` items, Chat Completions `tool_calls`, Anthropic Messages `tool_use`
    blocks), which the derived record's `tool_calls` hold. ``index`` fixes the call's ids
    (`mc<index>`, `resp_<index>`, `call_<index>_<n>`) and start time; drawn otherwise.
    """
    dialect = dialect if dialect is not None else draw(st.sampled_from(DIALECTS))
    index = index if index is not None else draw(st.integers(0, 10_000))
    prompt = draw(st.integers(1, 200_000))
    completion = draw(st.integers(0, 8_000))
    cached = draw(st.integers(0, prompt))
    latency_ms = float(draw(st.integers(1, 120_000)))
    started = START + 60.0 * index
    response = _response(dialect, f"resp_{index}", draw(_prose), draw(_tool_uses(index)))
    response["usage"] = _usage(dialect, prompt, completion, cached)
    return {
        "model_call_id": f"mc{index}",
        "dialect": dialect,
        "model_ref": POLICY,
        "started_at": started,
        "completed_at": started + latency_ms / 1000,
        "latency_ms": latency_ms,
        "latency_ttft_ms": draw(st.sampled_from([None, min(latency_ms, 250.0)])),
        "status_code": 200,
        "error_category": None,
        "request": _request(dialect, draw(_prose)),
        "response": response,
    }


# ---------------------------------------------------------------------------------------- bundles


def _reference(draw: st.DrawFn, exchange: dict[str, Any]) -> dict[str, Any]:
    """A reference to a captured call, as a harness writes one: by its id, or by server and response id."""
    if draw(st.booleans()):
        return {"model_call_id": exchange["model_call_id"]}
    return {"model_ref": exchange["model_ref"], "response_id": exchange["response"]["id"]}


def _timing(draw: st.DrawFn, start: float) -> dict[str, Any]:
    """A tool's timing: what the harness saw of start, end and length, each consistent with the others."""
    started = start + draw(st.integers(0, 600))
    length_ms = float(draw(st.integers(0, 90_000)))
    fields = {"started_at": started, "completed_at": started + length_ms / 1000, "duration_ms": length_ms}
    seen = draw(st.sampled_from([("started_at", "completed_at", "duration_ms"), ("started_at", "completed_at"),
                                 ("duration_ms",), ()]))  # fmt: skip
    return {name: fields[name] for name in seen}


@dataclass
class _Tree:
    """The invocations of a run: each one's parent, the tool call that spawned it, and its own tools."""

    ids: list[str]
    parents: dict[str, str]
    tools: dict[str, list[str]]

    def spawn(self, child: str) -> str:
        return f"spawn_{child}"

    def children(self, invocation: str) -> list[str]:
        return [child for child, parent in self.parents.items() if parent == invocation]


@st.composite
def _trees(draw: st.DrawFn, max_invocations: int) -> _Tree:
    count = draw(st.integers(1, max_invocations))
    ids = ["root"] + [f"sub{n}" for n in range(1, count)]
    parents = {child: draw(st.sampled_from(ids[:position])) for position, child in enumerate(ids) if position}
    tools = {invocation: [f"call_{invocation}_{n}" for n in range(draw(st.integers(0, 3)))] for invocation in ids}
    return _Tree(ids, parents, tools)


def _conversation(draw: st.DrawFn, tree: _Tree, invocation: str) -> list[dict[str, Any]]:
    """What the invocation's model saw and said: the task, each tool call with its output, an answer."""
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": draw(_prose)}]
    calls = [(tree.spawn(child), "Task") for child in tree.children(invocation)]
    calls += [(call_id, draw(st.sampled_from(["Bash", "Read", "Grep", "Edit"]))) for call_id in tree.tools[invocation]]
    for call_id, name in calls:
        arguments = dumps({"command": draw(_prose)}).decode()
        items.append({"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments})
        items.append({"type": "function_call_output", "call_id": call_id, "output": draw(_prose)})
    answer = [{"type": "output_text", "text": draw(_prose), "annotations": []}]
    items.append({"type": "message", "role": "assistant", "id": f"msg_{invocation}", "content": answer})
    return items


@cache
def _harness_gaps(harness: str) -> tuple[str, ...]:
    """The registered gap codes the registry says ``harness`` emits."""
    return tuple(sorted(code for code, entry in gap_codes().items() if harness in (entry.get("emitted_by") or ())))


@st.composite
def _bundle(
    draw: st.DrawFn, exchanges: list[dict[str, Any]], max_invocations: int
) -> tuple[dict[str, Any], dict[str, str]]:
    """A bundle whose invocations reference ``exchanges``, and which invocation made each call (by id)."""
    tree = draw(_trees(max_invocations))
    owners = {exchange["model_call_id"]: draw(st.sampled_from(tree.ids)) for exchange in exchanges}
    records: list[dict[str, Any]] = []
    for invocation in tree.ids:
        record: dict[str, Any] = {
            "kind": "agent_invocation",
            "invocation_id": invocation,
            "status": draw(st.sampled_from(["completed", "completed", "failed", "incomplete"])),
            "model_calls": [_reference(draw, e) for e in exchanges if owners[e["model_call_id"]] == invocation],
            "conversation": _conversation(draw, tree, invocation),
        }
        if invocation in tree.parents:
            record["parent_invocation_id"] = tree.parents[invocation]
            record["spawned_by_tool_call_id"] = tree.spawn(invocation)
        records.append(record)
        # The tool calls the invocation made, a subagent's spawn among them.
        for call_id in [*(tree.spawn(child) for child in tree.children(invocation)), *tree.tools[invocation]]:
            if draw(st.integers(0, 4)):  # now and then a tool call the harness did not observe
                observed = {"kind": "tool_call", "invocation_id": invocation, "tool_call_id": call_id}
                observed |= _timing(draw, START)
                observed["status"] = draw(st.sampled_from(["completed", "failed", "timeout"]))
                records.append(observed)
        for _ in range(draw(st.integers(0, 1))):
            before = draw(st.integers(1_000, 200_000))
            records.append(
                {
                    "kind": "context_compaction",
                    "invocation_id": invocation,
                    "observed_at": START + draw(st.integers(0, 600)),
                    "trigger": draw(st.sampled_from(["auto", "manual"])),
                    "tokens_before": before,
                    "tokens_after": draw(st.integers(0, before)),
                    "outcome": "completed",
                }
            )
    if draw(st.booleans()):
        wall = float(draw(st.integers(1, 3_600)))
        records.append(
            {"kind": "sandbox", "role": "agent", "provider": "docker", "sandbox_id": "sb-1", "outcome": "completed",
             "exit_code": 0, "wall_time_s": wall, "cpu_time_s": wall / 2, "resource_usage_source": "cgroup"}
        )  # fmt: skip
    source = draw(st.sampled_from(HARNESSES))
    gaps = [{"code": code} for code in draw(st.lists(st.sampled_from(_harness_gaps(source)), max_size=2, unique=True))]
    bundle = {"source": source, "records": draw(st.permutations(records)), "gaps": gaps}
    return bundle, owners


def bundles(max_invocations: int = 4) -> st.SearchStrategy[dict[str, Any]]:
    """An `ng_agent_observations` bundle: an invocation tree with subagents spawned by tool calls found in
    their parents' conversations, tool calls with consistent timing, compactions that shrink the
    context, now and then a sandbox, and gaps the registry says the bundle's harness emits; in any order."""
    calls = st.integers(0, 4).flatmap(lambda n: st.tuples(*(capture_exchanges(index=i) for i in range(n))))
    return calls.flatmap(lambda exchanges: _bundle(list(exchanges), max_invocations).map(lambda drawn: drawn[0]))


# ---------------------------------------------------------------------------------------- rollouts


@dataclass
class Rollout:
    """A rollout as a harness and the capture middleware leave it: the record and its capture lines."""

    record: dict[str, Any]
    """The rollout record the harness returned, with its `ng_agent_observations`."""
    capture_lines: list[dict[str, Any]] = field(default_factory=list)
    """The raw capture lines of its rollout id, in the order they were written."""

    @property
    def rollout_id(self) -> str:
        return f"{self.record['_ng_task_index']}-{self.record['_ng_rollout_index']}"

    def write_capture(self, directory: str | Path) -> Path:
        """Write `<rollout_id>.capture.jsonl` into ``directory`` (for `collect` or `gym-contract project`)."""
        path = Path(directory) / f"{self.rollout_id}.capture.jsonl"
        path.write_bytes(b"".join(dumps(line) + b"\n" for line in self.capture_lines))
        return path

    def collected(self) -> dict[str, Any]:
        """The record as the collector writes it, in memory: capture attached, observations joined to it,
        `ng_trajectory` projected. The same as `collect(record, [dir])` after `write_capture(dir)`."""
        records = tuple(derive_record(line, index) for index, line in enumerate(self.capture_lines))
        capture = Capture(self.rollout_id, records=records, found=bool(records))
        result = dict(self.record)
        bundle = AgentObservationBundle.model_validate(self.record[OBSERVATIONS])
        result[OBSERVATIONS] = join(bundle, records).model_dump(mode="python")
        result[CAPTURE] = capture_attachment(capture)
        return attach_trajectory(self.record, result)


@st.composite
def rollouts(draw: st.DrawFn, max_calls: int = 5, max_invocations: int = 4) -> Rollout:
    """A rollout whose evidence is clean and whose every model-call reference joins one captured call."""
    task, index = draw(st.integers(0, 999)), draw(st.integers(0, 7))
    count = draw(st.integers(0, max_calls))
    exchanges = [draw(capture_exchanges(index=i)) for i in range(count)]
    bundle, owners = draw(_bundle(exchanges, max_invocations))
    record: dict[str, Any] = {
        "responses_create_params": {"input": [{"role": "user", "content": draw(_prose), "type": "message"}]},
        "reward": draw(st.sampled_from([0.0, 1.0])),
        "_ng_task_index": task,
        "_ng_rollout_index": index,
        OBSERVATIONS: bundle,
    }
    if draw(st.booleans()) and exchanges:
        record[TRAJECTORY] = _producer_trajectory(str(task), f"{task}-{index}", exchanges, owners)
    return Rollout(record, exchanges)


def _producer_trajectory(
    task_id: str, rollout_id: str, exchanges: list[dict[str, Any]], owners: dict[str, str]
) -> dict[str, Any]:
    """The `ng_trajectory` a harness writes of its own: one turn per model call, numbered per invocation."""
    turns: list[dict[str, Any]] = []
    numbers: dict[str, int] = {}
    for exchange in exchanges:
        invocation = owners[exchange["model_call_id"]]
        numbers[invocation] = numbers.get(invocation, 0) + 1
        turns.append(
            {
                "invocation_id": invocation,
                "task_id": task_id,
                "rollout_id": rollout_id,
                "turn_no": numbers[invocation],
                "timestamp": exchange["started_at"],
                "step_count": numbers[invocation] - 1,
                "model_calls": [{"model_call_id": exchange["model_call_id"]}],
            }
        )
    return {"schema_version": "1.0", "task_id": task_id, "rollout_id": rollout_id, "turns": turns}


def rollout_records(max_calls: int = 5, max_invocations: int = 4) -> st.SearchStrategy[dict[str, Any]]:
    """Whole rollout records as the collector writes them: observations joined to the captured calls
    (`ng_model_call_capture`) and the `ng_trajectory` projected from them."""
    return rollouts(max_calls, max_invocations).map(Rollout.collected)


def trajectories(max_calls: int = 5, max_invocations: int = 4) -> st.SearchStrategy[dict[str, Any]]:
    """`ng_trajectory` records, projected by the package from clean rollouts (`rollout_records`)."""
    return rollout_records(max_calls, max_invocations).map(lambda record: record["ng_trajectory"])


def model_call_captures(max_calls: int = 5) -> st.SearchStrategy[dict[str, Any]]:
    """`ng_model_call_capture` attachments: the derived records of clean capture lines and their metrics."""
    return rollout_records(max_calls, 2).map(lambda record: record[CAPTURE])


# ---------------------------------------------------------------------------------------- outcomes


@st.composite
def agent_outcomes(draw: st.DrawFn) -> dict[str, Any]:
    """`ng_agent_outcome` records whose status and failure kind agree (a transient kind never completes)."""
    status = draw(st.sampled_from(["completed", "failed", "incomplete"]))
    kinds = [kind for kind in FAILURE_KINDS if not (status == "completed" and kind in TRANSIENT_KINDS)]
    failure = None if status == "completed" and draw(st.booleans()) else draw(st.sampled_from(kinds))
    outcome: dict[str, Any] = {
        "schema_version": "1.0",
        "harness": draw(st.sampled_from(HARNESSES)),
        "classifier": {"name": "gym_contract", "version": "1"},
        "response_status": status,
        "failure_kind": failure,
        "retryable": failure in TRANSIENT_KINDS,
        # A run that ran out of room keeps its partial work, and says so.
        "partial_work_retained": failure in INCOMPLETE_KINDS,
        "signals": [{"artifact": "events", "field": "error.name", "value": failure}] if failure else [],
    }
    return outcome
