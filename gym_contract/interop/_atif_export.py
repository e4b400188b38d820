"""Rollout evidence written as an ATIF trajectory: one document per invocation tree, nothing left out.

Each invocation is one ATIF trajectory whose steps come from its conversation; its subagents are
embedded in `subagent_trajectories` (ATIF 1.7+) and referenced from the observation of the tool call
that spawned them. Per-step metrics come from the captured model calls whose response produced the
step's items, matched by item and tool-call ids only. Every fact ATIF has no field for — the
invocation's status and references, tool timing, gaps, compactions, calls no step claims — is kept
under `extra.gym_contract`, which `from_atif` reads back.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import orjson

from gym_contract._json_writing import dumps, python_text
from gym_contract._values import obj, objects, text
from gym_contract.interop._atif_steps import ATIF_VERSIONS, EXTRA_KEY, items_of_step
from gym_contract.interop._view import Evidence, ModelCall, evidence_of
from gym_contract.reading._json_parsing import loads

__all__ = ["to_atif"]

_INVOCATION_FIELDS = (
    "invocation_id",
    "parent_invocation_id",
    "spawned_by_tool_call_id",
    "status",
    "duration_ms",
    "error_type",
    "model_calls",
)
_NOT_TOOL_FACTS = ("kind", "invocation_id", "tool_call_id", "output")
_AGENT_ITEMS = ("function_call", "reasoning")


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):  # out of datetime's range: no ISO 8601 text for it
        return None


def _known_sum(values: list[int | None]) -> int | None:
    """The sum when every value is known; None (unknown) as soon as one is not — never a partial sum."""
    if not values or any(value is None for value in values):
        return None
    return sum(value for value in values if value is not None)


def _with_extra(target: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    facts = {key: value for key, value in kept.items() if value not in (None, [], {})}
    if facts:
        target["extra"] = {EXTRA_KEY: facts}
    return target


class _Steps:
    """The steps of one invocation's conversation, built item by item."""

    def __init__(self, tools: dict[str, dict[str, Any]]) -> None:
        self.tools = tools  # tool_call_id -> tool record of this invocation
        self.steps: list[dict[str, Any]] = []
        self.items: list[list[dict[str, Any]]] = []  # the conversation items each step stands for
        self.exact: list[bool] = []
        self.step_of_call: dict[str, int] = {}
        self.placed_tools: set[str] = set()
        # The first result of each call, so that a parent of thousands of subagents finds each one at once.
        self.result_of_call: dict[str, dict[str, Any]] = {}

    def _open(self, source: str) -> int:
        self.steps.append({"source": source, "message": ""})
        self.items.append([])
        self.exact.append(True)
        return len(self.steps) - 1

    def _agent_step(self, item: dict[str, Any]) -> int:
        """The agent step an agent-side item belongs to: the current one, unless that one is complete."""
        if self.steps and self.steps[-1]["source"] == "agent":
            step = self.steps[-1]
            answered = "observation" in step
            kind = item.get("type")
            repeated = (kind == "message" and step["message"]) or (
                kind == "reasoning" and (step["message"] or "tool_calls" in step or "reasoning_content" in step)
            )
            if not answered and not repeated:
                return len(self.steps) - 1
        return self._open("agent")

    def _result(self, index: int, result: dict[str, Any]) -> None:
        self.steps[index].setdefault("observation", {"results": []})["results"].append(result)
        if isinstance(call_id := result.get("source_call_id"), str):
            self.result_of_call.setdefault(call_id, result)

    def add(self, item: dict[str, Any]) -> None:
        kind, role = item.get("type", "message"), item.get("role")
        if kind == "message" and role in ("system", "developer", "user"):
            index = self._open("user" if role == "user" else "system")
            self.steps[index]["message"] = _text_of(item.get("content"))
        elif kind == "message" and role == "assistant":
            index = self._agent_step(item)
            self.steps[index]["message"] = _text_of(item.get("content"))
        elif kind == "reasoning":
            index = self._agent_step(item)
            parts = [part for key in ("summary", "content") for part in objects(item.get(key))]
            texts = [part["text"] for part in parts if isinstance(part.get("text"), str)]
            self.steps[index]["reasoning_content"] = "\n".join(texts)
        elif kind == "function_call" and isinstance(item.get("call_id"), str):
            index = self._agent_step(item)
            self.steps[index].setdefault("tool_calls", []).append(self._tool_call(item))
            self.step_of_call.setdefault(item["call_id"], index)
        elif kind == "function_call_output" and text(item.get("call_id")) in self.step_of_call:
            index = self.step_of_call[item["call_id"]]
            output = item.get("output")
            self._result(index, {"source_call_id": item["call_id"], "content": _output_text(output)})
        else:  # an item ATIF has no form for: kept whole, in the step it came with
            index = len(self.steps) - 1 if self.steps else self._open("system")
            self.exact[index] = False
        self.items[index].append(item)

    def _tool_call(self, item: dict[str, Any]) -> dict[str, Any]:
        call_id = item["call_id"]
        try:
            arguments = loads(item["arguments"]) if isinstance(item.get("arguments"), str) else None
        except orjson.JSONDecodeError:
            arguments = None
        record = self.tools.get(call_id)
        self.placed_tools.add(call_id)
        kept: dict[str, Any] = {
            "tool_call": {k: v for k, v in record.items() if k not in _NOT_TOOL_FACTS} if record else None,
            "item_id": text(item.get("id")),
            "item_status": text(item.get("status")),
            "arguments": None if isinstance(arguments, dict) else item.get("arguments"),
        }
        tool_call = {"tool_call_id": call_id, "function_name": text(item.get("name")) or "", "arguments": {}}
        tool_call["arguments"] = arguments if isinstance(arguments, dict) else {}
        return _with_extra(tool_call, kept)

    def spawn(self, call_id: str | None, child_id: str) -> None:
        """Reference a subagent's embedded trajectory from the observation of the call that spawned it."""
        reference = {"trajectory_id": child_id}
        index = self.step_of_call.get(call_id) if call_id is not None else None
        if index is None:  # no spawning call in the conversation: a system step says where the subagent went
            index = self._open("system")
            self._result(index, _with_extra({"subagent_trajectory_ref": [reference]}, {"spawned_by": call_id}))
            return
        result = self.result_of_call.get(call_id) if call_id is not None else None
        if result is not None:
            result.setdefault("subagent_trajectory_ref", []).append(reference)
            return
        self._result(index, {"source_call_id": call_id, "subagent_trajectory_ref": [reference]})

    def finish(self) -> list[dict[str, Any]]:
        for number, (step, items, exact) in enumerate(zip(self.steps, self.items, self.exact, strict=True), start=1):
            step["step_id"] = number
            if not exact or items_of_step(step) != items:
                step.setdefault("extra", {}).setdefault(EXTRA_KEY, {})["items"] = items
        return self.steps


def _text_of(content: Any) -> str:
    """The text of a conversation item's content: a string, or its text parts joined (other parts stay in `items`)."""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in objects(content) if isinstance(part.get("text"), str))


def _output_text(output: Any) -> str:
    # The package's writer, not orjson's alone: outputs read from a file may hold numbers past 64 bits.
    if isinstance(output, str):
        return output
    try:
        return dumps(output).decode()
    except (
        TypeError
    ):  # a Python value no JSON text holds (a lone surrogate, a key that is no string): as json writes it
        return python_text(output, compact=True)


def _metrics(step: dict[str, Any], calls: list[ModelCall]) -> None:
    """Per-step metrics from the calls that produced the step: tokens as known, None where unknown."""
    step["llm_call_count"] = len(calls)
    tokens = {name: _known_sum([call.tokens[name] for call in calls]) for name in calls[0].tokens}
    metrics = {
        "prompt_tokens": tokens["prompt_tokens"],
        "completion_tokens": tokens["completion_tokens"],
        "cached_tokens": tokens["cached_tokens"],
    }
    kept = {
        "reasoning_tokens": tokens["reasoning_tokens"],
        "total_tokens": tokens["total_tokens"],
        "model_calls": [call.summary() for call in calls],
    }
    step["metrics"] = _with_extra({k: v for k, v in metrics.items() if v is not None}, kept)
    models = {call.model for call in calls}
    if len(models) == 1 and (model := models.pop()) is not None:
        step["model_name"] = model
    if timestamp := _iso(max((call.completed_at for call in calls if call.completed_at is not None), default=None)):
        step["timestamp"] = timestamp


def _final_metrics(steps: list[dict[str, Any]], calls: list[ModelCall]) -> dict[str, Any]:
    totals = {name: _known_sum([call.tokens[name] for call in calls]) for name in calls[0].tokens} if calls else {}
    final: dict[str, Any] = {"total_steps": len(steps)}
    for atif_name, name in (
        ("total_prompt_tokens", "prompt_tokens"),
        ("total_completion_tokens", "completion_tokens"),
        ("total_cached_tokens", "cached_tokens"),
    ):
        if totals.get(name) is not None:
            final[atif_name] = totals[name]
    unknown = {name: sum(call.tokens[name] is None for call in calls) for name in totals}
    kept = {
        "model_calls": len(calls),
        "total_reasoning_tokens": totals.get("reasoning_tokens"),
        "total_tokens": totals.get("total_tokens"),
        "calls_with_unknown_tokens": {name: number for name, number in unknown.items() if number},
    }
    return _with_extra(final, kept)


class _Producers:
    """The calls of one invocation by the ids of what they produced, each call claimed by one step only.

    Looked up by id rather than by asking every call at every step: an invocation may make thousands
    of calls, and a scan per step would cost their number squared.
    """

    def __init__(self, calls: list[ModelCall]) -> None:
        self._ids_of = [call.output_ids() for call in calls]
        self._unclaimed: dict[str, dict[int, None]] = {}  # an output id -> the calls not yet claimed that made it
        for position, ids in enumerate(self._ids_of):
            for key in ids:
                self._unclaimed.setdefault(key, {})[position] = None
        self.claimed: set[int] = set()

    def claim(self, keys: set[str | None]) -> list[int]:
        """The positions of the unclaimed calls that produced any of ``keys``, in call order; now claimed."""
        produced = sorted({position for key in keys if key is not None for position in self._unclaimed.get(key, ())})
        for position in produced:
            for key in self._ids_of[position]:
                del self._unclaimed[key][position]
        self.claimed.update(produced)
        return produced


class _Writer:
    def __init__(self, evidence: Evidence, version: str) -> None:
        self.evidence = evidence
        self.version = version
        owners = evidence.owners()
        self.calls_of: dict[str, list[ModelCall]] = {}
        for index, owner in owners.items():
            self.calls_of.setdefault(owner, []).append(evidence.calls[index])
        self.unowned = [call for index, call in enumerate(evidence.calls) if index not in owners]
        self.invocation_ids = {invocation["invocation_id"] for invocation in evidence.invocations}
        self.children: dict[Any, list[dict[str, Any]]] = {}
        for invocation in evidence.invocations:
            parent = text(invocation.get("parent_invocation_id"))
            if parent in self.invocation_ids and parent != invocation["invocation_id"]:
                self.children.setdefault(parent, []).append(invocation)
        self.tools_of: dict[Any, dict[str, dict[str, Any]]] = {}
        for tool in evidence.tool_calls:
            self.tools_of.setdefault(text(tool.get("invocation_id")), {})[tool["tool_call_id"]] = tool
        self.written: set[str] = set()

    def agent(self, calls: list[ModelCall]) -> dict[str, Any]:
        agent: dict[str, Any] = {"name": self.evidence.agent_name or self.evidence.source or "unknown"}
        agent["version"] = "unknown"  # the contract does not record the agent's version
        models = {call.model for call in calls if call.model is not None}
        if len(models) == 1:
            agent["model_name"] = models.pop()
        return agent

    def document(self, top: dict[str, Any]) -> dict[str, Any]:
        """The document of ``top`` with its subagents embedded, built without recursion (trees may be deep)."""
        order: list[dict[str, Any]] = []
        embeds: dict[str, list[dict[str, Any]]] = {}  # invocation id -> the children embedded in its document
        stack = [top]
        self.written.add(top["invocation_id"])
        while stack:
            invocation = stack.pop()
            order.append(invocation)
            mine = embeds.setdefault(invocation["invocation_id"], [])
            for child in self.children.get(invocation["invocation_id"], []):
                if child["invocation_id"] in self.written:
                    continue  # a cycle through parent links: the invocation is already written above
                self.written.add(child["invocation_id"])
                mine.append(child)
                stack.append(child)
        built: dict[str, dict[str, Any]] = {}
        for invocation in reversed(order):  # children before their parents
            invocation_id = invocation["invocation_id"]
            built[invocation_id] = self._one(
                invocation, [(child, built[child["invocation_id"]]) for child in embeds[invocation_id]]
            )
        return built[top["invocation_id"]]

    def _one(self, invocation: dict[str, Any], embedded: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
        invocation_id = invocation["invocation_id"]
        steps = _Steps(self.tools_of.get(invocation_id, {}))
        for item in objects(invocation.get("conversation")):
            steps.add(item)
        for child, _ in embedded:
            steps.spawn(text(child.get("spawned_by_tool_call_id")), child["invocation_id"])
        calls = self.calls_of.get(invocation_id, [])
        producers = _Producers(calls)
        for step_index, step in enumerate(steps.steps):
            if step["source"] != "agent":
                continue
            keys = {
                key for item in steps.items[step_index] for key in (text(item.get("id")), text(item.get("call_id")))
            }
            produced = producers.claim(keys)
            if produced:
                _metrics(step, [calls[n] for n in produced])
        document: dict[str, Any] = {
            "schema_version": f"ATIF-v{self.version}",
            "session_id": self.evidence.rollout_id,
            "trajectory_id": invocation_id,
            "agent": self.agent(calls),
            "steps": steps.finish(),
            "final_metrics": _final_metrics(steps.steps, calls),
        }
        kept = {
            "invocation": {key: invocation[key] for key in _INVOCATION_FIELDS if key in invocation},
            "tool_calls": [tool for key, tool in steps.tools.items() if key not in steps.placed_tools],
            "model_calls": [call.summary() for n, call in enumerate(calls) if n not in producers.claimed],
        }
        _with_extra(document, kept)
        if embedded:
            document["subagent_trajectories"] = [child_document for _, child_document in embedded]
        return {key: value for key, value in document.items() if value is not None}

    def root(self) -> dict[str, Any]:
        evidence = self.evidence
        tops = [
            invocation
            for invocation in evidence.invocations
            if text(invocation.get("parent_invocation_id")) not in self.invocation_ids
            or invocation.get("parent_invocation_id") == invocation["invocation_id"]
        ]
        documents = [self.document(invocation) for invocation in tops]
        # Invocations only reachable through a cycle of parent links are written as top-level ones.
        documents += [self.document(i) for i in evidence.invocations if i["invocation_id"] not in self.written]
        if len(documents) == 1:
            root = documents[0]
        else:  # none or several top-level invocations: the rollout is the document, they are its subagents
            root = {
                "schema_version": f"ATIF-v{self.version}",
                "session_id": evidence.rollout_id,
                "trajectory_id": evidence.rollout_id or "rollout",
                "agent": self.agent([]),
                "steps": [],
            }
            if documents:
                root["subagent_trajectories"] = documents
            root = {key: value for key, value in root.items() if value is not None}
        invocation_ids = self.invocation_ids
        kept = dict(obj(root.get("extra", {}).get(EXTRA_KEY)) or {})
        if len(documents) != 1:
            kept["invocation"] = None
        kept |= {
            "source": evidence.source,
            "rollout_id": evidence.rollout_id,
            "task_id": evidence.task_id,
            "gaps": evidence.gaps,
            "records": evidence.records
            + [tool for tool in evidence.tool_calls if text(tool.get("invocation_id")) not in invocation_ids],
            "unowned_model_calls": [call.summary() for call in self.unowned],
            "turns": [
                {key: value for key, value in turn.items() if key not in ("question", "answer")}
                for turn in evidence.turns
            ],
        }
        root["extra"] = {EXTRA_KEY: {key: value for key, value in kept.items() if value not in ([], {})}}
        root["notes"] = (
            "Written by gym-contract from NeMo Gym rollout evidence; facts ATIF has no field for "
            "(invocation status, tool timing, gaps, compactions) are under extra.gym_contract."
        )
        return root


def to_atif(value: Any, version: str = ATIF_VERSIONS[-1]) -> dict[str, Any]:
    """One ATIF trajectory (a JSON object) for a rollout record, an `ng_trajectory` or an observation bundle.

    ``version`` is one of `ATIF_VERSIONS`. The root invocation is the document and its subagents are
    embedded trajectories; a rollout with several top-level invocations (or none) becomes a document
    of its own, with no steps, that embeds them. Raises ValueError for an unknown version or a value
    that is none of the accepted records.
    """
    if version not in ATIF_VERSIONS:
        raise ValueError(f"unknown ATIF version {version!r}; expected one of {', '.join(ATIF_VERSIONS)}")
    return _Writer(evidence_of(value), version).root()
