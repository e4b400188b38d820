"""Records read by attribute: decoded Structs and parsed dicts read alike, absent members as UNSET."""

from __future__ import annotations

import copy
import json
import pickle

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import schemas
from gym_contract._objects import OBJECT_CLASSES, UNSET, DictObject, objects, plain, readable
from gym_contract._vocabulary import ROLLOUT_ATTACHMENTS
from gym_contract.models import AgentObservationBundle
from gym_contract.validation._fastpath import skeleton
from gym_contract.validation._struct_types import record_type
from tests.support import REPO

BUNDLE = AgentObservationBundle.model_validate(schemas.get("agent_observations")["examples"][0])
BUNDLE_LINE = BUNDLE.model_dump_json(exclude_none=False).encode()


def test_a_parsed_object_reads_its_keys_as_attributes_and_an_absent_one_as_unset() -> None:
    view = readable({"source": "claude_code", "ended": None, "records": [{"kind": "tool_call"}, 3, [{"deep": 1}]]})
    assert view.source == "claude_code"
    assert view.ended is None
    assert view.missing is UNSET
    first, number, nested = view.records
    assert isinstance(first, DictObject)
    assert first.kind == "tool_call"
    assert number == 3
    assert nested == [{"deep": 1}]  # a list's own elements only: no reader looks deeper
    assert objects(view.records) == [first] == [item for item in view.records if type(item) in OBJECT_CLASSES]


def test_a_decoded_struct_reads_its_tag_as_a_member_and_an_undeclared_name_as_unset() -> None:
    decoded = msgspec.json.decode(BUNDLE_LINE, type=record_type("bundle"))
    kinds = [record.kind for record in decoded.records]
    assert kinds == [record["kind"] for record in json.loads(BUNDLE_LINE)["records"]]
    assert decoded.no_such_member is UNSET
    assert getattr(decoded, "no_such_member") is UNSET  # noqa: B009 - a name known only at run time, as readers ask
    # Python's own protocols still find nothing where there is nothing: copying and pickling work.
    assert copy.copy(decoded) == decoded
    assert pickle.loads(pickle.dumps(decoded)) == decoded
    with pytest.raises(AttributeError):
        decoded.__no_such_protocol__  # noqa: B018 - the attribute read is what is tested


def test_structs_and_their_plain_data_read_the_same_members() -> None:
    decoded = skeleton(BUNDLE_LINE, "bundle")
    assert decoded is not None
    assert not isinstance(decoded, dict)
    as_data = plain(decoded)
    assert _same_but_raw(as_data, json.loads(BUNDLE_LINE))
    parsed = readable(json.loads(BUNDLE_LINE))
    for struct_record, dict_record in zip(decoded.records, parsed.records, strict=True):
        for name in ("kind", "invocation_id", "tool_call_id", "started_at", "completed_at", "parent_invocation_id"):
            assert getattr(struct_record, name) == getattr(dict_record, name)


def _same_but_raw(data: object, parsed: object) -> bool:
    """Whether ``data`` is ``parsed`` with some values kept as the raw bytes of their JSON."""
    if isinstance(data, msgspec.Raw):
        return json.loads(bytes(data)) == parsed
    if isinstance(data, dict) and isinstance(parsed, dict):
        return data.keys() == parsed.keys() and all(_same_but_raw(data[k], parsed[k]) for k in data)
    if isinstance(data, list) and isinstance(parsed, list):
        return len(data) == len(parsed) and all(_same_but_raw(a, b) for a, b in zip(data, parsed, strict=True))
    return data == parsed and type(data) is type(parsed)


def test_plain_data_of_a_fast_path_record_is_the_record_with_its_payloads_as_raw_json() -> None:
    trajectory = schemas.get("trajectory")["examples"][0]
    line = json.dumps(trajectory, separators=(",", ":")).encode()
    decoded = skeleton(line, "trajectory")
    assert decoded is not None
    assert _same_but_raw(plain(decoded), json.loads(line))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=6))
def test_a_parsed_object_reads_back_every_key_it_holds(whole: dict) -> None:
    view = readable(whole)
    for key, value in whole.items():
        if key.isidentifier() and not key.startswith("_"):
            assert plain(getattr(view, key)) == value


def test_the_readers_read_no_member_that_no_schema_declares(monkeypatch) -> None:
    """A misspelt member reads as UNSET on a Struct, as an absent one does: every name the readers ask a
    Struct for, and it does not have, must be a key some schema declares (or one outside the contract)."""
    from gym_contract._objects import MemberStruct
    from gym_contract.checking import check_files

    asked: set[str] = set()

    def spying(self: object, name: str) -> object:
        if not name.startswith("__"):
            asked.add(name)
        return UNSET

    monkeypatch.setattr(MemberStruct, "__getattr__", spying)
    assert skeleton(BUNDLE_LINE, "bundle").no_such_member is UNSET
    assert asked == {"no_such_member"}  # the spy sees what the readers ask
    asked.clear()
    examples = sorted((REPO / "examples").rglob("*.jsonl"))
    for path in examples:
        check_files([str(path)], now=1_790_000_000.0)
    # A rollout's own keys, which no schema declares: its markers and attachments (asked of every record
    # when its kind is told), and its agent, outside the contract, which the fast path keeps raw.
    rollout_keys = {*ROLLOUT_ATTACHMENTS, "_ng_rollout_id", "_ng_task_index", "_ng_rollout_index", "agent_ref"}
    assert len(examples) > 10
    assert asked - _declared_keys() - rollout_keys == set()


def _declared_keys() -> set[str]:
    """Every key any bundled schema declares a property."""
    keys: set[str] = set()
    stack: list[object] = [schemas.get(name) for name in schemas.names()]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            properties = node.get("properties")
            keys.update(properties if isinstance(properties, dict) else ())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return keys


def test_the_frames_made_for_rollouts_of_ever_new_keys_are_let_go() -> None:
    """A file whose rollouts keep changing their keys makes a Struct per shape: none is held for ever."""
    import gc
    import weakref

    from gym_contract.validation import check_line

    base = {"_ng_task_index": 1, "_ng_rollout_index": 0, "ng_trajectory": schemas.get("trajectory")["examples"][0]}
    first = None
    before = len(OBJECT_CLASSES)
    for line in range(120):
        # Each shape twice: the second line of a shape is decoded by the frame the first one made.
        data = json.dumps({**base, f"extra_{line // 2}": line}, separators=(",", ":")).encode()
        decoded = check_line(data, hint="rollout").decoded
        if first is None and not isinstance(decoded, dict):
            first = weakref.ref(type(decoded))
        del decoded
    gc.collect()
    assert first is not None
    assert first() is None
    assert len(OBJECT_CLASSES) == before
