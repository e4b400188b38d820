"""Lineage hashing against the golden vectors, the resolver's rules, its laws, and `gym-contract lineage`."""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract.cli import main
from gym_contract.lineage import (
    AMBIGUOUS,
    FINGERPRINT_VERSION,
    NO_MATCH,
    REQUEST_UNAVAILABLE,
    RESOLVED,
    ROOT,
    UNRESOLVED,
    CallStamp,
    LineageIndex,
    Resolution,
    assistant_fingerprint,
    chain,
    conversation_digest,
    stamp,
)
from gym_contract.lineage import _hash as _lineage_hash
from gym_contract.models import ModelCallRecord
from gym_contract.reading._json_parsing import loads
from tests.support import REPO

VECTORS = sorted((REPO / "tests" / "lineage_vectors").glob("*.json"))
SPEC_PAGE = REPO / "docs" / "reference" / "lineage.md"
EXAMPLE = REPO / "examples" / "capture" / "12-0.capture.jsonl"


# --- golden vectors -----------------------------------------------------------------------------------


def read_vector(path: Path) -> Any:
    """A vector as a reader that keeps numbers exact reads it (a number no double holds stays its text)."""
    return loads(path.read_bytes())


@pytest.mark.parametrize("path", VECTORS, ids=lambda path: path.stem)
def test_every_dialect_form_of_a_golden_vector_hashes_to_its_expected_values(path: Path):
    vector = read_vector(path)
    assert vector["fingerprint_version"] == FINGERPRINT_VERSION
    for dialect, items in vector["forms"].items():
        assert assistant_fingerprint(items) == vector["fingerprint"], dialect
        assert conversation_digest(items) == vector["digest"], dialect
        assert [list(field) for field in _lineage_hash.digest_fields(items)] == vector["digest_fields"], dialect


def test_the_vectors_cover_all_three_dialects_and_every_tag():
    vectors = [read_vector(path) for path in VECTORS]
    assert {dialect for vector in vectors for dialect in vector["forms"]} == {"chat", "messages", "responses"}
    tags = {tag for vector in vectors for tag, _ in vector["digest_fields"]}
    assert tags == set(_lineage_hash.TAGS.values())


def frame(tag: int, value: str) -> bytes:
    data = value.encode("utf-8")
    return bytes([tag]) + len(data).to_bytes(8, "big") + data


def test_the_framing_is_domain_then_tag_length_and_utf8_value_as_the_page_says():
    vector = json.loads((REPO / "tests" / "lineage_vectors" / "tool-call-turn.json").read_text(encoding="utf-8"))
    fingerprint = hashlib.sha256(b"nemo-gym-lineage" + frame(0x03, "Listing them.") + frame(0x06, "call_1"))
    assert fingerprint.hexdigest() == vector["fingerprint"]
    digest = hashlib.sha256(b"nemo-gym-lineage-context" + b"".join(frame(t, v) for t, v in vector["digest_fields"]))
    assert digest.hexdigest() == vector["digest"]
    assert hashlib.sha256(b"nemo-gym-lineage-context").hexdigest() == conversation_digest([])


def test_every_tag_and_domain_is_specified_on_the_docs_page():
    page = SPEC_PAGE.read_text(encoding="utf-8")
    for name, value in _lineage_hash.TAGS.items():
        assert re.search(rf"\|\s*`{name}`\s*\|\s*`0x{value:02X}`\s*\|", page), name
    for domain in (_lineage_hash.FINGERPRINT_DOMAIN, _lineage_hash.DIGEST_DOMAIN):
        assert f"`{domain}`" in page
    for path in VECTORS:
        assert path.name in page


# --- dialects, rules 1 and 2 --------------------------------------------------------------------------

words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
turns = st.lists(
    st.tuples(words, st.lists(st.tuples(words, st.dictionaries(words, st.integers() | words, max_size=3)), max_size=2)),
    min_size=1,
    max_size=4,
)


def conversation(system: str, user_texts: list[str], assistant_turns: list[tuple[str, list]]) -> dict[str, list]:
    """One conversation in the three dialects: turns of user text, then assistant text and tool calls with results."""
    chat: list[Any] = [{"role": "system", "content": system}]
    messages: list[Any] = [{"role": "system", "content": [{"type": "text", "text": system}]}]
    responses: list[Any] = [{"role": "system", "content": system}]
    for number, (user_text, (reply, calls)) in enumerate(zip(user_texts, assistant_turns, strict=False)):
        chat.append({"role": "user", "content": user_text})
        messages.append({"role": "user", "content": [{"type": "text", "text": user_text}]})
        responses.append({"role": "user", "content": [{"type": "input_text", "text": user_text}]})
        ids = [f"call_{number}_{index}" for index in range(len(calls))]
        chat.append(
            {
                "role": "assistant",
                "content": reply,
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                    for i, (n, a) in zip(ids, calls, strict=True)
                ],
            }
        )
        blocks = [{"type": "tool_use", "id": i, "name": n, "input": a} for i, (n, a) in zip(ids, calls, strict=True)]
        messages.append({"role": "assistant", "content": [{"type": "text", "text": reply}, *blocks]})
        responses.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": reply}]})
        responses += [
            {"type": "function_call", "call_id": i, "name": n, "arguments": json.dumps(a, indent=1)}
            for i, (n, a) in zip(ids, calls, strict=True)
        ]
        chat += [{"role": "tool", "tool_call_id": i, "content": f"result {i}"} for i in ids]
        results = [{"type": "tool_result", "tool_use_id": i, "content": f"result {i}"} for i in ids]
        if results:
            messages.append({"role": "user", "content": results})
        responses += [{"type": "function_call_output", "call_id": i, "output": f"result {i}"} for i in ids]
    return {"chat": chat, "messages": messages, "responses": responses}


@given(words, st.lists(words, min_size=4, max_size=4), turns)
def test_a_conversation_hashes_the_same_in_every_dialect(system, user_texts, assistant_turns):
    forms = conversation(system, user_texts, assistant_turns)
    assert len({assistant_fingerprint(items) for items in forms.values()}) == 1
    assert len({conversation_digest(items) for items in forms.values()}) == 1


@given(words, words, st.lists(words, min_size=4, max_size=4), turns)
def test_changing_only_system_content_never_changes_the_digest(system, other_system, user_texts, assistant_turns):
    for dialect, items in conversation(system, user_texts, assistant_turns).items():
        changed = conversation(other_system, user_texts, assistant_turns)[dialect]
        assert conversation_digest(items) == conversation_digest(changed)


@given(words, st.lists(words, min_size=4, max_size=4), turns, st.data())
def test_a_rewritten_user_assistant_or_tool_turn_always_changes_the_digest(system, user_texts, assistant_turns, data):
    chat = conversation(system, user_texts, assistant_turns)["chat"]
    position = data.draw(st.integers(1, len(chat) - 1))
    rewritten = json.loads(json.dumps(chat))
    turn = rewritten[position]
    summary = data.draw(words)
    if turn["role"] == "assistant" and turn["tool_calls"] and data.draw(st.booleans()):
        function = turn["tool_calls"][0]["function"]
        function["arguments"] = json.dumps({"summary": summary, "was": function["arguments"]})
    else:
        turn["content"] = f"{turn['content']} {summary}"  # a summary that keeps nothing of the turn still differs
    assert conversation_digest(rewritten) != conversation_digest(chat)


def test_a_tool_call_with_an_id_is_fingerprinted_by_its_id_alone():
    served = [{"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"command": "cd /w && ls"}}]
    echoed = [{"type": "tool_use", "id": "toolu_1", "name": "Agent", "input": {"command": "ls"}}]
    fingerprints = {assistant_fingerprint([{"role": "assistant", "content": blocks}]) for blocks in (served, echoed)}
    digests = {conversation_digest([{"role": "assistant", "content": blocks}]) for blocks in (served, echoed)}
    assert len(fingerprints) == 1
    assert len(digests) == 2  # the digest still covers name and arguments as echoed


# --- the index ----------------------------------------------------------------------------------------

QUESTION = [{"role": "user", "content": "Hi"}]
ANSWER = [{"role": "assistant", "content": "Hello"}]
FOLLOW_UP = [*QUESTION, *ANSWER, {"role": "user", "content": "Bye"}]


def test_a_request_with_nothing_model_authored_is_a_root():
    assert LineageIndex([stamp("a", QUESTION, ANSWER)]).resolve(QUESTION) == Resolution(ROOT)


def test_a_request_continuing_one_call_resolves_to_it_and_identical_retries_collapse_to_the_smallest_id():
    assert LineageIndex([stamp("b", QUESTION, ANSWER)]).resolve(FOLLOW_UP) == Resolution(RESOLVED, "b")
    retries = LineageIndex([stamp("b", QUESTION, ANSWER), stamp("a", QUESTION, ANSWER)])
    assert retries.resolve(FOLLOW_UP) == Resolution(RESOLVED, "a")


def test_candidates_are_verified_before_they_are_counted():
    longer_context = [*QUESTION, {"role": "user", "content": "?"}]
    index = LineageIndex([stamp("a", QUESTION, ANSWER), stamp("b", longer_context, ANSWER)])
    assert index.resolve(FOLLOW_UP) == Resolution(RESOLVED, "a")  # b's context is not a prefix of the request
    alone = LineageIndex([stamp("b", longer_context, ANSWER)])
    assert alone.resolve(FOLLOW_UP) == Resolution(UNRESOLVED, reason=NO_MATCH)


def test_a_reply_that_adds_nothing_model_authored_is_never_a_candidate():
    reasoning_only = [{"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]}]
    index = LineageIndex([stamp("a", QUESTION, ANSWER), stamp("b", FOLLOW_UP, reasoning_only)])
    assert index.resolve([*FOLLOW_UP, {"role": "user", "content": "Go on."}]) == Resolution(RESOLVED, "a")


def test_verified_candidates_that_are_not_identical_retries_make_the_request_ambiguous():
    searched = [*ANSWER, {"type": "web_search_call", "id": "ws_1"}]
    index = LineageIndex([stamp("j", QUESTION, ANSWER), stamp("k", QUESTION, searched)])
    assert index.resolve(FOLLOW_UP) == Resolution(UNRESOLVED, reason=AMBIGUOUS, candidates=("j", "k"))


def test_stamps_of_another_fingerprint_version_are_reported_never_indexed():
    old = CallStamp("a", 1, assistant_fingerprint([*QUESTION, *ANSWER]), 2, conversation_digest(QUESTION), "")
    index = LineageIndex([old])
    assert index.other_version == (old,)
    assert index.resolve(FOLLOW_UP).reason == NO_MATCH


def test_a_call_id_indexed_twice_with_different_stamps_is_refused():
    index = LineageIndex([stamp("a", QUESTION, ANSWER), stamp("a", QUESTION, ANSWER)])
    with pytest.raises(ValueError, match="indexed twice"):
        index.add(stamp("a", FOLLOW_UP, ANSWER))


# --- a whole capture ----------------------------------------------------------------------------------


def record(index: int, call_id: str | None, request: Any, response: Any, **extra: Any) -> ModelCallRecord:
    fields = {"call_index": index, "model_call_id": call_id, "dialect": "chat", "request": request, **extra}
    choices = [{"index": 0, "message": response}] if response is not None else None
    return ModelCallRecord.model_validate({**fields, "response": {"choices": choices} if choices else None})


def test_calls_without_a_readable_request_or_with_another_version_are_reported():
    records = [
        record(0, "a", {"messages": QUESTION}, ANSWER[0], fingerprint_version=1),
        record(1, None, None, None),
        record(2, "c", {"messages": FOLLOW_UP}, ANSWER[0]),
    ]
    result = chain(records)
    assert result.other_version == ("a",)
    assert result.calls["#1"].resolution == Resolution(UNRESOLVED, reason=REQUEST_UNAVAILABLE)
    assert result.calls["c"].resolution == Resolution(UNRESOLVED, reason=NO_MATCH)
    assert [call.call_id for call in result.unresolved] == ["#1", "c"]


def tree_records(shape: list[int]) -> list[ModelCallRecord]:
    """Calls whose parents are given by `shape` (each entry the parent's position, or -1 for a root)."""
    histories: list[list[Any]] = []
    records = []
    for number, parent in enumerate(shape):
        base = [{"role": "user", "content": f"task {number}"}] if parent < 0 else histories[parent]
        request = [*base, {"role": "user", "content": f"step {number}"}]
        answer = {"role": "assistant", "content": f"answer {number}"}
        histories.append([*request, answer])
        records.append(record(number, f"call-{number:02d}", {"messages": request}, answer))
    return records


shapes = st.lists(st.integers(-1, 30), min_size=1, max_size=25).map(
    lambda raw: [parent if parent < position else -1 for position, parent in enumerate(raw)]
)


@given(shapes, st.randoms(use_true_random=False))
def test_resolution_does_not_depend_on_the_order_calls_were_recorded(shape, shuffler: random.Random):
    records = tree_records(shape)
    expected = {f"call-{n:02d}": f"call-{p:02d}" if p >= 0 else None for n, p in enumerate(shape)}
    shuffled = list(records)
    shuffler.shuffle(shuffled)
    renumbered = [r.model_copy(update={"call_index": i}) for i, r in enumerate(shuffled)]
    for calls in (records, renumbered):
        result = chain(calls)
        assert {call_id: call.resolution.parent_call_id for call_id, call in result.calls.items()} == expected
        assert not result.unresolved
        assert sorted(call for c in result.conversations for call in c.calls) == sorted(expected)


# --- the command ----------------------------------------------------------------------------------------


def test_the_command_prints_the_example_capture_as_a_tree(capsys):
    assert main(["lineage", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("12-0.capture.jsonl: ")
    assert "conversation 1 (main agent" in out
    assert "(branch)" in out
    assert "└── " in out


def test_the_command_writes_json_and_exits_1_when_a_call_is_unresolved(tmp_path, capsys):
    assert main(["lineage", "--format", "json", str(EXAMPLE)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["fingerprint_version"] == 4
    assert report["unresolved"] == []
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "1-0.capture.jsonl"
    broken.write_text("\n".join(line for number, line in enumerate(lines) if number != 1) + "\n", encoding="utf-8")
    assert main(["lineage", "--format", "json", str(broken)]) == 1
    assert json.loads(capsys.readouterr().out)["unresolved"][0]["reason"] == NO_MATCH


def test_a_damaged_line_is_named_once_counted_in_every_format_and_fails_the_command(tmp_path, capsys):
    """A damaged line holds a call that is in no tree: the lineage is partial, as `project` and `export` say."""
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)
    damaged = tmp_path / "12-0.capture.jsonl"
    damaged.write_bytes(b"".join(lines[:3]) + b"{bad\n" + b"".join(lines[3:]))
    assert main(["lineage", str(damaged)]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("12-0.capture.jsonl: 7 calls, 2 conversations, 0 unresolved, 1 damaged line not chained")
    assert err.splitlines() == [f"gym-contract: {damaged}:4: json_invalid: " + err.split(": json_invalid: ")[1].strip()]
    assert main(["lineage", "--format", "json", str(damaged)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(d["line"], d["code"]) for d in report["damaged_lines"]] == [(4, "json_invalid")]


def test_unreadable_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["lineage", str(tmp_path / "9-0.capture.jsonl")]) == 2
    assert main(["lineage", str(tmp_path / "notes.txt")]) == 2
    assert main(["lineage", str(tmp_path)]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 3
    assert all(line.startswith("gym-contract: cannot open ") for line in errors)


@pytest.mark.parametrize("name", ["calls.jsonl", "bad id.capture.jsonl", "12-0.capture.jsonl.bak"])
def test_a_file_of_capture_lines_under_any_name_gives_the_same_lineage(tmp_path, capsys, name):
    copy = tmp_path / name
    copy.write_bytes(EXAMPLE.read_bytes())
    assert main(["lineage", "--format", "json", str(EXAMPLE)]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert main(["lineage", "--format", "json", str(copy)]) == 0
    assert json.loads(capsys.readouterr().out) == expected
    assert main(["lineage", str(copy)]) == 0
    assert capsys.readouterr().out.startswith(f"{name}: 7 calls, 2 conversations")


def test_each_call_is_labelled_with_what_its_numbers_are(capsys):
    """`[0 responses]` read as a count of responses: the index and the dialect are named."""
    assert main(["lineage", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "9d3a7c1e4b2f4a6c8e0d1b3f5a7c1200 [call_index 0, dialect messages]  root" in out
    assert "[0 messages]" not in out
