"""The founding failures of lineage, replayed: each resolves under fingerprint version 4 and fails with its rule off."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest

from gym_contract import lineage
from gym_contract.lineage import AMBIGUOUS, NO_MATCH, RESOLVED, ROOT, UNRESOLVED, chain
from gym_contract.lineage import _hash as _lineage_hash
from gym_contract.models import ModelCallRecord

MIDNIGHT = datetime(2026, 8, 22, tzinfo=timezone.utc).timestamp()
CWD = "/repo"


# --- switching a version-4 rule off gives back the version-1 behaviour ---------------------------------


def system_content_hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule 1 off: system and developer items are hashed like any other message."""
    monkeypatch.setattr(_lineage_hash, "SYSTEM_ROLES", frozenset())


def tool_calls_by_name_and_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule 2 off: a tool call is identified by id, name and arguments."""
    monkeypatch.setattr(_lineage_hash, "_call_identity", lambda fields: fields)


def empty_replies_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule 3 off: a reply that adds nothing model-authored is still a lookup candidate."""
    monkeypatch.setattr(lineage, "_adds_model_content", lambda output: True)


VERSION_1 = (system_content_hashed, tool_calls_by_name_and_arguments, empty_replies_indexed)


# --- simulated harnesses ------------------------------------------------------------------------------


class Capture:
    """The capture file of one rollout: calls appended as they complete, a clock that moves per call."""

    def __init__(self, start: float, step: float = 45.0) -> None:
        self.records: list[ModelCallRecord] = []
        self.clock = start
        self.step = step

    def today(self) -> str:
        return datetime.fromtimestamp(self.clock, timezone.utc).strftime("%A %d %B %Y")

    def append(self, dialect: str, request: dict[str, Any], response: dict[str, Any]) -> str:
        call_id = f"call-{len(self.records):03d}"
        record = {
            "call_index": len(self.records),
            "model_call_id": call_id,
            "dialect": dialect,
            "started_at": self.clock,
            "request": json.loads(json.dumps(request)),  # a snapshot: later turns must not change it
            "response": response,
        }
        self.records.append(ModelCallRecord.model_validate(record))
        self.clock += self.step
        return call_id

    def resolutions(self) -> dict[str, tuple[str, str | None]]:
        return {
            call.call_id: (call.resolution.status, call.resolution.parent_call_id or call.resolution.reason)
            for call in chain(self.records).calls.values()
        }


def unresolved(capture: Capture) -> list[str]:
    return [call_id for call_id, (status, _) in capture.resolutions().items() if status == UNRESOLVED]


class ClaudeCodeLike:
    """Anthropic Messages; the system prompt carries today's date; echoed tool calls are normalised."""

    def __init__(self, capture: Capture, name: str, task: str, normalise_echoes: bool = True) -> None:
        self.capture, self.name, self.normalise_echoes = capture, name, normalise_echoes
        self.history: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": task}]}]
        self.tool_count = 0

    def tool_use(self, name: str, **arguments: Any) -> dict[str, Any]:
        self.tool_count += 1
        return {"type": "tool_use", "id": f"toolu_{self.name}_{self.tool_count}", "name": name, "input": arguments}

    def _echo(self, block: dict[str, Any]) -> dict[str, Any]:
        if not self.normalise_echoes or block.get("type") != "tool_use":
            return block
        arguments = dict(block["input"])
        if isinstance(arguments.get("command"), str):
            arguments["command"] = arguments["command"].removeprefix(f"cd {CWD} && ")
        return {**block, "name": "Agent" if block["name"] == "Task" else block["name"], "input": arguments}

    def _request(self) -> dict[str, Any]:
        messages = [
            {**message, "content": [self._echo(block) for block in message["content"]]} for message in self.history
        ]
        system = [{"type": "text", "text": f"You are a coding agent in {CWD}. Today is {self.capture.today()}."}]
        return {"model": "claude", "max_tokens": 4096, "system": system, "messages": messages}

    def reply(self, *blocks: dict[str, Any]) -> str:
        """One model call answered with `blocks`; a reasoning-only answer is dropped and nudged, as Claude Code does."""
        response = {"id": f"msg_{len(self.capture.records)}", "role": "assistant", "content": list(blocks)}
        call_id = self.capture.append("messages", self._request(), response)
        if all(block["type"] == "thinking" for block in blocks):
            self.user("Please continue.")
        else:
            self.history.append({"role": "assistant", "content": list(blocks)})
        return call_id

    def results(self, *outputs: tuple[dict[str, Any], str]) -> None:
        blocks = [{"type": "tool_result", "tool_use_id": call["id"], "content": text} for call, text in outputs]
        self.history.append({"role": "user", "content": blocks})

    def user(self, text: str) -> None:
        self.history.append({"role": "user", "content": [{"type": "text", "text": text}]})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": "sig"}


class OpenCodeLike:
    """Chat Completions; the system message is regenerated with today's date on every request."""

    def __init__(self, capture: Capture, task: str) -> None:
        self.capture = capture
        self.history: list[dict[str, Any]] = [{"role": "user", "content": task}]

    def reply(self, content: str | None, *calls: tuple[str, str, dict[str, Any]]) -> str:
        system = {"role": "system", "content": f"You are opencode. Today's date: {self.capture.today()}"}
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
                for call_id, name, arguments in calls
            ]
        response = {"id": "chatcmpl", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        call_id = self.capture.append("chat", {"model": "qwen", "messages": [system, *self.history]}, response)
        self.history.append(message)
        for tool_call_id, _, _ in calls:
            self.history.append({"role": "tool", "tool_call_id": tool_call_id, "content": "ok"})
        return call_id


# --- midnight ------------------------------------------------------------------------------------------


def midnight_run(rollouts: int = 512, calls: int = 6) -> list[tuple[Capture, bool]]:
    """Rollouts started one after another around 00:00 UTC; each with whether it has calls on both sides."""
    run = []
    for number in range(rollouts):
        # 453 of them start within the 5 minutes before midnight, as many as were lost in the founding run.
        capture = Capture(start=MIDNIGHT - 300 + number * 300 / 453, step=60.0)
        agent = OpenCodeLike(capture, f"Fix issue {number}.")
        for turn in range(calls - 1):
            agent.reply(None, (f"call_{number}_{turn}", "bash", {"command": f"ls {turn}"}))
        agent.reply("Done.")
        times = [record.started_at or 0.0 for record in capture.records]
        run.append((capture, min(times) < MIDNIGHT <= max(times)))
    return run


def test_every_call_of_512_rollouts_across_midnight_resolves():
    run = midnight_run()
    assert sum(spans for _, spans in run) == 453
    for capture, _ in run:
        assert unresolved(capture) == []
        assert len(chain(capture.records).conversations) == 1


def test_with_system_content_hashed_exactly_the_rollouts_across_midnight_are_lost(monkeypatch):
    system_content_hashed(monkeypatch)
    lost = [spans for capture, spans in midnight_run() if unresolved(capture)]
    assert len(lost) == 453
    assert all(lost)


# --- echo normalisation ---------------------------------------------------------------------------------


def claude_code_session(capture: Capture, normalise_only_last: bool = False) -> ClaudeCodeLike:
    agent = ClaudeCodeLike(capture, "main", "Make the tests pass.", normalise_echoes=not normalise_only_last)
    bash = agent.tool_use("Bash", command=f"cd {CWD} && pytest -q")
    agent.reply(text("Running the tests."), bash)
    agent.results((bash, "1 failed"))
    task = agent.tool_use("Task", description="find the bug", prompt="Find why test_x fails.")
    agent.reply(task)
    agent.results((task, "It is an off-by-one in parse()."))
    edit = agent.tool_use("Edit", path="parse.py", old="i + 1", new="i")
    agent.reply(text("Fixing it."), edit)
    agent.results((edit, "edited"))
    if normalise_only_last:
        agent.normalise_echoes = True
    agent.reply(text("Fixed: the tests pass."))
    return agent


def test_a_conversation_whose_echoed_tool_calls_are_normalised_resolves_throughout():
    capture = Capture(start=MIDNIGHT - 3600)
    claude_code_session(capture)
    assert capture.resolutions() == {
        "call-000": (ROOT, None),
        "call-001": (RESOLVED, "call-000"),
        "call-002": (RESOLVED, "call-001"),
        "call-003": (RESOLVED, "call-002"),
    }


def test_with_tool_calls_identified_by_name_and_arguments_the_echo_misses_the_served_call(monkeypatch):
    tool_calls_by_name_and_arguments(monkeypatch)
    capture = Capture(start=MIDNIGHT - 3600)
    claude_code_session(capture)
    # Each request after a call whose tool call was echoed rewritten (Bash, then Task) misses its parent.
    assert unresolved(capture) == ["call-001", "call-002"]


def test_the_same_rewrite_of_an_earlier_turn_between_two_requests_still_fails_verification():
    capture = Capture(start=MIDNIGHT - 3600)
    claude_code_session(capture, normalise_only_last=True)  # call-001 and call-002 echo as served, call-003 not
    resolutions = capture.resolutions()
    assert resolutions["call-002"] == (RESOLVED, "call-001")
    assert resolutions["call-003"] == (UNRESOLVED, NO_MATCH)


# --- reasoning-only replies -----------------------------------------------------------------------------


def reasoning_only_session(capture: Capture) -> None:
    agent = ClaudeCodeLike(capture, "main", "Summarise README.md.")
    read = agent.tool_use("Read", path="README.md")
    agent.reply(text("Reading it."), read)
    agent.results((read, "# gym-contract ..."))
    agent.reply(thinking("The README describes a data contract."))  # nothing for the user: dropped, nudged
    agent.reply(text("It describes the data contract of rollout evidence."))
    agent.user("Thanks. Shorter?")
    agent.reply(text("A data contract for rollouts."))


def test_a_reasoning_only_reply_retried_with_a_nudge_makes_nothing_ambiguous():
    capture = Capture(start=MIDNIGHT - 3600)
    reasoning_only_session(capture)
    assert capture.resolutions() == {
        "call-000": (ROOT, None),
        "call-001": (RESOLVED, "call-000"),
        "call-002": (RESOLVED, "call-000"),  # the nudged retry continues the same turn as the dropped reply
        "call-003": (RESOLVED, "call-002"),
    }


def test_with_empty_replies_indexed_the_retry_collides_with_its_parent(monkeypatch):
    empty_replies_indexed(monkeypatch)
    capture = Capture(start=MIDNIGHT - 3600)
    reasoning_only_session(capture)
    assert capture.resolutions()["call-002"] == (UNRESOLVED, AMBIGUOUS)


# --- a live-like session ----------------------------------------------------------------------------------


def live_like_session(capture: Capture) -> None:
    """Main agent and 4 subagents, 33 requests across midnight, echoes normalised, one reasoning-only reply."""
    main = ClaudeCodeLike(capture, "main", "Add a lineage command to the CLI.")
    ls = main.tool_use("Bash", command=f"cd {CWD} && ls gym_contract")
    main.reply(text("Looking around."), ls)
    main.results((ls, "cli.py lineage.py"))
    for number in range(4):
        task = main.tool_use("Task", description=f"part {number}", prompt=f"Implement part {number}.")
        main.reply(text(f"Delegating part {number}."), task)
        sub = ClaudeCodeLike(capture, f"sub{number}", f"Implement part {number}.")
        for step in range(4):
            grep = sub.tool_use("Bash", command=f"cd {CWD} && grep -n part{number}_{step} -r .")
            sub.reply(grep)
            sub.results((grep, f"{step} hits"))
        if number == 2:
            sub.reply(thinking("All parts found."))
        sub.reply(text("Found them."), (edit := sub.tool_use("Edit", path=f"p{number}.py")))
        sub.results((edit, "edited"))
        sub.reply(text(f"Part {number} done."))
        main.results((task, f"Part {number} done."))
    check = main.tool_use("Bash", command=f"cd {CWD} && pytest -q")
    main.reply(text("Checking."), check)
    main.results((check, "all passed"))
    main.reply(thinking("Nothing more to do."))
    main.reply(text("All done."))


def test_a_live_like_session_of_33_requests_and_4_subagents_resolves_completely():
    capture = Capture(start=MIDNIGHT - 20 * 45.0)
    live_like_session(capture)
    result = chain(capture.records)
    assert len(result.calls) == 33
    assert result.unresolved == ()
    assert len(result.conversations) == 5
    assert len(result.conversations[0].calls) == 8
    assert len(result.conversations[0].main_chain) == 7  # the dropped reply is a branch of one call
    assert [len(conversation.calls) for conversation in result.conversations[1:]] == [6, 6, 7, 6]


def test_the_live_like_session_loses_calls_under_version_1(monkeypatch):
    for switch_off in VERSION_1:
        switch_off(monkeypatch)
    capture = Capture(start=MIDNIGHT - 20 * 45.0)
    live_like_session(capture)
    assert len(unresolved(capture)) >= 4


@pytest.mark.parametrize("switch_off", VERSION_1, ids=lambda switch_off: switch_off.__name__)
def test_each_rule_alone_is_needed_for_the_live_like_session(monkeypatch, switch_off):
    switch_off(monkeypatch)
    capture = Capture(start=MIDNIGHT - 20 * 45.0)
    live_like_session(capture)
    assert unresolved(capture)
