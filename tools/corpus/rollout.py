"""One rollout played forward: the producers' tools, its model calls, tool calls, turns, compactions and gaps."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from .text import SPAWN_PROMPT, TEXT_WEIGHT, TextSlot, expand

CONTRACT = Path(__file__).resolve().parents[2] / "schemas" / "v1"
GAP_REGISTRY = {entry["code"] for entry in json.loads((CONTRACT / "gap_codes.json").read_text())["codes"]}

SOURCES = ("claude_code", "opencode", "hermes", "pi")
BASE_MS = 1_786_000_000_000  # mid-August 2026, UTC
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
