"""An ATIF trajectory read as an `ng_agent_observations` bundle: a harness that writes ATIF is a producer.

Each trajectory (the document and every embedded subagent trajectory) is one invocation; its steps
are its conversation, its tool calls are tool-call records. What ATIF cannot say is named by a gap
with a registered code: the captured model call behind each agent step, the timing and status of
each tool call, how the invocation ended. A document this package wrote carries those facts under
`extra.gym_contract`, and they are read back exactly instead.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gym_contract._values import json_type, obj, objects, text
from gym_contract.interop._atif_steps import READABLE_VERSION, content_text, gym_extra, items_of_step, tool_extra

__all__ = ["AtifError", "check_atif", "from_atif"]

_SOURCES = ("system", "user", "agent")


class AtifError(ValueError):
    """A document that is not an ATIF trajectory this package can read, with where and why in one line."""


def _require(condition: bool, pointer: str, problem: str) -> None:
    if not condition:
        raise AtifError(f"{pointer or '/'}: {problem}")


def _expect(value: Any, kind: type, pointer: str, what: str) -> None:
    _require(
        isinstance(value, kind) and not isinstance(value, bool),
        pointer,
        f"{what}, not {json_type(value, article=True)}",
    )


def check_atif(document: Any) -> None:
    """Raise `AtifError` unless ``document`` has the shape of an ATIF trajectory of a version this package reads.

    Only the fields the reader uses are checked, and only for their JSON types; the ATIF models
    themselves check the rest. Embedded subagent trajectories are checked as documents of their own.
    """
    pending = [(document, "")]
    while pending:  # no recursion: embedded trajectories may nest deep
        current, pointer = pending.pop()
        _check_one(current, pointer)
        embedded = current.get("subagent_trajectories")
        if embedded is not None:
            _expect(embedded, list, f"{pointer}/subagent_trajectories", "expected a list of trajectories")
            pending += [(item, f"{pointer}/subagent_trajectories/{n}") for n, item in enumerate(embedded)][::-1]


def _check_one(document: Any, pointer: str) -> None:
    _expect(document, dict, pointer, "expected an ATIF trajectory object")
    version = document.get("schema_version")
    _expect(version, str, f"{pointer}/schema_version", "expected the ATIF version string")
    _require(
        READABLE_VERSION.fullmatch(version) is not None,
        f"{pointer}/schema_version",
        f"unknown ATIF version {version!r}; versions ATIF-v1.0 to ATIF-v1.8 are read",
    )
    _expect(document.get("agent"), dict, f"{pointer}/agent", "expected the agent object")
    _expect(document["agent"].get("name"), str, f"{pointer}/agent/name", "expected the agent's name")
    _expect(document.get("steps"), list, f"{pointer}/steps", "expected the list of steps")
    for index, step in enumerate(document["steps"]):
        where = f"{pointer}/steps/{index}"
        _expect(step, dict, where, "expected a step object")
        _expect(step.get("step_id"), int, f"{where}/step_id", "expected the step's number")
        # ATIF numbers a trajectory's steps 1, 2, 3, … in order.
        _require(step["step_id"] == index + 1, f"{where}/step_id", f"expected step number {index + 1}")
        timestamp = step.get("timestamp")
        if timestamp is not None:
            _require(_is_iso_8601(timestamp), f"{where}/timestamp", "expected an ISO 8601 date and time")
        _require(step.get("source") in _SOURCES, f"{where}/source", "expected system, user or agent")
        _require(isinstance(step.get("message"), (str, list)), f"{where}/message", "expected a string or content parts")
        calls = step.get("tool_calls")
        if calls is not None:
            _expect(calls, list, f"{where}/tool_calls", "expected a list of tool calls")
        for position, call in enumerate(calls or []):
            _expect(call, dict, f"{where}/tool_calls/{position}", "expected a tool call object")
            _expect(call.get("tool_call_id"), str, f"{where}/tool_calls/{position}/tool_call_id", "expected an id")
            _expect(call.get("function_name"), str, f"{where}/tool_calls/{position}/function_name", "expected a name")
            arguments = call.get("arguments")
            if arguments is not None:
                _expect(arguments, dict, f"{where}/tool_calls/{position}/arguments", "expected an arguments object")
        observation = step.get("observation")
        if observation is not None:
            _expect(observation, dict, f"{where}/observation", "expected an observation object")
            _expect(observation.get("results"), list, f"{where}/observation/results", "expected a list of results")
            for position, result in enumerate(observation["results"]):
                at = f"{where}/observation/results/{position}"
                _expect(result, dict, at, "expected an observation result object")
                content = result.get("content")
                _require(
                    content is None or isinstance(content, (str, list)),
                    f"{at}/content",
                    "expected a string or content parts",
                )


def _is_iso_8601(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:  # Python 3.10 reads no `Z` suffix; it means UTC
        datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    except ValueError:
        return False
    return True


class _Reader:
    def __init__(self) -> None:
        self.invocations: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.records: list[dict[str, Any]] = []
        self.gaps: list[dict[str, Any]] = []
        self.ids: set[str] = set()

    def gap(self, code: str, invocation_id: str | None, detail: str | None) -> None:
        self.gaps.append({"code": code, "invocation_id": invocation_id, "detail": detail})

    def _new_id(self, document: dict[str, Any], fallback: str) -> str:
        wanted = text(document.get("trajectory_id")) or fallback
        invocation_id, number = wanted, 1
        while invocation_id in self.ids:  # ATIF keeps ids unique among siblings only
            number += 1
            invocation_id = f"{wanted}-{number}"
        return invocation_id

    def read(self, document: dict[str, Any], fallback: str) -> None:
        """Every invocation of the document and of the trajectories embedded in it, without recursion."""
        pending: list[tuple[dict[str, Any], str | None, str | None, str]] = [(document, None, None, fallback)]
        while pending:
            pending += self._read_one(*pending.pop())[::-1]

    def _read_one(
        self, document: dict[str, Any], parent: str | None, spawned_by: str | None, fallback: str
    ) -> list[tuple[dict[str, Any], str | None, str | None, str]]:
        """One trajectory's invocation, tool calls and gaps; its embedded trajectories, still to read."""
        kept = gym_extra(document)
        ours = "invocation" in kept
        invocation = obj(kept.get("invocation"))
        if ours and invocation is None:  # a rollout-level document: no invocation of its own
            invocation_id = None
        elif invocation is not None:
            invocation_id = text(invocation.get("invocation_id")) or self._new_id(document, fallback)
        else:
            invocation_id = self._new_id(document, fallback)
        if invocation_id is not None:
            self.ids.add(invocation_id)
        conversation: list[dict[str, Any]] = []
        spawns: dict[str, str] = {}  # embedded trajectory id -> the tool call whose observation names it
        for step in objects(document.get("steps")):
            conversation += items_of_step(step)
            if not ours:
                self._foreign_step(step, invocation_id)
            for tool_call in objects(step.get("tool_calls")):
                self._tool(tool_call, invocation_id, ours)
            for result in objects((obj(step.get("observation")) or {}).get("results")):
                for reference in objects(result.get("subagent_trajectory_ref")):
                    if isinstance(reference.get("trajectory_id"), str):
                        if isinstance(call_id := result.get("source_call_id"), str):
                            spawns[reference["trajectory_id"]] = call_id
                    elif isinstance(reference.get("trajectory_path"), str):
                        self.gap("subagent_transcript_missing", invocation_id, reference["trajectory_path"])
        self.tools += objects(kept.get("tool_calls"))
        if isinstance(document.get("continued_trajectory_ref"), str):
            detail = f"continued in {document['continued_trajectory_ref']}"
            self.gap("agent_transcript_unavailable", invocation_id, detail)
        if invocation is not None:
            self.invocations.append({"kind": "agent_invocation", **invocation, "conversation": conversation})
        elif invocation_id is not None:
            self.invocations.append(
                {
                    "kind": "agent_invocation",
                    "invocation_id": invocation_id,
                    "parent_invocation_id": parent,
                    "spawned_by_tool_call_id": spawned_by,
                    "status": "unknown",
                    "conversation": conversation,
                }
            )
            self.gap("invocation_outcome_unavailable", invocation_id, None)
        embedded = []
        for index, child_document in enumerate(objects(document.get("subagent_trajectories"))):
            child = text(child_document.get("trajectory_id"))
            fallback_id = f"{invocation_id or 'rollout'}.subagent{index + 1}"
            embedded.append((child_document, invocation_id, spawns.get(child) if child else None, fallback_id))
        found = {text(child_document.get("trajectory_id")) for child_document, *_ in embedded}
        for missing in sorted(spawns.keys() - found):
            # Referenced by the call that spawned it, but not embedded: an invocation with no transcript.
            child_id = self._new_id({"trajectory_id": missing}, missing)
            self.ids.add(child_id)
            self.invocations.append(
                {
                    "kind": "agent_invocation",
                    "invocation_id": child_id,
                    "parent_invocation_id": invocation_id,
                    "spawned_by_tool_call_id": spawns[missing],
                    "status": "unknown",
                }
            )
            self.gap("subagent_transcript_missing", child_id, f"trajectory {missing} is not embedded")
        return embedded

    def _foreign_step(self, step: dict[str, Any], invocation_id: str | None) -> None:
        """Gaps for what a step of a document written elsewhere cannot say in the contract's terms."""
        where = f"step {step.get('step_id')}"
        _, whole = content_text(step.get("message"))
        if not whole:
            code = (
                "unsupported_assistant_content_block"
                if step.get("source") == "agent"
                else "unsupported_user_content_block"
            )
            self.gap(code, invocation_id, where)
        if step.get("source") != "agent":
            return
        if isinstance(step.get("reasoning_content"), str) and step["reasoning_content"]:
            self.gap("reasoning_item_id_missing", invocation_id, where)
        if step.get("llm_call_count") != 0:
            self.gap("model_response_id_unavailable", invocation_id, where)
        for result in objects((obj(step.get("observation")) or {}).get("results")):
            if result.get("source_call_id") is None and result.get("content") is not None:
                self.gap("tool_result_unowned", invocation_id, where)

    def _tool(self, tool_call: dict[str, Any], invocation_id: str | None, ours: bool) -> None:
        facts = obj(tool_extra(tool_call).get("tool_call"))
        base = {"kind": "tool_call", "invocation_id": invocation_id, "tool_call_id": tool_call["tool_call_id"]}
        if facts is not None:
            self.tools.append({**base, **facts})
        elif not ours:  # seen by the model, but when it ran and how it ended is not in ATIF
            self.tools.append({**base, "tool_name": tool_call["function_name"], "status": "unknown"})
            self.gap("tool_timing_unavailable", invocation_id, tool_call["tool_call_id"])


def from_atif(document: Any) -> dict[str, Any]:
    """The `ng_agent_observations` bundle (a JSON object) of an ATIF trajectory document.

    Raises `AtifError` (a ValueError) when the document is not an ATIF trajectory of versions 1.0 to
    1.8. The bundle's `source` is the one this package wrote, else the ATIF agent's name.
    """
    check_atif(document)
    reader = _Reader()
    reader.read(document, text(document.get("session_id")) or "root")
    kept = gym_extra(document)
    gaps = objects(kept.get("gaps")) + reader.gaps if "invocation" in kept else reader.gaps
    return {
        "source": source if (source := text(kept.get("source"))) is not None else document["agent"]["name"],
        "records": reader.invocations + reader.tools + reader.records + objects(kept.get("records")),
        "gaps": gaps,
    }
