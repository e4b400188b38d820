"""The fast path and the precise path agree on every line: same kind, same diagnostics."""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import os
import sys
import threading
from functools import cache
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_contract import schemas, validation
from gym_contract._limits import EMBEDDING, MAX_DEPTH
from gym_contract._objects import plain
from gym_contract._values import NumberText
from gym_contract.checking import check_files
from gym_contract.models import AgentObservationBundle, ModelCallCapture, TrajectoryRecord
from gym_contract.report import Report
from gym_contract.validation import CheckedLine, _fastpath, _nesting, check_line
from gym_contract.validation._fastpath import skeleton
from gym_contract.validation._nesting import depth_checked, nests_within
from tests.schema_instances import schema_instances
from tests.support import with_repeated_key
from tests.test_agreement import mutated

NOW = 1_786_100_000.0
MODELS = {"trajectory": TrajectoryRecord, "bundle": AgentObservationBundle, "model_call_capture": ModelCallCapture}
SCHEMA_OF = {"trajectory": "trajectory", "bundle": "agent_observations", "model_call_capture": "model_call_capture"}


@cache
def _instances(kind: str) -> st.SearchStrategy:
    return schema_instances(SCHEMA_OF[kind])


def _canonical(kind: str, instance: dict) -> bytes | None:
    """The instance as the reference writes it: compact, every key, schema order (when it is model-valid)."""
    try:
        return MODELS[kind].model_validate(instance).model_dump_json().encode()
    except Exception:
        return None


def _summary(checked: CheckedLine) -> dict:
    """What a report makes of one checked line: counts, gaps, tokens, coverage (timing left out)."""
    report = Report()
    report.add_record(checked.kind, checked.decoded, checked.diagnostics)  # Structs on the fast path
    summary = report.to_dict()
    del summary["seconds"], summary["mb_per_s"]
    return summary


def _agree(data: bytes, kind: str | None, hint: str | None = None) -> None:
    fast = check_line(data, kind, hint=hint, now=NOW, fast=True)
    precise = check_line(data, kind, hint=hint, now=NOW, fast=False)
    assert fast.kind == precise.kind
    assert fast.diagnostics == precise.diagnostics
    assert _summary(fast) == _summary(precise)


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_paths_agree_on_generated_and_broken_records(kind):
    # Each example runs every path on three serialisations; fewer examples keep the run short.
    @settings(max_examples=min(settings().max_examples, int(os.environ.get("FASTPATH_EXAMPLES", "12"))))
    @given(st.one_of(_instances(kind), mutated(_instances(kind))), st.booleans())
    def check(instance, as_hint):
        forms = [json.dumps(instance, separators=(",", ":")).encode(), json.dumps(instance, indent=1).encode()]
        canonical = _canonical(kind, instance)
        if canonical is not None:
            forms.append(canonical)
        for data in forms:
            _agree(data, None if as_hint else kind, hint=kind if as_hint else None)

    check()


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_paths_agree_wherever_a_key_is_repeated(kind):
    # Inside a payload or in the contract's own objects, in the canonical form the fast path takes.
    @settings(max_examples=min(settings().max_examples, int(os.environ.get("FASTPATH_EXAMPLES", "12"))))
    @given(_instances(kind), st.integers(min_value=0))
    def check(instance, target):
        canonical = _canonical(kind, instance)
        if canonical is None:
            return
        objects = with_repeated_key(json.loads(canonical), -1)[1]
        data = with_repeated_key(json.loads(canonical), target % objects)[0]
        _agree(data, kind)
        _agree(data, None, hint=kind)

    check()


def test_canonical_lines_take_the_fast_path():
    example = schemas.get("trajectory")["examples"][0]
    canonical = TrajectoryRecord.model_validate(example).model_dump_json().encode()
    decoded = skeleton(canonical, "trajectory")
    assert decoded is not None
    record = plain(decoded)
    # Opaque payloads are never built: the skeleton holds their bytes, exactly as they were written.
    parsed = json.loads(canonical)
    for where, key in ((("model_calls", 0), "request"), (("tool_calls", 0), "output"), (("turns", 0), "question")):
        raw = record[where[0]][where[1]][key]
        assert isinstance(raw, msgspec.Raw)
        assert json.loads(bytes(raw)) == parsed[where[0]][where[1]][key]
    assert record["model_calls"][0]["model_call_id"] == parsed["model_calls"][0]["model_call_id"]


def test_a_duplicate_key_never_takes_the_fast_path():
    example = schemas.get("trajectory")["examples"][0]
    canonical = TrajectoryRecord.model_validate(example).model_dump_json().encode()
    doubled = canonical.replace(b'"task_id":"7",', b'"task_id":"7","task_id":"7",', 1)
    assert skeleton(doubled, "trajectory") is None
    result = check_line(doubled, "trajectory", now=NOW)
    assert [d.code for d in result.diagnostics] == ["json_duplicate_key"]


def test_a_rollout_line_with_attachments():
    example = schemas.get("trajectory")["examples"][0]
    trajectory = TrajectoryRecord.model_validate(example).model_dump(mode="json")
    broken = copy.deepcopy(trajectory)
    broken["turns"][0]["task_id"] = "8"
    for attachment, expected in ((trajectory, []), (broken, ["turn_identity_mismatch"])):
        line = orjson.dumps({"_ng_task_index": 7, "reward": 1.0, "response": {"id": "r"}, "ng_trajectory": attachment})
        assert skeleton(line, "rollout") is not None
        assert [d.code for d in check_line(line, hint="rollout", now=NOW).diagnostics] == expected
        _agree(line, None, hint="rollout")


def _canonical_example() -> bytes:
    example = schemas.get("trajectory")["examples"][0]
    return TrajectoryRecord.model_validate(example).model_dump_json().encode()


def test_a_key_repeated_inside_an_opaque_payload_is_not_looked_at_on_any_path():
    inside_request = _canonical_example().replace(b'"request":{"model":"m",', b'"request":{"model":"m","model":"n",', 1)
    assert skeleton(inside_request, "trajectory") is not None  # the fast path never opens the payload
    spaced = (
        json.dumps(json.loads(inside_request), indent=1)
        .encode()
        .replace(b'"model": "n"', b'"model": "m",\n"model": "n"', 1)
    )
    for data in (inside_request, spaced):
        assert check_line(data, "trajectory", now=NOW).diagnostics == []
        _agree(data, "trajectory")
        _agree(data, None)


def test_a_key_repeated_outside_the_contract_of_a_rollout_is_not_looked_at():
    line = b'{"response":{"id":"r","id":"s"},"ng_trajectory":' + _canonical_example() + b"}"
    assert check_line(line, now=NOW).diagnostics == []
    _agree(line, None, hint="rollout")
    # The rollout's own top level is the contract's business.
    doubled = line.replace(b'{"response"', b'{"reward":1,"reward":2,"response"', 1)
    assert [d.code for d in check_line(doubled, now=NOW).diagnostics] == ["json_duplicate_key"]
    _agree(doubled, None, hint="rollout")


def test_a_rollout_shape_learnt_from_earlier_lines_never_hides_a_key():
    trajectory = _canonical_example()
    learnt = b'{"reward":1.0,"response":{"id":"r"},"ng_trajectory":' + trajectory + b"}"
    others = {
        "same keys": learnt,
        "another order": b'{"ng_trajectory":' + trajectory + b',"response":{"id":"r"},"reward":1.0}',
        "a key the shape lacks": learnt.replace(b'{"reward"', b'{"agent_ref":{"name":"a:b"},"reward"', 1),
        "a key left out": b'{"ng_trajectory":' + trajectory + b"}",
        "a repeated top-level key": learnt.replace(b'{"reward":1.0', b'{"reward":1.0,"reward":2.0', 1),
        "a repeated attachment": learnt[:-1] + b',"ng_trajectory":' + trajectory + b"}",
        "an attachment that is null": learnt.replace(b'"ng_trajectory":' + trajectory, b'"ng_trajectory":null', 1),
        "an attachment that is not an object": learnt.replace(b'"ng_trajectory":' + trajectory, b'"ng_trajectory":1'),
        "a marker of the contract": learnt.replace(b'{"reward"', b'{"_ng_rollout_id":"r-1","reward"', 1),
        "a marker that is not a string": learnt.replace(b'{"reward"', b'{"_ng_rollout_id":7,"reward"', 1),
    }
    expected = {
        "a repeated top-level key": ["json_duplicate_key"],
        "a repeated attachment": ["json_duplicate_key"],
        "an attachment that is not an object": ["schema_violation"],
        "a marker that is not a string": ["rollout_id_invalid"],
    }
    for name, line in others.items():
        # Each line right after the learnt one, whose shape the fast path then tries first.
        check_line(learnt, hint="rollout", now=NOW)
        found = check_line(line, hint="rollout", now=NOW)
        assert [d.code for d in found.diagnostics] == expected.get(name, []), name
        check_line(learnt, hint="rollout", now=NOW)
        _agree(line, None, hint="rollout")


def test_a_rollout_line_of_very_many_keys_is_checked_without_a_struct_made_for_them():
    trajectory = _canonical_example()
    crowded = b"{" + b"".join(b'"x%d":%d,' % (n, n) for n in range(5000)) + b'"ng_trajectory":' + trajectory + b"}"
    for line in (crowded, crowded):  # the second time, as the line after one of the same keys
        assert skeleton(line, "rollout") is not None
        assert check_line(line, hint="rollout", now=NOW).diagnostics == []
    assert len(_fastpath._SHAPES._decoders) <= _fastpath._RolloutShapes._KEPT
    assert all(len(keys) <= _fastpath._RolloutShapes._MOST_KEYS for keys in _fastpath._SHAPES._decoders)


def test_a_json_document_follows_the_same_rule(tmp_path):
    inside = _canonical_example().replace(b'"request":{"model":"m",', b'"request":{"model":"m","model":"n",', 1)
    outside = _canonical_example().replace(b'"task_id":"7",', b'"task_id":"7","task_id":"7",', 1)
    single = tmp_path / "one.json"
    single.write_bytes(inside)
    assert check_files([str(single)], now=NOW).by_code == {}
    array = tmp_path / "many.json"
    array.write_bytes(b"[" + inside + b"," + outside + b"]")
    report = check_files([str(array)], now=NOW)
    assert [(d.code, d.record, d.path) for d in report.diagnostics] == [("json_duplicate_key", 1, "")]


def test_a_number_the_structure_check_cannot_represent_is_not_judged_there():
    from gym_contract.validation._fastpath import structurally_valid

    record = json.loads(_canonical_example())
    assert structurally_valid(record, "trajectory")
    record["model_calls"][0]["duration_ms"] = NumberText("1e400")  # as the parsed path holds it
    assert structurally_valid(record, "trajectory") is False  # not a verdict, not a traceback
    assert structurally_valid({"ng_trajectory": record}, "rollout") is False


def test_lines_take_the_fast_path_whatever_their_key_order_and_spacing():
    record = TrajectoryRecord.model_validate(schemas.get("trajectory")["examples"][0]).model_dump(mode="json")
    for sort_keys in (False, True):
        for separators in ((",", ":"), (", ", ": ")):
            line = json.dumps(record, separators=separators, sort_keys=sort_keys, ensure_ascii=False).encode()
            assert skeleton(line, "trajectory") is not None
            _agree(line, "trajectory")
    indented = json.dumps(record, indent=2).encode().replace(b"\n", b" ")
    assert skeleton(indented, "trajectory") is not None
    _agree(indented, "trajectory")


@pytest.mark.parametrize("spacing", [b"", b" ", b"\t \r"])
def test_a_key_repeated_in_any_object_of_the_contract_never_takes_the_fast_path(spacing):
    line = _canonical_example()
    for repeated in (
        b'"tool_call_id":"call_1",',  # in a list's object
        b'"prompt_tokens":90,',  # in a nested object
        b'"code":"resolution_unavailable",',  # in the last list
        b'"schema_version":"1.0",',  # at the top
    ):
        assert repeated in line
        doubled = line.replace(repeated, repeated + repeated.replace(b":", spacing + b":" + spacing), 1)
        assert skeleton(doubled, "trajectory") is None
        assert [d.code for d in check_line(doubled, "trajectory", now=NOW).diagnostics] == ["json_duplicate_key"]
        _agree(doubled, "trajectory")


def test_a_key_an_open_object_does_not_declare_is_checked_by_the_parsed_path():
    opened = b'"model_ref":{"type":"responses_api_models",'
    line = _canonical_example().replace(opened, opened.replace(b"{", b'{"x":{"a":1,"a":2},'), 1)
    assert b'"x":' in line
    assert skeleton(line, "trajectory") is None  # msgspec skips the key: the colons tell
    assert [d.code for d in check_line(line, "trajectory", now=NOW).diagnostics] == ["json_duplicate_key"]
    _agree(line, "trajectory")


@pytest.mark.parametrize("escape", [b"\\u003a", b"\\u003A"])
@pytest.mark.parametrize("repeated", [False, True])
def test_a_colon_written_as_an_escape_sends_the_line_to_the_parsed_path(escape, repeated):
    # The escape is a colon the line does not count and the record written back does: with a key
    # repeated as well, the counts would agree, so the escape alone sends the line away.
    line = _canonical_example().replace(b'"task_id":"7"', b'"task_id":"7' + escape + b'"', 1)
    assert escape in line
    if repeated:
        line = line.replace(b'"prompt_tokens":90,', b'"prompt_tokens":90,"prompt_tokens":90,', 1)
    assert skeleton(line, "trajectory") is None
    found = [d.code for d in check_line(line, "trajectory", now=NOW).diagnostics]
    assert ("json_duplicate_key" in found) is repeated
    _agree(line, "trajectory")


def test_colons_inside_strings_are_no_members_and_the_line_takes_the_fast_path():
    line = _canonical_example().replace(b'"task_id":"7"', b'"task_id":"7:8::"', 1)
    assert b'"7:8::"' in line
    assert skeleton(line, "trajectory") is not None
    assert skeleton(line.replace(b'"7:8::"', '"\u00e9:7\u2014:"'.encode(), 1), "trajectory") is not None
    _agree(line, "trajectory")


def test_an_integer_beyond_64_bits_is_the_same_integer_on_every_path():
    # Found by Hypothesis: orjson reads such an integer as a float, msgspec keeps it whole.
    bundle = {
        "source": "C@",
        "records": [
            {
                "invocation_id": "ýlþÔm+",
                "kind": "context_compaction",
                "first_kept_item_id": None,
                "trigger": None,
                "observed_at": None,
                "summary": None,
                "tokens_after": 161_828_512_205_952_623_050_752,
                "tokens_before": 481384656,
            }
        ],
        "gaps": [],
    }
    data = json.dumps(bundle).encode()
    _agree(data, "bundle")
    _agree(json.dumps(bundle, separators=(",", ":"), ensure_ascii=False).encode(), "bundle")
    found = check_line(data, "bundle", now=NOW, fast=False).diagnostics
    (grew,) = [d for d in found if d.code == "compaction_tokens_grew"]
    assert "161828512205952623050752" in grew.message


@pytest.mark.parametrize("digits", [400, 4300])
def test_an_integer_beyond_a_doubles_range_is_still_an_integer(digits):
    # orjson refuses such a number; msgspec and JSON take it as the integer it is.
    huge = int("1" * digits)
    bundle = {
        "source": "pi",
        "records": [{"kind": "context_compaction", "invocation_id": "a", "tokens_before": 1, "tokens_after": huge}],
        "gaps": [],
    }
    data = json.dumps(bundle, separators=(",", ":")).encode()
    _agree(data, "bundle")
    codes = [d.code for d in check_line(data, "bundle", now=NOW, fast=False).diagnostics]
    assert codes == ["invocation_reference_missing", "compaction_tokens_grew"]


BEYOND_PYTHON = [b"1e400", b"-1e400", b"1" * 4301, b"1" * 400 + b".5"]


@pytest.mark.parametrize("number", BEYOND_PYTHON)
def test_a_number_python_cannot_hold_passes_inside_a_payload_on_every_path(number):
    # JSON sets no range on numbers; the contract never reads a payload, so no path refuses one.
    data = b'{"task_id":"7","rollout_id":"7-0","model_calls":[{"request":{"seed":' + number + b"}}]}"
    _agree(data, "trajectory")
    assert check_line(data, "trajectory", now=NOW).diagnostics == []


@pytest.mark.parametrize("number", BEYOND_PYTHON)
def test_a_number_python_cannot_hold_is_a_schema_violation_where_the_contract_wants_a_number(number):
    data = b'{"task_id":"7","rollout_id":"7-0","model_calls":[{"duration_ms":' + number + b"}]}"
    _agree(data, "trajectory")
    (diagnostic,) = check_line(data, "trajectory", now=NOW).diagnostics
    assert (diagnostic.code, diagnostic.keyword, diagnostic.path) == (
        "schema_violation",
        "type",
        "/model_calls/0/duration_ms",
    )
    assert "beyond what a double or a Python int holds" in diagnostic.message


@pytest.mark.parametrize("number", BEYOND_PYTHON)
def test_a_number_python_cannot_hold_under_an_unknown_key_is_an_unknown_key_on_every_path(number):
    data = b'{"source":"pi","records":[],"gaps":[],"x":' + number + b"}"
    _agree(data, "bundle")
    assert [d.keyword for d in check_line(data, "bundle", now=NOW).diagnostics] == ["additionalProperties"]


@pytest.mark.parametrize("payload", [b'"\xff"', b'"\xed\xa0\x80"', b'{"text":"caf\xc3"}'])
def test_invalid_utf8_inside_an_opaque_payload_is_found_on_every_path(payload):
    line = _canonical_example().replace(b'"request":{"model":"m","input":"q"}', b'"request":' + payload, 1)
    assert line != _canonical_example()
    assert skeleton(line, "trajectory") is None
    _agree(line, "trajectory")
    assert [d.code for d in check_line(line, "trajectory", now=NOW).diagnostics] == ["utf8_invalid"]


@settings(max_examples=min(settings().max_examples, int(os.environ.get("FASTPATH_EXAMPLES", "12")) * 4))
@given(st.data())
def test_paths_agree_on_a_canonical_line_damaged_byte_by_byte(data):
    # Any damage at all — a byte replaced, dropped or inserted, anywhere — is judged alike by both paths.
    line = bytearray(_canonical_example())
    for _ in range(data.draw(st.integers(min_value=1, max_value=3), label="edits")):
        at = data.draw(st.integers(min_value=0, max_value=len(line) - 1), label="at")
        byte = data.draw(st.integers(min_value=0, max_value=255).filter(lambda b: b != 0x0A), label="byte")
        edit = data.draw(st.sampled_from(["replace", "drop", "insert"]), label="edit")
        if edit == "replace":
            line[at] = byte
        elif edit == "drop":
            del line[at]
        else:
            line.insert(at, byte)
    _agree(bytes(line), "trajectory")
    _agree(bytes(line), None, hint="trajectory")


def test_inside_an_object_the_schema_types_but_says_nothing_of_only_its_own_keys_are_looked_at():
    def capture(request: bytes) -> bytes:
        return b'{"rollout_id":"7-0","metrics":{"num_calls":1},"calls":[{"call_index":0,"request":' + request + b"}]}"

    inside = capture(b'{"input":[{"role":"user","role":"user"}]}')
    assert skeleton(inside, "model_call_capture") is not None
    assert check_line(inside, "model_call_capture", now=NOW).diagnostics == []
    _agree(inside, "model_call_capture")
    own = capture(b'{"model":"m","model":"n"}')
    assert skeleton(own, "model_call_capture") is None
    (found,) = check_line(own, "model_call_capture", now=NOW).diagnostics
    assert (found.code, found.path) == ("json_duplicate_key", "/calls/0/request")
    _agree(own, "model_call_capture")


# ------------------------------------------------------------------ how deep msgspec may nest


def _unbounded_padding(monkeypatch) -> None:
    monkeypatch.setattr(_nesting, "_MOST_PADDING", 1 << 16)
    monkeypatch.setattr(_nesting, "_PADDING", {})
    monkeypatch.setattr(_nesting, "_TOO_MUCH_ROOM", set())


@pytest.fixture
def room_to_recurse(monkeypatch):
    """A recursion limit above the package's nesting limit, as Python 3.12's C limit leaves msgspec, and
    no bound on the padding, which only weighs its cost: the measure is exact whatever the room."""
    _unbounded_padding(monkeypatch)
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(3000)
    yield
    sys.setrecursionlimit(previous)


def _nested_value(levels: int, kind: str) -> bytes:
    opening, closing = ("[", "]") if kind == "arrays" else ('{"k":', "}")
    inner = "1" if kind == "objects" else ""
    return (opening * levels + inner + closing * levels).encode()


@pytest.mark.parametrize("limit", [40, 1022])
@pytest.mark.parametrize("kind", ["arrays", "objects"])
def test_nesting_is_measured_exactly_at_the_limit(room_to_recurse, limit, kind):
    padding = b" " * (2 * limit)  # long enough that the length alone proves nothing
    assert nests_within(_nested_value(limit, kind) + padding, limit)
    assert not nests_within(_nested_value(limit + 1, kind) + padding, limit)
    # Brackets inside a string are no nesting.
    assert nests_within(b'{"text":"' + b"[" * (4 * limit) + b'"}', limit)


def test_nesting_is_measured_exactly_from_a_deeper_stack(room_to_recurse):
    limit, padding = 40, b" " * 100

    def through_c_calls(depth: int) -> tuple[bool, bool]:
        if depth == 0:
            return (
                nests_within(_nested_value(limit, "arrays") + padding, limit),
                nests_within(_nested_value(limit + 1, "arrays") + padding, limit),
            )
        return next(map(through_c_calls, [depth - 1]))  # a frame of C between two of Python

    nests_within(_nested_value(limit, "arrays") + padding, limit)  # the room measured up here first
    assert through_c_calls(60) == (True, False)


def test_a_line_shorter_than_twice_the_limit_needs_no_measure():
    assert nests_within(b"[" * 10, 5)


def test_a_rollout_line_is_decoded_on_every_interpreter_unless_it_nests_too_deep(monkeypatch):
    _unbounded_padding(monkeypatch)  # on interpreters whose room is costly to measure
    line = b'{"response":{"id":"r"},"ng_trajectory":' + _canonical_example() + b"}"
    assert depth_checked(line, "rollout")
    assert skeleton(line, "rollout") is not None
    deep = line.replace(b'{"id":"r"}', _nested_value(MAX_DEPTH, "arrays"), 1)
    assert skeleton(deep, "rollout") is None
    assert [d.code for d in check_line(deep, hint="rollout", now=NOW).diagnostics] == ["json_invalid"]
    _agree(deep, None, hint="rollout")


# ------------------------------------------------------------------ nesting measured ahead, a batch of lines at once


@pytest.fixture
def counted_budget(monkeypatch):
    """msgspec's budget a count of its own, as Python 3.12 and 3.13 keep it; before 3.12 the recursion limit,
    raised above the package's, stands for it. The padding of `measure_ahead` is measured afresh, and a line
    measured alone is padded without bound."""
    _unbounded_padding(monkeypatch)
    monkeypatch.setattr(_nesting, "_BOTTOM_PADDING", [0])
    monkeypatch.setattr(_nesting, "_AHEAD", {})
    previous = sys.getrecursionlimit()
    if not _nesting._COUNTED_BUDGET:
        monkeypatch.setattr(_nesting, "_COUNTED_BUDGET", True)
        sys.setrecursionlimit(3000)
    yield
    sys.setrecursionlimit(previous)


def _shown_ahead(lines: list[bytes]) -> list[bytes]:
    _fastpath.measure_ahead(lines)
    return [line for line in lines if _nesting._AHEAD.get(id(line)) is line]


@pytest.mark.parametrize("kind", ["arrays", "objects"])
def test_lines_measured_ahead_are_shown_exactly_up_to_the_shallowest_limit(counted_budget, kind):
    limit = _nesting._SHALLOWEST
    assert limit == min(MAX_DEPTH - levels for levels in EMBEDDING.values())
    padding = b" " * (2 * limit)  # long enough that the length alone proves nothing
    at, beyond = _nested_value(limit, kind) + padding, _nested_value(limit + 1, kind) + padding
    # Brackets inside a string are no nesting, whichever way they face; text that is no JSON is never shown,
    # however shallow the part before its fault: it is measured alone, and refused by decoding.
    in_strings = b'{"text":"' + b"]" * (2 * limit) + b"[" * (2 * limit) + b'"}'
    not_json = b"[1]," * (4 * limit) + b"!"
    assert _shown_ahead([at, beyond, in_strings, not_json]) == [at, in_strings]
    assert skeleton(not_json, "capture_exchange") is None
    assert depth_checked(at, "capture_exchange")  # the kind with the shallowest limit
    assert not depth_checked(beyond, "capture_exchange")  # not shown ahead: measured alone, and refused
    assert skeleton(beyond, "capture_exchange") is None


@pytest.mark.parametrize("kind", ["arrays", "objects"])
def test_rollouts_decoded_while_they_are_measured_ahead_are_shown_exactly_up_to_the_shallowest_limit(
    counted_budget, kind
):
    limit = _nesting._SHALLOWEST
    line = b'{"response":{"id":"r"},"ng_trajectory":' + _canonical_example() + b"}"
    assert skeleton(line, "rollout") is not None  # the shape of these rollouts is learnt

    def nesting(levels: int) -> bytes:  # the rollout's own object, then its opaque response
        return line.replace(b'{"id":"r"}', _nested_value(levels - 1, kind), 1)

    at, beyond, too_deep = nesting(limit), nesting(limit + 1), nesting(MAX_DEPTH + 1)
    unknown_key = line.replace(b'"response"', b'"request"', 1)  # a key the shape was not made for
    assert _shown_ahead([at, beyond, too_deep, unknown_key]) == [at, unknown_key]
    assert set(_nesting._DECODED_AHEAD) == {id(at), id(unknown_key)}
    alone = bytes(bytearray(at))  # the same line, not measured ahead: measured alone
    assert msgspec.json.encode(skeleton(at, "rollout")) == msgspec.json.encode(skeleton(alone, "rollout"))
    assert id(at) not in _nesting._DECODED_AHEAD  # taken, not held to the next batch
    # The rollout's own limit is above the shallowest: measured alone, the line one level deeper is taken.
    assert skeleton(beyond, "rollout") is not None
    assert skeleton(too_deep, "rollout") is None
    assert skeleton(unknown_key, "rollout") is not None  # decoded again, by its own keys


def test_a_rollout_decoded_ahead_with_a_key_written_twice_is_refused_as_when_checked_alone(counted_budget):
    # The proof that no key was dropped is told in the room too, while the Structs are fresh: it must refuse there.
    line = b'{"response":{"id":"r"},"ng_trajectory":' + _canonical_example() + b"}"
    assert skeleton(line, "rollout") is not None  # the shape is learnt
    record = json.loads(line)
    repeated = [with_repeated_key(record, target)[0] for target in range(with_repeated_key(record, 0)[1])]
    assert _shown_ahead(repeated) == repeated  # each measured and decoded ahead
    refused = []
    for data in repeated:
        # A key written twice inside an opaque payload is no fault of the contract's: the line is taken then.
        precise = check_line(bytes(bytearray(data)), hint="rollout", now=NOW, fast=False)
        twice = [d.code for d in precise.diagnostics] == ["json_duplicate_key"]
        assert id(data) in _nesting._DECODED_AHEAD
        assert (skeleton(data, "rollout") is None) == twice
        refused.append(twice)
    assert any(refused)
    assert not all(refused)


def test_a_rollout_decoded_ahead_is_taken_only_if_its_payloads_are_utf8_and_no_colon_is_escaped(counted_budget):
    # Decoding keeps payloads raw, unread: what else the fast path proves of a line is told ahead too.
    line = b'{"response":{"id":"r"},"ng_trajectory":' + _canonical_example() + b"}"
    assert skeleton(line, "rollout") is not None  # the shape is learnt
    not_utf8 = line.replace(b'{"id":"r"}', b'{"id":"r\xff"}', 1)
    escaped = line.replace(b'{"id":"r"}', b'{"id\\u003a":"r"}', 1)
    plain = bytes(bytearray(line))
    assert _shown_ahead([not_utf8, escaped, plain]) == [not_utf8, escaped, plain]
    assert skeleton(not_utf8, "rollout") is None
    assert skeleton(escaped, "rollout") is None  # left to the parsed path, which reads the escape
    assert skeleton(plain, "rollout") is not None
    for data in (not_utf8, escaped):
        _agree(data, None, hint="rollout")


def test_a_proof_that_runs_out_of_room_ahead_is_made_again_outside_it(counted_budget, monkeypatch):
    line = b'{"response":{"id":"r"},"ng_trajectory":' + _canonical_example() + b"}"
    expected = skeleton(line, "rollout")
    twice = line.replace(b'"task_id":"7"', b'"task_id":"7","task_id":"8"', 1)
    assert skeleton(twice, "rollout") is None
    kept = _fastpath._keys_all_kept

    def out_of_room(data: bytes, decoded: Any) -> bool:
        raise RecursionError

    monkeypatch.setattr(_fastpath, "_keys_all_kept", out_of_room)
    _fastpath.measure_ahead([line, twice])
    monkeypatch.setattr(_fastpath, "_keys_all_kept", kept)
    assert {_nesting._DECODED_AHEAD[id(data)][1] for data in (line, twice)} == {None}
    assert msgspec.json.encode(skeleton(line, "rollout")) == msgspec.json.encode(expected)
    assert skeleton(twice, "rollout") is None


def test_lines_measured_ahead_are_shown_exactly_from_any_depth_of_the_stack(counted_budget):
    limit = _nesting._SHALLOWEST
    at, beyond = _nested_value(limit, "arrays") + b" " * 100, _nested_value(limit + 1, "arrays") + b" " * 100

    def through_c_calls(depth: int) -> list[bytes]:
        if depth == 0:
            return _shown_ahead([at, beyond])
        return next(map(through_c_calls, [depth - 1]))  # a frame of C between two of Python

    # Deeper, then shallower again: the padding measured for one depth would leave too much room at the other.
    for depth in (0, 60, 0, 200, 5, 200):
        assert through_c_calls(depth) == [at], depth


def test_lines_measured_ahead_are_forgotten_with_the_next_batch(counted_budget):
    # Taken by identity, so held only until the next batch: no other object can pass for one of them.
    first, second = b"[" + b"[1]," * 1500 + b"1]", b"[" + b"[2]," * 1500 + b"2]"
    assert _shown_ahead([first]) == [first]
    assert _shown_ahead([second]) == [second]
    assert list(_nesting._AHEAD.values()) == [second]


def _wide_rollout(payload_items: int) -> bytes:
    """A valid rollout line with more brackets than any limit, in an opaque payload, nesting 4 levels."""
    response = b'{"id":"r","output":[' + b",".join([b'{"k":[1]}'] * payload_items) + b"]}"
    return b'{"response":' + response + b',"ng_trajectory":' + _canonical_example() + b"}"


@pytest.mark.parametrize("alone", ["measured", "too costly to measure"])
def test_a_file_takes_the_fast_path_for_every_line_but_the_one_that_nests_too_deep(
    tmp_path, monkeypatch, counted_budget, alone
):
    if alone == "too costly to measure":
        monkeypatch.setattr(_nesting, "_MOST_PADDING", 0)  # as on Python 3.13, whose budget is 10,000 levels
    line = _wide_rollout(700)
    assert line.count(b"[") + line.count(b"{") > MAX_DEPTH
    deep = line.replace(b'{"k":[1]}', _nested_value(MAX_DEPTH - 2, "arrays"), 1)  # 3 levels above it
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes(b"\n".join([line] * 3 + [deep] + [line] * 3) + b"\n\n")
    parsed: list[bytes] = []
    read_record = validation.read_record  # where `check_line` reads a line the fast path did not take

    def counted(data: bytes, kind: str | None = None) -> Any:
        parsed.append(data)
        return read_record(data, kind)

    monkeypatch.setattr(validation, "read_record", counted)
    fast = check_files([str(path)], now=NOW)
    assert parsed == [deep]
    precise = check_files([str(path)], now=NOW, fast=False)
    assert [(d.code, d.line) for d in fast.diagnostics] == [("json_invalid", 4)]
    assert {**fast.to_dict(), "seconds": 0, "mb_per_s": 0} == {**precise.to_dict(), "seconds": 0, "mb_per_s": 0}


def test_a_wide_line_checked_alone_is_measured_as_a_batch_is_where_measuring_it_exactly_costs_too_much(
    monkeypatch, counted_budget
):
    monkeypatch.setattr(_nesting, "_MOST_PADDING", 0)  # as on Python 3.13, whose budget is 10,000 levels
    line = _wide_rollout(700)
    assert line.count(b"[") + line.count(b"{") > MAX_DEPTH
    assert not _nesting._AHEAD
    assert skeleton(line, "rollout") is not None
    at_limit = line.replace(b'{"k":[1]}', _nested_value(_nesting._SHALLOWEST - 3, "arrays"), 1)  # 3 levels above
    beyond = line.replace(b'{"k":[1]}', _nested_value(MAX_DEPTH - 2, "arrays"), 1)
    assert skeleton(at_limit, "rollout") is not None
    assert skeleton(beyond, "rollout") is None
    assert [d.code for d in check_line(beyond, hint="rollout", now=NOW).diagnostics] == ["json_invalid"]


def test_lines_read_ahead_come_in_order_each_with_the_blank_lines_before_it(tmp_path, monkeypatch):
    from gym_contract.reading import _records, _sources
    from gym_contract.validation import _checking

    monkeypatch.setattr(_checking, "_FIRST_AHEAD_BYTES", 3)  # one line of 3 bytes, then 6 bytes, then 12
    measured: list[list[bytes]] = []
    monkeypatch.setattr(_fastpath, "measure_ahead", measured.append)
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"[1]\n\n\n[2]\n\n[3]\n[4]\n\n\n\n[5]\n\n")
    stats = _records.ReadStats()
    with _sources.open_source(str(path)) as source:
        ahead = _checking._Ahead(_records.iter_lines(source, stats=stats), stats, source)
        seen = [(item.data, ahead.blank_lines) for item in ahead if isinstance(item, _records.RawLine)]
    assert seen == [(b"[1]", 0), (b"[2]", 2), (b"[3]", 3), (b"[4]", 3), (b"[5]", 6)]
    assert measured == [[b"[1]"], [b"[2]", b"[3]"], [b"[4]", b"[5]"]]
    assert stats.blank_lines == 7  # the reader's own count, the last blank line included


def test_lines_read_ahead_from_a_pipe_are_handed_out_as_they_arrive(tmp_path, monkeypatch):
    # A pipe that stays open (`tail -f |`): a batch ends where it holds nothing more, not once enough came.
    from gym_contract.reading import _records, _sources
    from gym_contract.validation import _checking

    monkeypatch.setattr(_fastpath, "measure_ahead", lambda lines: None)
    fifo = tmp_path / "live.jsonl"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # held open for writing, as by a producer still at work
    os.write(writer, b"[1]\n[2]\n")
    with _sources.open_source(str(fifo)) as source:
        stats = _records.ReadStats()
        handed_out = iter(_checking._Ahead(_records.iter_lines(source, stats=stats), stats, source))
        taken: list[bytes] = []

        def take(count: int) -> None:
            taken.extend(item.data for item in itertools.islice(handed_out, count))

        for count, more in ((2, None), (1, b"[3]\n")):
            if more is not None:
                os.write(writer, more)
            taker = threading.Thread(target=take, args=(count,))
            taker.start()
            taker.join(10)
            waited = taker.is_alive()
            if waited:  # a batch waiting for lines that are not coming: end the input so that it stops
                os.close(writer)
                taker.join()
            assert not waited, taken
        os.close(writer)
    assert taken == [b"[1]", b"[2]", b"[3]"]


@contextlib.contextmanager
def stringzilla_backend(name):
    """stringzilla as it runs on this machine ("fastest"), or reduced to its plain loops, as without SIMD ("serial")."""
    import stringzilla

    chosen = stringzilla.__capabilities__
    if name == "serial":
        stringzilla.reset_capabilities(["serial"])
    try:
        yield
    finally:
        stringzilla.reset_capabilities(list(chosen))


@pytest.mark.parametrize("backend", ["fastest", "serial"])
@given(data=st.binary(max_size=5000), colons=st.integers(0, 300), at=st.integers(0, 5000))
def test_colons_are_counted_exactly_whatever_the_bytes(backend, data, colons, at):
    data = data[:at] + b":" * colons + data[at:]
    with stringzilla_backend(backend):
        assert _fastpath.colons(data) == data.count(b":")


@pytest.mark.parametrize("backend", ["fastest", "serial"])
@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 4095, 4097, 1 << 20])
def test_colons_are_counted_exactly_at_every_block_boundary(backend, size):
    mixed = (b'{"a":1,' * size)[:size]
    with stringzilla_backend(backend):
        assert _fastpath.colons(b":" * size) == size
        assert _fastpath.colons(b"\\u003a" * size) == 0
        assert _fastpath.colons(mixed) == mixed.count(b":")


def test_colons_of_a_short_line_after_a_long_one_count_only_its_own_bytes():
    # The marks go to a buffer kept from line to line: a longer line's marks stay behind the shorter's.
    assert _fastpath.colons(b":" * 1000) == 1000
    assert _fastpath.colons(b"{}") == 0
    assert _fastpath.colons(b'{"a":1}') == 1


def test_a_line_too_long_to_keep_its_buffers_for_is_counted_and_its_buffers_let_go(monkeypatch):
    monkeypatch.setattr(_fastpath, "_SCRATCH_KEPT", 64)
    line = b'{"response":{"id":"r","x":"' + b":" * 100 + b'"},"ng_trajectory":' + _canonical_example() + b"}"
    assert skeleton(line, "rollout") is not None
    assert len(_fastpath._SCRATCH.marks) == len(_fastpath._SCRATCH.written) == 0
    assert _fastpath.colons(b":" * 100) == 100
