"""No input crashes the interop entry points: they return, or refuse with the ValueError they document."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from hypothesis import given

from gym_contract._json_writing import dumps
from gym_contract.interop import AtifError, from_atif, to_atif, to_otel
from tests.interop.test_atif import EXAMPLE_ROLLOUTS, REAL_TRAJECTORIES
from tests.strategies import hostile_records, mutated_records


@cache
def atif_documents() -> tuple[dict[str, Any], ...]:
    """Real ATIF trajectories and this package's own exports: what mutated ATIF input starts from."""
    real = [json.loads(path.read_text()) for path in REAL_TRAJECTORIES[:2]]
    return (*real, to_atif(EXAMPLE_ROLLOUTS[0]), to_atif(EXAMPLE_ROLLOUTS[-1]))


@given(hostile_records())
def test_law_any_value_is_exported_or_refused_with_a_value_error(value):
    for export in (lambda: to_atif(value), lambda: to_otel([value])):
        try:
            written = export()
        except ValueError:
            continue
        dumps(written)  # whatever was exported can be written as JSON text


@given(mutated_records(atif_documents()))
def test_law_any_broken_atif_document_is_read_or_refused_with_an_atif_error(document):
    refusal = None
    try:
        bundle = from_atif(document)
    except AtifError as refused:
        refusal = str(refused)
    else:
        if _writable(document):  # what JSON text can hold in, it holds out (a lone surrogate it holds in neither)
            dumps(bundle)
    assert refusal is None or "\n" not in refusal


def _writable(value: Any) -> bool:
    try:
        dumps(value)
    except TypeError:
        return False
    return True


def test_an_atif_document_whose_strings_json_text_cannot_hold_gives_such_a_bundle_not_a_crash():
    document = {
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "a"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
        "extra": {"gym_contract": {"invocation": {"invocation_id": "root", "$schema": "\ud800"}, "source": "pi"}},
    }
    bundle = from_atif(document)
    assert bundle["source"] == "pi"
    assert not _writable(document)


def test_a_chain_of_thousands_of_subagents_needs_no_recursion():
    depth = 3000
    records = [
        {"kind": "agent_invocation", "invocation_id": f"i{n}", **({"parent_invocation_id": f"i{n - 1}"} if n else {})}
        for n in range(depth)
    ]
    bundle = {"source": "pi", "records": records}
    document = to_atif(bundle)
    back = from_atif(document)
    assert len(back["records"]) == depth
    spans = to_otel([bundle])["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(spans) == depth + 1


def test_reasoning_whose_text_is_not_a_string_is_kept_whole_not_a_crash():
    item = {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": 5}]}
    bundle = {"source": "pi", "records": [{"kind": "agent_invocation", "invocation_id": "r", "conversation": [item]}]}
    (step,) = to_atif(bundle)["steps"]
    assert step["reasoning_content"] == ""
    assert from_atif(to_atif(bundle))["records"][0]["conversation"] == [item]


def test_numbers_past_64_bits_in_outputs_and_arguments_are_written_exactly():
    conversation = [
        {"type": "function_call", "call_id": "c", "name": "n", "arguments": '{"n": 123456789012345678901234567890}'},
        {"type": "function_call_output", "call_id": "c", "output": [{"type": "input_text", "text": "a", "n": 2**70}]},
    ]
    bundle = {
        "source": "pi",
        "records": [{"kind": "agent_invocation", "invocation_id": "r", "conversation": conversation}],
    }
    (step,) = to_atif(bundle)["steps"]
    assert step["tool_calls"][0]["arguments"] == {"n": 123456789012345678901234567890}
    assert str(2**70) in step["observation"]["results"][0]["content"]
    assert from_atif(to_atif(bundle))["records"][0]["conversation"] == conversation
