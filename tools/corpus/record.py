"""A whole rollout record: the plan of its invocations, its attachments, its trajectory and its defects."""

from __future__ import annotations

import json
import random

from .rollout import CONTRACT, RolloutBuilder
from .text import TASK_PROMPT, expand, fill_slots

TRAJECTORY_DEFS = json.loads((CONTRACT / "trajectory.schema.json").read_text())["$defs"]
# A trajectory's response metadata takes the capture record's fields of the same names.
METADATA_FIELDS = tuple(TRAJECTORY_DEFS["TrajectoryResponseMetadata"]["properties"])
CAPTURE_TOKENS = ("tokens_in", "tokens_out", "tokens_reasoning", "tokens_total", "cached_tokens")
TOKEN_FIELDS = dict(zip(TRAJECTORY_DEFS["TrajectoryTokenStats"]["properties"], CAPTURE_TOKENS, strict=True))
# One model call leaves ~7 KB of structure (payloads, capture record, conversation copies, tool records)
# before any text; this spacing leaves about a fifth of a record for tool outputs and messages.
KB_PER_MODEL_CALL = 9.0
# Resent histories make each call's request grow with the conversation: fewer calls fill a record.
KB_PER_MODEL_CALL_FULL_HISTORY = 12.0
PAYLOAD_KEYS = ("request", "response", "request_raw", "response_raw")


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
    head = expand(rng, TASK_PROMPT)
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
