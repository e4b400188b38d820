"""Write a realistic, seeded rollout corpus for benchmarks and scale tests.

    python tools/make_corpus.py OUT.jsonl --records N --seed S [--record-kb 150] [--invalid-share 0.0]

Each line is one rollout record as the reference gym writes it, with `ng_agent_observations`,
`ng_model_call_capture` and `ng_trajectory`. A `.gz` or `.zst` OUT is compressed; same arguments, same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

CONTRACT = Path(__file__).resolve().parents[1] / "schemas" / "v1"
GAP_REGISTRY = {entry["code"] for entry in json.loads((CONTRACT / "gap_codes.json").read_text())["codes"]}
TRAJECTORY_DEFS = json.loads((CONTRACT / "trajectory.schema.json").read_text())["$defs"]
# A trajectory's response metadata takes the capture record's fields of the same names.
METADATA_FIELDS = tuple(TRAJECTORY_DEFS["TrajectoryResponseMetadata"]["properties"])
CAPTURE_TOKENS = ("tokens_in", "tokens_out", "tokens_reasoning", "tokens_total", "cached_tokens")
TOKEN_FIELDS = dict(zip(TRAJECTORY_DEFS["TrajectoryTokenStats"]["properties"], CAPTURE_TOKENS, strict=True))

SOURCES = ("claude_code", "opencode", "hermes", "pi")
ROLLOUTS_PER_TASK = 4
# One model call leaves ~7 KB of structure (payloads, capture record, conversation copies, tool records)
# before any text; this spacing leaves about a fifth of a record for tool outputs and messages.
KB_PER_MODEL_CALL = 9.0
# Resent histories make each call's request grow with the conversation: fewer calls fill a record.
KB_PER_MODEL_CALL_FULL_HISTORY = 12.0
BASE_MS = 1_786_000_000_000  # mid-August 2026, UTC
MIN_TEXT_BYTES = 24
PAYLOAD_KEYS = ("request", "response", "request_raw", "response_raw")
POLICY = {"type": "responses_api_models", "name": "policy"}
POLICY_MODELS = ("Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-30B-A3B-Instruct-2507", "nvidia/NVIDIA-Nemotron-Nano-9B-v2")

SOURCE_FILE = "/workspace/src/{pkg}/{noun}.py"
# kind -> (description, argument templates); each producer names the same kinds of tools its own way.
TOOL_KINDS = {
    "shell": ("Run a shell command.", {"command": "python -m pytest -q tests/test_{noun}.py", "description": "Test"}),
    "read": ("Read a file with line numbers.", {"file_path": SOURCE_FILE}),
    "edit": ("Replace a string in a file.", {"file_path": SOURCE_FILE, "old_string": "{noun}", "new_string": "{verb}"}),
    "search": ("Search file contents.", {"pattern": "def {verb}_{noun}", "path": "/workspace/src/{pkg}"}),
    "spawn": ("Hand a self-contained task to a subagent.", {"description": "Investigate {noun}", "prompt": ""}),
}
TOOL_NAMES = {
    "claude_code": ("Bash", "Read", "Edit", "Grep", "Task"),
    "opencode": ("bash", "read", "edit", "grep", "task"),
    "hermes": ("terminal", "read_file", "patch", "search_files", "delegate_task"),
    "pi": ("bash", "read", "edit", "grep", "subagent"),
}
TEXT_WEIGHT = {"shell": 2.0, "read": 3.0, "edit": 1.2, "search": 1.5}  # tool outputs dominate real transcripts
TIMING_SOURCE = {"claude_code": "artifact", "opencode": "artifact", "hermes": "harness", "pi": "harness"}
COMPACTION_TRIGGER = {"claude_code": "auto", "opencode": "overflow", "hermes": "context_pressure", "pi": "threshold"}

# (producer, code, detail, how often): gaps each producer really emits, limited to ones no evidence in
# the record contradicts. A `tool` detail names a tool call, whose timing the gap says is missing.
GAP_MENU = (
    ("claude_code", "no_sandbox_runtime", None, 1.0),
    ("claude_code", "malformed_transcript_line", "transcript.jsonl:17", 0.2),
    ("opencode", "no_sandbox_runtime", None, 1.0),
    ("opencode", "agent_artifact_record_unparseable", None, 0.2),
    ("opencode", "tool_timing_unavailable", "tool", 0.3),
    ("hermes", "sandbox_observation_unavailable", "terminal_backend=local", 1.0),
    ("hermes", "reasoning_details_unavailable", None, 0.3),
    ("pi", "no_sandbox_runtime", None, 1.0),
    ("pi", "tool_timing_unavailable", "tool", 0.3),
)
assert {entry[1] for entry in GAP_MENU} <= GAP_REGISTRY, "every gap code must be in schemas/v1/gap_codes.json"

VOCABULARY = {
    "noun": ("config", "record", "index", "buffer", "schema", "token", "cache", "stream", "batch", "session"),
    "verb": ("load", "parse", "read", "write", "build", "flush", "resolve", "merge", "validate", "emit"),
    "word": ("empty", "stale", "nested", "partial", "missing", "first", "last", "pending", "cached", "sorted"),
    "pkg": ("core", "io", "engine", "cli", "utils"),
    "n": tuple(map(str, range(4096))),
}
PROSE = (
    "I'll open `src/{pkg}/{noun}.py` to see how `{verb}_{noun}` handles an empty {noun}.",
    "The failure comes from `{verb}_{noun}`: it returns {n} where the test expects {n}.",
    "`{verb}_{noun}` keeps every {noun} in memory, so a large {noun} makes it slow.",
    "The {noun} and the {noun} disagree after the {word} step, which explains the error.",
    "All {n} tests pass now; the fix is in `{verb}_{noun}`, so I will run the {noun} tests once more.",
    "That explains the off-by-one: `{verb}_{noun}` skips the {word} {noun} when the {noun} is {word}.",
)
CODE = (  # one function, line by line, so that a numbered window of it reads like a source file
    "def {verb}_{noun}({noun}, limit=None):",
    '    """Return the {word} {noun} of each {noun}."""',
    "    if {noun} is None:",
    '        raise ValueError("{noun} must not be empty")',
    "    for item in {noun}_list[:limit]:",
    "        yield {verb}_{noun}(item, {n})",
    "",
)
SHELL = (
    "tests/test_{noun}.py::test_{verb}_{noun} PASSED",
    "FAILED tests/test_{noun}.py::test_{verb}_{noun} - AssertionError: assert {n} == {n}",
    '  File "/workspace/src/{pkg}/{noun}.py", line {n}, in {verb}_{noun}',
    "==== {n} passed, {n} failed in 12.{n}s ====",
)
SPAWN_PROMPT = "Find the callers of `{verb}_{noun}` in src/{pkg} that pass a {word} {noun}; give file and line."
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def expand(rng: random.Random, template: str) -> str:
    """The template with each placeholder drawn afresh, so that one template gives many texts."""
    return PLACEHOLDER.sub(lambda match: rng.choice(VOCABULARY[match[1]]), template)


def compose(rng: random.Random, style: str, budget: int) -> str:
    """Text in `style` whose JSON-escaped length is `budget` bytes (ASCII only, so characters are bytes)."""
    parts, used, line_no = [], 0, rng.randint(1, 300)
    while used < budget:
        if style in ("read", "edit"):  # file contents as numbered lines, the way agents' read tools show them
            part = f"{line_no:>6}\t{expand(rng, CODE[line_no % len(CODE)])}"
            line_no += 1
        elif style == "search":  # grep's file:line:match
            part = expand(rng, "src/{pkg}/{noun}.py:{n}:" + CODE[0])
        elif style == "shell":
            part = expand(rng, rng.choice(SHELL))
        else:
            part = expand(rng, rng.choice(PROSE)) + ("\n" if rng.random() < 0.2 else "")
        cost = len(part) + part.count('"') + part.count("\\") + part.count("\t") + 2 * part.count("\n") + 2
        if used + cost > budget:  # end on a whole word near the budget
            part = part[: max(0, budget - used - 2)].rsplit(" ", 1)[0]
        parts.append(part)
        used += cost
    return (" " if style == "prose" else "\n").join(parts)


class TextSlot:
    """A long text, sized once the whole record exists: a text shown in several places (a tool output sits
    in the conversation, the tool call and the next request) costs its length once per place."""

    __slots__ = ("copies", "head", "style", "text", "weight")

    def __init__(self, style: str, weight: float, head: str = "") -> None:
        self.style, self.weight, self.head, self.copies, self.text = style, weight, head, 0, head

    def counted(self) -> str:
        self.copies += 1
        return self.head


def fill_slots(rng: random.Random, record: dict[str, Any], slots: list[TextSlot], target_bytes: int) -> dict:
    """Share the bytes the structure leaves among the slots by weight; return plain JSON data."""
    structure = len(orjson.dumps(record, default=TextSlot.counted))
    bytes_per_weight = max(0, target_bytes - structure) / (sum(s.weight * s.copies for s in slots) or 1.0)
    for slot in slots:
        slot.text = slot.head + compose(rng, slot.style, max(MIN_TEXT_BYTES, int(bytes_per_weight * slot.weight)))
    return orjson.loads(orjson.dumps(record, default=lambda slot: slot.text))


def message(role: str, content: Any) -> dict:
    return {"content": content, "role": role, "type": "message"}


def output_message(item_id: str, text: Any) -> dict:
    part = {"annotations": [], "text": text, "type": "output_text", "logprobs": None}
    return {"id": item_id, "content": [part], "role": "assistant", "status": "completed", "type": "message"}


def tool_spec(kind: str, name: str) -> dict:
    description, arguments = TOOL_KINDS[kind]
    parameters = {"type": "object", "properties": {arg: {"type": "string"} for arg in arguments}}
    return {"type": "function", "name": name, "description": description, "parameters": parameters}


def requested_tool(function_call: dict) -> dict:
    """A tool call as the capture reads it from a response: arguments parsed from their JSON string."""
    arguments = json.loads(function_call["arguments"])
    return {"call_id": function_call["call_id"], "name": function_call["name"], "arguments": arguments}


class RolloutBuilder:
    """Plays one rollout forward on a millisecond clock, keeping the evidence a harness and the capture keep."""

    full_history = True
    """Requests resend the whole model-visible context, as stateless servers need; else only new items."""

    def __init__(self, rng: random.Random, task: int, rollout: int) -> None:
        self.rng, self.task, self.rollout_id = rng, task, f"{task}-{rollout}"
        self.source = SOURCES[(task + rollout) % len(SOURCES)]
        self.model = rng.choice(POLICY_MODELS)
        self.tool_names = dict(zip(TOOL_KINDS, TOOL_NAMES[self.source], strict=True))
        self.tool_specs = [tool_spec(kind, name) for kind, name in self.tool_names.items()]
        self.clock_ms = BASE_MS + rng.randrange(30 * 86_400_000)
        self.slots, self.invocations, self.observations, self.captured, self.turns = [], [], [], [], []
        # A damaged capture line leaves a hole in call_index (and a gap), as the reference store does.
        self.damaged_line = rng.randrange(1, 3) if rng.random() < 0.1 else None

    def text(self, style: str, weight: float, head: str = "") -> TextSlot:
        self.slots.append(TextSlot(style, weight, head))
        return self.slots[-1]

    def hex(self, bits: int = 96) -> str:
        return f"{self.rng.getrandbits(bits):0{bits // 4}x}"

    def tick(self, low: int, high: int) -> int:
        self.clock_ms += self.rng.randint(low, high)
        return self.clock_ms

    def model_call(self, items: list, outputs: list, prompt: int, cached: int, chain: str | None) -> dict:
        """Capture one call (a ModelCallRecord with payloads) and return the reference that joins it."""
        rng, model = self.rng, self.model
        completion = rng.randint(40, 1600)
        reasoning = rng.randint(20, completion) if outputs[0]["type"] == "reasoning" else 0
        ttft = rng.randint(180, 2400)
        started, completed = self.tick(5, 60), self.tick(ttft + completion * 6, ttft + completion * 22)
        call_index = len(self.captured)
        if self.damaged_line is not None and call_index >= self.damaged_line:
            call_index += 1  # the damaged line keeps its position in the capture file
        model_call_id, response_id = self.hex(128), f"resp_{self.hex(128)}"
        request = {"model": model, "input": items, "previous_response_id": chain, "tools": self.tool_specs}
        response = {"id": response_id, "created_at": float(started // 1000), "model": model, "object": "response"}
        # Input tokens include the cached ones, as OpenAI-style servers count them.
        usage = {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": completion}
        usage |= {"output_tokens_details": {"reasoning_tokens": reasoning}, "total_tokens": prompt + completion}
        response.update(output=outputs, status="completed", usage=usage)
        # The fields of a ModelCallRecord, in its order, grouped by where they come from.
        call = {"model_call_id": model_call_id, "response_id": response_id, "call_index": call_index}
        call |= {"model_ref": POLICY, "model": model, "dialect": "responses", "status_code": 200}
        call |= {"response_status": "completed", "finish_reason": None}
        call |= {"started_at": started / 1000, "completed_at": completed / 1000, "tokens_in": prompt}
        call |= {"tokens_out": completion, "tokens_reasoning": reasoning, "tokens_total": prompt + completion}
        call |= {"request": request, "response": response}
        call["tool_calls"] = [requested_tool(item) for item in outputs if item["type"] == "function_call"]
        call["reasoning_content"] = outputs[0]["summary"][0]["text"] if reasoning else None
        call |= {"cache_hit": cached > 0, "cached_tokens": cached, "cache_creation_tokens": None}
        call |= {"error_category": None, "latency_total_ms": float(completed - started), "latency_ttft_ms": float(ttft)}
        self.captured.append(call)
        return {"model_call_id": model_call_id, "model_ref": POLICY, "response_id": response_id}

    def function_call(self, kind: str, spawn_prompt: str) -> dict:
        arguments = {name: expand(self.rng, value) for name, value in TOOL_KINDS[kind][1].items()}
        if kind == "spawn":
            arguments["prompt"] = spawn_prompt
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        call_id = ("toolu_01" if self.source == "claude_code" else "call_") + "".join(self.rng.choices(alphabet, k=22))
        item = {"arguments": json.dumps(arguments), "call_id": call_id, "name": self.tool_names[kind]}
        return item | {"type": "function_call", "id": f"fc_{self.hex()}", "status": "completed"}

    def run_tools(self, invocation_id: str, calls: list[tuple], subagents: list) -> list[dict]:
        """Run the calls one after another or side by side (then they overlap, which C6 is about)."""
        rng = self.rng
        parallel = len(calls) > 1 and rng.random() < 0.6
        start = cursor = self.tick(5, 80)
        ends, results = [], []
        for kind, call, prompt in calls:
            started = start + rng.randint(0, 40) if parallel else cursor
            status, error_type, head = "completed", None, ""
            if kind == "spawn":
                self.clock_ms = started + rng.randint(30, 200)
                output = self.run_invocation(subagents.pop(0), invocation_id, call["call_id"], prompt)
                completed = self.tick(10, 120)
            else:
                completed = started + min(120_000, int(rng.lognormvariate(7.5 if kind == "shell" else 5.5, 1.0)))
                if kind == "shell" and rng.random() < 0.12:
                    status, error_type, head = "failed", "exit_code_1", "Exit code 1\n"
                elif kind == "edit":
                    head = f"The file {json.loads(call['arguments'])['file_path']} has been updated:\n"
                output = self.text(kind, TEXT_WEIGHT[kind], head)
            cursor = completed
            ends.append(completed)
            timing = {"started_at": started / 1000, "completed_at": completed / 1000}
            timing |= {"duration_ms": float(completed - started), "timing_source": TIMING_SOURCE[self.source]}
            observed = {"kind": "tool_call", "invocation_id": invocation_id, "tool_call_id": call["call_id"]}
            observed |= {"sandbox_id": None, "tool_name": call["name"], **timing, "status": status}
            self.observations.append(observed | {"error_type": error_type})
            results.append({"call_id": call["call_id"], "output": output, "type": "function_call_output", "id": None})
        self.clock_ms = max(ends) + rng.randint(20, 400)
        return results

    def run_invocation(self, plan: tuple, parent_id: str | None, spawned_by: str | None, task: Any) -> TextSlot:
        """One agent conversation; `plan` is (model calls, subagent plans). Returns the final answer."""
        rng, (n_calls, subagents) = self.rng, (plan[0], list(plan[1]))
        invocation_id, started_ms = self.hex(128), self.clock_ms
        system = message("system", f"You are a coding agent ({self.source}). Run the tests before you answer.")
        conversation = [system, message("user", task)]
        invocation = {"kind": "agent_invocation", "invocation_id": invocation_id, "parent_invocation_id": parent_id}
        invocation |= {"spawned_by_tool_call_id": spawned_by, "status": "completed", "duration_ms": None}
        invocation |= {"error_type": None, "model_calls": [], "conversation": conversation}
        self.invocations.append(invocation)
        spawn_steps = rng.sample(range(n_calls - 1), len(subagents))
        compact_step = rng.randint(2, n_calls - 1) if not parent_id and n_calls >= 4 and rng.random() < 0.35 else -1
        new_items, chain = list(conversation), None
        visible = list(conversation)  # what the model sees: the conversation, cut back at a compaction
        context, cached, step_count = rng.randint(4000, 14000), rng.choice((0, 1024, 2048)), 0
        for step in range(n_calls):
            if step == compact_step:
                compaction = self.compact(invocation, context)
                context, cached, chain = compaction["tokens_after"], 0, None
                new_items = [system, message("user", compaction["summary"]), *new_items]
                visible = list(new_items)
            outputs, final, reasoning, answer = [], step == n_calls - 1, None, None
            if rng.random() < 0.6:
                reasoning = self.text("prose", 0.5)
                summary = [{"text": reasoning, "type": "summary_text"}]
                outputs.append({"id": f"rs_{self.hex()}", "summary": summary, "type": "reasoning"})
            if final or rng.random() < 0.35:
                answer = self.text("prose", 1.2 if final else 0.6)
                outputs.append(output_message(f"msg_{self.hex()}", answer))
            calls = []
            if not final:
                kinds = rng.choices(("shell", "read", "edit", "search"), (4, 3, 2, 2), k=rng.choice((1, 1, 2, 2, 3)))
                if step in spawn_steps:
                    kinds[rng.randrange(len(kinds))] = "spawn"
                for kind in kinds:
                    prompt = expand(rng, SPAWN_PROMPT) if kind == "spawn" else ""
                    calls.append((kind, self.function_call(kind, prompt), prompt))
                    outputs.append(calls[-1][1])
            if self.full_history:
                ref = self.model_call(list(visible), outputs, context, cached, None)
            else:
                ref = self.model_call(new_items, outputs, context, cached, chain)
            visible.extend(outputs)
            invocation["model_calls"].append(ref)
            if step == compact_step:
                compaction["after_model_call"] = ref
            conversation.extend(outputs)
            # One turn per model call, as the reference's simple agent writes them.
            turn = {"invocation_id": invocation_id, "task_id": str(self.task), "rollout_id": self.rollout_id}
            turn |= {"turn_no": step + 1, "timestamp": self.captured[-1]["started_at"], "answer": answer}
            turn["question"] = [item for item in new_items if item.get("role") != "system"]
            turn |= {"reasoning_content": reasoning, "resolved": None, "model_calls": [ref]}
            self.turns.append(turn)
            new_items = self.run_tools(invocation_id, calls, subagents) if calls else []
            conversation.extend(new_items)
            visible.extend(new_items)
            step_count = turn["step_count"] = step_count + len(calls)  # counted once the turn's tools have run
            # The next request repeats this prompt, which the provider serves from cache in 64-token blocks.
            cached, chain = context // 64 * 64, self.captured[-1]["response_id"]
            context += self.captured[-1]["tokens_out"] + sum(rng.randint(80, 3000) for _ in calls)
        invocation["duration_ms"] = float(self.clock_ms - started_ms)
        return answer

    def compact(self, invocation: dict, tokens_before: int) -> dict:
        """Compact the root's context between two model calls; the caller fills in `after_model_call`."""
        kept = [item["id"] for item in invocation["conversation"] if item.get("id")]
        compaction = {"kind": "context_compaction", "invocation_id": invocation["invocation_id"]}
        compaction |= {"observed_at": self.tick(50, 500) / 1000, "trigger": COMPACTION_TRIGGER[self.source]}
        compaction |= {"tokens_before": tokens_before, "tokens_after": int(tokens_before * self.rng.uniform(0.1, 0.25))}
        compaction |= {"outcome": "completed", "summary": self.text("prose", 1.0, "Summary of the work so far:\n")}
        compaction["first_kept_item_id"] = kept[-1] if self.rng.random() < 0.5 else None
        compaction |= {"before_model_call": invocation["model_calls"][-1], "model_calls": [], "after_model_call": None}
        self.tick(2000, 15000)  # summarising takes a while
        self.observations.append(compaction)
        return compaction

    def gaps(self) -> list[dict]:
        """The producer's gaps; a tool gap takes from its tool call the timing it says is missing."""
        root_id, gaps = self.invocations[0]["invocation_id"], []
        for source, code, detail, how_often in GAP_MENU:
            if source == self.source and self.rng.random() < how_often:
                invocation_id = None if code in ("no_sandbox_runtime", "sandbox_observation_unavailable") else root_id
                if detail == "tool":
                    tool = self.rng.choice([o for o in self.observations if o.get("duration_ms") is not None])
                    invocation_id, detail = tool["invocation_id"], tool["tool_call_id"]
                    tool.update(started_at=None, completed_at=None, duration_ms=None)
                gaps.append({"code": code, "invocation_id": invocation_id, "detail": detail})
        return gaps


def plan_invocations(rng: random.Random, total_calls: int) -> tuple:
    """(model calls, subagent plans) for the root: 1–3 subagents, sometimes one spawned by another."""
    count = rng.randint(1, 3) if total_calls >= 8 else 1
    subagents = [(max(1, round(total_calls * rng.uniform(0.08, 0.16))), []) for _ in range(count)]
    if count >= 2 and subagents[0][0] >= 2 and rng.random() < 0.4:  # a subagent spawns one of its own
        subagents[0] = (subagents[0][0], [subagents.pop()])
    spent = sum(calls + sum(c for c, _ in children) for calls, children in subagents)
    return max(len(subagents) + 1, total_calls - spent), subagents


def project(builder: RolloutBuilder, gaps: list[dict]) -> dict:
    """The `ng_trajectory` as the collector projects it: tool outputs from conversations, payloads from the capture."""
    outputs = {}
    for invocation in builder.invocations:
        for item in invocation["conversation"]:
            if item.get("type") == "function_call_output":
                outputs[invocation["invocation_id"], item["call_id"]] = item["output"]
    observed = [o for o in builder.observations if o["kind"] == "tool_call"]
    tools = [o | {"output": outputs[o["invocation_id"], o["tool_call_id"]]} for o in observed]
    turns = sorted(builder.turns, key=lambda t: (t["timestamp"], t["invocation_id"], t["turn_no"]))
    model_calls = []
    for call in builder.captured:
        timing = {key: call[key] for key in ("model_call_id", "started_at", "completed_at")}
        model_calls.append(timing | {"duration_ms": call["latency_total_ms"], "request": call["request"]})
        model_calls[-1]["response"] = call["response"]
        model_calls[-1]["response_metadata"] = {key: call[key] for key in METADATA_FIELDS}
        model_calls[-1]["token_stats"] = {stat: call[field] for stat, field in TOKEN_FIELDS.items()}
    trajectory = {"schema_version": "1.0", "task_id": str(builder.task), "rollout_id": builder.rollout_id}
    trajectory |= {"invocations": builder.invocations, "turns": turns, "model_calls": model_calls}
    return trajectory | {"tool_calls": tools, "gaps": gaps}


def make_record(rng: random.Random, task: int, rollout: int, target_kb: int, full_history: bool = True) -> dict:
    """One rollout record of about `target_kb` KiB with all three attachments, every id drawn from `rng`."""
    builder = RolloutBuilder(rng, task, rollout)
    builder.full_history = full_history
    per_call = KB_PER_MODEL_CALL_FULL_HISTORY if full_history else KB_PER_MODEL_CALL
    total_calls = max(3, round(target_kb / per_call * rng.uniform(0.85, 1.15)))
    head = expand(rng, "Task {n}: `tests/test_{noun}.py::test_{verb}_{noun}` fails. Fix the code in /workspace.\n\n")
    builder.run_invocation(plan_invocations(rng, total_calls), None, None, builder.text("prose", 0.5, head))
    root = builder.invocations[0]
    reward = 1.0 if rng.random() < 0.45 else 0.0
    next(t for t in reversed(builder.turns) if t["invocation_id"] == root["invocation_id"])["resolved"] = reward > 0
    gaps = builder.gaps()
    # Capture gaps are dumped without null keys; the trajectory carries every key.
    damaged = [{"code": "model_call_capture_records_unreadable", "detail": "count=1"}]
    damaged = damaged if builder.damaged_line is not None else []
    calls = [{k: v for k, v in call.items() if k not in PAYLOAD_KEYS} for call in builder.captured]
    metrics = {key: sum(call[key] for call in calls) for key in (*TOKEN_FIELDS.values(), "latency_total_ms")}
    capture = {"rollout_id": builder.rollout_id, "metrics": metrics | {"num_calls": len(calls)}, "calls": calls}
    records = [*builder.invocations, *builder.observations]
    rng.shuffle(records)  # the bundle is unordered: position must not stand in for execution order
    record = {
        "responses_create_params": {"input": root["conversation"][1:2], "tools": [], "tool_choice": "auto"},
        # The agent returns its last response (the root answers last), carrying all the root's output items.
        "response": builder.captured[-1]["response"] | {"output": root["conversation"][2:]},
        "reward": reward,
        "_ng_task_index": task,
        "_ng_rollout_index": rollout,
        "agent_ref": {"name": f"swe_{builder.source}_agent"},
        "ng_agent_observations": {"source": builder.source, "records": records, "gaps": gaps},
        "ng_model_call_capture": capture | ({"gaps": damaged} if damaged else {}),
        "ng_trajectory": project(builder, gaps + [{"invocation_id": None, **gap} for gap in damaged]),
    }
    return fill_slots(rng, record, builder.slots, target_kb * 1024)


DEFECTS = ("negative_duration", "end_before_start", "duplicate_id", "unknown_key", "no_timestamp", "no_call_index")


def inject_defect(rng: random.Random, record: dict) -> str:
    """Break `record` in exactly one way a buggy producer or a careless hand edit would; returns which."""
    trajectory = record["ng_trajectory"]
    timed = [tool for tool in trajectory["tool_calls"] if tool["duration_ms"] is not None]
    defect = rng.choice(DEFECTS if timed else DEFECTS[2:])  # the first two need a timed tool call
    tool = rng.choice(timed) if timed else {}
    if defect == "negative_duration":
        tool["duration_ms"] = -tool["duration_ms"]
    elif defect == "end_before_start":
        tool["completed_at"] = round(tool["started_at"] - tool["duration_ms"] / 1000, 3)
    elif defect == "duplicate_id":
        rng.choice(trajectory["invocations"][1:])["invocation_id"] = trajectory["invocations"][0]["invocation_id"]
    elif defect == "unknown_key":  # the reference rejects exactly this: `output` is the trajectory's
        rng.choice([r for r in record["ng_agent_observations"]["records"] if r["kind"] == "tool_call"])["output"] = "ok"
    elif defect == "no_timestamp":
        del rng.choice(trajectory["turns"])["timestamp"]
    else:
        del rng.choice(record["ng_model_call_capture"]["calls"])["call_index"]
    return defect


@contextlib.contextmanager
def open_output(path: Path) -> Iterator[BinaryIO]:
    with contextlib.ExitStack() as stack:
        raw = stack.enter_context(path.open("wb"))
        if path.suffix == ".gz":
            # No file name and mtime 0 in the header: the same arguments must give the same bytes.
            yield stack.enter_context(gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0))
        elif path.suffix == ".zst":
            import zstandard

            yield stack.enter_context(zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=False))
        else:
            yield raw


def as_the_reference_writes(record: dict) -> dict:
    """Attachments dumped through the contract's models: every key, in schema order, as the reference does."""
    from gym_contract.models import AgentObservationBundle, ModelCallCapture, TrajectoryRecord

    for key, model in (("ng_trajectory", TrajectoryRecord), ("ng_agent_observations", AgentObservationBundle)):
        record[key] = model.model_validate(record[key]).model_dump(mode="json")
    capture = ModelCallCapture.model_validate(record["ng_model_call_capture"]).model_dump(mode="json")
    # The capture's gaps are written only when there are some, each without its null keys.
    gaps = [{k: v for k, v in gap.items() if v is not None} for gap in capture.pop("gaps")]
    record["ng_model_call_capture"] = capture | ({"gaps": gaps} if gaps else {})
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="output file; a .gz or .zst suffix compresses")
    parser.add_argument("--records", type=int, required=True, help="number of rollout records")
    parser.add_argument("--seed", type=int, required=True, help="the same seed and arguments give the same bytes")
    parser.add_argument("--record-kb", type=int, default=150, help="size of a record in KiB (20 or more)")
    parser.add_argument("--invalid-share", type=float, default=0.0, help="share of records given one defect")
    parser.add_argument(
        "--requests",
        choices=("full", "incremental"),
        default="full",
        help="requests resend the whole context (stateless servers, the default) or chain by previous_response_id",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.invalid_share <= 1:
        parser.error("--invalid-share must lie between 0 and 1")
    # An exact count rather than a coin per record: a benchmark gets the share it asked for.
    chooser = random.Random(f"{args.seed}:defects")
    defective = set(chooser.sample(range(args.records), round(args.records * args.invalid_share)))
    defects: Counter[str] = Counter()
    written, began = 0, time.perf_counter()
    with open_output(args.out) as out:
        for index in range(args.records):
            # A record depends only on (seed, index), so corpora of different lengths share their prefix.
            rng = random.Random(f"{args.seed}:{index}")
            record = make_record(rng, *divmod(index, ROLLOUTS_PER_TASK), args.record_kb, args.requests == "full")
            if index in defective:
                defects[inject_defect(rng, record)] += 1
            else:
                record = as_the_reference_writes(record)
            line = orjson.dumps(record) + b"\n"
            out.write(line)
            written += len(line)
    summary = ", ".join(f"{n} {name}" for name, n in sorted(defects.items())) or "no defects"
    elapsed = time.perf_counter() - began
    print(f"wrote {args.records} records, {written / 1e6:.1f} MB, {summary}, to {args.out} in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
