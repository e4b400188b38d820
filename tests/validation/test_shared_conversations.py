"""A conversation the trajectory copies from the bundle is decoded once, and judged as if it were decoded twice."""

from __future__ import annotations

import json

import msgspec
import pytest

from gym_contract import schemas
from gym_contract.models import TrajectoryRecord
from gym_contract.validation import _nesting, check_line
from gym_contract.validation._fastpath import skeleton
from tests.validation.test_fastpath import NOW, _agree, _shown_ahead, counted_budget  # noqa: F401 - a fixture

CONVERSATION = '[{"role":"user","content":"q","type":"message"}]'


def _rollout(bundle_conversation: str = CONVERSATION, trajectory_conversation: str = CONVERSATION) -> bytes:
    """A rollout whose bundle observed the one invocation its trajectory holds, each written with a conversation."""
    example = schemas.get("trajectory")["examples"][0]
    trajectory = TrajectoryRecord.model_validate(example).model_dump_json().encode()
    (invocation,) = json.loads(trajectory)["invocations"]
    invocation["conversation"] = "CONVERSATION"
    written = json.dumps(invocation, separators=(",", ":")).encode()
    invocation_in_trajectory = trajectory[trajectory.index(b'{"kind":"agent_invocation"') :].split(b',"turns"')[0]
    assert invocation_in_trajectory.endswith(b"]")  # the invocations' list, closed
    observed = written.replace(b'"CONVERSATION"', bundle_conversation.encode())
    copied = written.replace(b'"CONVERSATION"', trajectory_conversation.encode())
    trajectory = trajectory.replace(invocation_in_trajectory, copied + b"]", 1)
    bundle = b'{"source":"claude_code","records":[' + observed + b"]}"
    return b'{"response":{"id":"r"},"ng_agent_observations":' + bundle + b',"ng_trajectory":' + trajectory + b"}"


def _learnt() -> None:
    """The shape of these rollouts learnt, so that the next line is tried in one pass, as in a file."""
    assert skeleton(_rollout(), "rollout") is not None


def _conversations(record: object) -> tuple[object, object]:
    observed = record.ng_agent_observations.records[0].conversation  # type: ignore[attr-defined]
    copied = record.ng_trajectory.invocations[0].conversation  # type: ignore[attr-defined]
    return observed, copied


def test_a_conversation_copied_byte_for_byte_is_decoded_once_and_shared():
    _learnt()
    record = skeleton(_rollout(), "rollout")
    observed, copied = _conversations(record)
    assert copied is observed
    assert type(observed) is list
    assert observed[0].content == "q"
    assert check_line(_rollout(), hint="rollout", now=NOW).diagnostics == []
    _agree(_rollout(), None, hint="rollout")


def test_a_copy_that_differs_is_decoded_on_its_own():
    _learnt()
    other = '[{"role":"user","content":"r","type":"message"}]'
    observed, copied = _conversations(skeleton(_rollout(trajectory_conversation=other), "rollout"))
    assert (observed[0].content, copied[0].content) == ("q", "r")  # type: ignore[index]
    _agree(_rollout(trajectory_conversation=other), None, hint="rollout")


REPEATED = '[{"role":"user","content":"q","content":"s","type":"message"}]'
OFF_SCHEMA = '[{"role":"robot","content":"q","type":"message"}]'
DAMAGED = {
    "a key repeated in the copy": (CONVERSATION, REPEATED, ["json_duplicate_key"]),
    "a key repeated in the bundle's": (REPEATED, CONVERSATION, ["json_duplicate_key"]),
    "a key repeated in both alike": (REPEATED, REPEATED, ["json_duplicate_key"]),
    "off the schema in the copy": (CONVERSATION, OFF_SCHEMA, ["schema_violation"]),
    "off the schema in both alike": (OFF_SCHEMA, OFF_SCHEMA, ["schema_violation", "schema_violation"]),
    "null in both": ("null", "null", ["schema_violation", "schema_violation"]),
    "not a list in the copy": (CONVERSATION, '{"role":"user"}', ["schema_violation"]),
    "no JSON inside": (CONVERSATION, "[tru]", ["json_invalid"]),
}


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_conversation_is_judged_as_the_precise_path_judges_it(name):
    observed, copied, codes = DAMAGED[name]
    line = _rollout(observed, copied)
    _learnt()
    assert skeleton(line, "rollout") is None
    _learnt()
    assert [d.code for d in check_line(line, hint="rollout", now=NOW).diagnostics] == codes
    _learnt()
    _agree(line, None, hint="rollout")


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_conversation_decoded_ahead_is_refused_there_too(counted_budget, name):  # noqa: F811
    observed, copied, _ = DAMAGED[name]
    line, intact = _rollout(observed, copied), _rollout()
    _learnt()
    assert _shown_ahead([line, intact]) == ([intact] if name == "no JSON inside" else [line, intact])
    if name != "no JSON inside":
        assert _nesting._DECODED_AHEAD[id(line)][1] is False  # told ahead, without raising there
    assert skeleton(line, "rollout") is None


def test_a_rollout_decoded_ahead_shares_its_copied_conversation(counted_budget):  # noqa: F811
    _learnt()
    line = _rollout()
    assert _shown_ahead([line]) == [line]
    record = skeleton(line, "rollout")
    observed, copied = _conversations(record)
    assert copied is observed
    assert type(observed) is list
    assert msgspec.json.encode(record) == msgspec.json.encode(skeleton(bytes(bytearray(line)), "rollout"))
