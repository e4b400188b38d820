"""The Structs compiled from the schemas accept nothing the schemas reject, and refuse what they cannot check."""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

import jsonschema
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_contract import schemas
from gym_contract.validation._struct_types import UnsupportedSchemaError, compile_schema, schema_type
from tests.schema_instances import schema_instances
from tests.support import model_accepts, model_entities
from tests.test_agreement import mutated

ENTITIES = model_entities()
# Drawing whole records from the large schemas is slow: a bounded number, below the profile's.
EXAMPLES = min(settings().max_examples, int(os.environ.get("STRUCT_EXAMPLES", "12")))


@cache
def _decoder(name: str) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(schema_type(name))


@cache
def _instances(name: str) -> st.SearchStrategy[Any]:
    return schema_instances(name)


def _accepted(name: str, data: bytes) -> bool:
    try:
        _decoder(name).decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    return True


def _canonical(name: str, instance: Any) -> bytes:
    """The instance as the reference writes it: every key, defaults included, through its model."""
    model = ENTITIES[name]
    if hasattr(model, "model_validate"):
        return model.model_validate(instance).model_dump_json().encode()
    return model.dump_json(model.validate_python(instance))


@pytest.mark.parametrize("name", sorted(ENTITIES))
def test_whatever_the_structs_accept_the_schema_accepts(name):
    validator = schemas.validator(name)

    @settings(max_examples=EXAMPLES)
    @given(st.one_of(_instances(name), mutated(_instances(name))))
    def check(instance):
        for data in (json.dumps(instance).encode(), json.dumps(instance, separators=(",", ":")).encode()):
            if _accepted(name, data):
                assert validator.is_valid(instance), instance

    check()


@pytest.mark.parametrize("name", sorted(ENTITIES))
def test_the_structs_accept_every_valid_instance_as_the_reference_writes_it(name):
    # Stricter than the schema only where the reference never writes: a tag left out, a float where
    # an integer is due. What the models write, the Structs take.
    @settings(max_examples=EXAMPLES)
    @given(_instances(name))
    def check(instance):
        if model_accepts(ENTITIES[name], instance):
            assert _accepted(name, _canonical(name, instance)), instance

    check()


@pytest.mark.parametrize("name", sorted(n for n in schemas.names() if n != "gap_codes"))
def test_every_schema_example_is_accepted(name):
    for example in schemas.get(name).get("examples", []):
        assert _accepted(name, json.dumps(example).encode()), example


def test_opaque_values_stay_raw_bytes():
    call = msgspec.json.decode(
        b'{"request":{"model":"m"},"response":[1,{"a":2}],"token_stats":{}}', type=schema_type("trajectory_model_call")
    )
    assert isinstance(call.request, msgspec.Raw)
    assert bytes(call.response) == b'[1,{"a":2}]'
    assert call.started_at is msgspec.UNSET  # absent keys are told from null ones
    record = msgspec.json.decode(b'{"call_index":0,"request":{"a":[1]}}', type=schema_type("model_call_record"))
    # An object the schema types but says nothing inside: its keys are read, its values kept raw.
    assert list(record.request) == ["a"]
    assert bytes(record.request["a"]) == b"[1]"


def test_branches_that_share_a_tag_are_told_apart_after_decoding():
    decode = _decoder("conversation_item").decode
    user = b'{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}'
    assistant = (
        b'{"type":"message","id":"m1","role":"assistant",'
        b'"content":[{"type":"output_text","text":"x","annotations":[]}]}'
    )
    assert decode(user).content[0].text == "hi"
    assert decode(assistant).id == "m1"
    # An output part in a user message fits neither the input messages nor the output message (no id).
    mixed = b'{"type":"message","role":"user","content":[{"type":"output_text","text":"x","annotations":[]}]}'
    with pytest.raises(msgspec.ValidationError):
        decode(mixed)
    with pytest.raises(msgspec.ValidationError):  # dependentRequired: token ids come together
        decode(b'{"type":"message","role":"user","content":"hi","prompt_token_ids":[1]}')


def test_a_model_call_reference_needs_an_id_or_a_response():
    decode = _decoder("model_call_ref").decode
    assert decode(b'{"model_call_id":"c"}').model_call_id == "c"
    ref = b'{"model_call_id":"","model_ref":{"type":"responses_api_models","name":"p"},"response_id":"r"}'
    assert decode(ref).response_id == "r"
    for data in (b"{}", b'{"model_call_id":""}', b'{"model_call_id":null,"response_id":"r"}'):
        assert not schemas.validator("model_call_ref").is_valid(json.loads(data))
        with pytest.raises(msgspec.ValidationError):
            decode(data)


TAGGED_UNION: dict[str, Any] = {
    "required": ["type"],
    "oneOf": [
        {"type": "object", "properties": {"type": {"const": "a"}}, "additionalProperties": False},
        {"type": "object", "properties": {"type": {"const": "b"}, "n": {"type": "integer"}}},
    ],
}


def test_a_tagged_union_may_declare_its_tag_and_type_as_strict_validators_ask():
    declared = {**TAGGED_UNION, "type": "object", "properties": {"type": {"description": "which one"}}}
    decoder = msgspec.json.Decoder(
        compile_schema({"$id": "https://gym-contract.dev/schemas/v1/t.schema.json", **declared})
    )
    assert decoder.decode(b'{"type":"b","n":1}').n == 1
    for refused in (b'{"type":"a","n":1}', b'{"type":"c"}', b'{"n":1}', b"[]"):
        assert not jsonschema.Draft202012Validator(declared).is_valid(json.loads(refused))
        with pytest.raises(msgspec.ValidationError):
            decoder.decode(refused)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}, "minItems": 1},
        {"type": "object", "properties": {"a": {"type": "string"}}, "patternProperties": {"^x": {}}},
        {"type": "string", "format": "date-time"},
        {"anyOf": [{"type": "object", "properties": {"a": {}}}, {"type": "object", "properties": {"b": {}}}]},
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        {"allOf": [{"type": "string"}]},
        {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}},
        {"type": "object", "properties": {"a": {}}, "if": {"required": ["b"]}, "then": {"required": ["a"]}},
        {"const": 1.5},
        {"$ref": "common.schema.json#/$defs/ModelServerRef", "required": ["name"]},
        # Beside a tagged union only the tag, required and declared, and the object type it implies.
        {**TAGGED_UNION, "properties": {"type": {"enum": ["a", "b"]}}},
        {**TAGGED_UNION, "properties": {"type": True, "name": True}},
        {**TAGGED_UNION, "type": "array"},
        # A condition is compiled to source: a length that is not an integer never reaches it.
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {}},
            "if": {"properties": {"a": {"minLength": "1) or (True"}}},
            "then": {"required": ["b"]},
        },
    ],
)
def test_a_keyword_the_compiler_does_not_check_is_refused_when_the_types_are_built(schema):
    with pytest.raises(UnsupportedSchemaError):
        compile_schema({"$id": "https://gym-contract.dev/schemas/v1/test.schema.json", **schema})


# ------------------------------------------------------------------ conditions compiled to source

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text("ab", max_size=3))
_SCALAR_TYPES = ["null", "boolean", "integer", "string"]


@st.composite
def _value_conditions(draw: Any) -> dict[str, Any]:
    """A condition on one value: some of `type`, `const`/`enum` and string lengths."""
    condition: dict[str, Any] = {}
    if draw(st.booleans()):
        condition["type"] = draw(st.lists(st.sampled_from(_SCALAR_TYPES), min_size=1, max_size=3, unique=True))
    choice = draw(st.sampled_from(["none", "const", "enum"]))
    if choice == "const":
        condition["const"] = draw(_SCALARS)
    elif choice == "enum":
        condition["enum"] = draw(st.lists(_SCALARS, min_size=1, max_size=3))
    if draw(st.booleans()):
        condition["minLength"] = draw(st.integers(0, 2))
    if draw(st.booleans()):
        condition["maxLength"] = draw(st.integers(0, 2))
    return condition


@st.composite
def _object_conditions(draw: Any) -> dict[str, Any]:
    """A condition on the object: keys required, conditions on its values, perhaps negated."""
    condition: dict[str, Any] = {}
    if draw(st.booleans()):
        condition["required"] = draw(st.lists(st.sampled_from("ab"), max_size=2, unique=True))
    keys = draw(st.lists(st.sampled_from("ab"), max_size=2, unique=True))
    if keys:
        condition["properties"] = {key: draw(_value_conditions()) for key in keys}
    if draw(st.integers(0, 3)) == 0:
        condition["not"] = draw(_object_conditions())
    return condition


@st.composite
def _conditional_schemas(draw: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {key: {"type": _SCALAR_TYPES} for key in "abc"},
        "additionalProperties": False,
        "if": draw(_object_conditions()),
    }
    for word in ("then", "else"):
        if draw(st.booleans()):
            schema[word] = draw(_object_conditions())
    if draw(st.booleans()):
        schema["dependentRequired"] = {"c": draw(st.lists(st.sampled_from("ab"), min_size=1, unique=True))}
    return schema


@settings(max_examples=max(settings().max_examples, 100))
@given(_conditional_schemas(), st.dictionaries(st.sampled_from("abc"), _SCALARS))
def test_conditions_compiled_to_source_judge_as_the_schema_does(schema, instance):
    # Every value here is one a Struct decodes exactly, so the Struct must agree both ways.
    decoder = msgspec.json.Decoder(
        compile_schema({"$id": "https://gym-contract.dev/schemas/v1/c.schema.json", **schema})
    )
    try:
        decoder.decode(json.dumps(instance).encode())
        accepted = True
    except msgspec.ValidationError:
        accepted = False
    assert accepted == jsonschema.Draft202012Validator(schema).is_valid(instance), (schema, instance)
