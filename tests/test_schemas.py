"""The schema files themselves: meta-schema, identifiers, descriptions, examples, registry behaviour."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import _WrappedReferencingError

from gym_contract import schemas
from tests.support import REPO, objects

SCHEMA_FILES = sorted((REPO / "schemas" / "v1").glob("*.schema.json"))
DOCUMENTS = {path.name.removesuffix(".schema.json"): json.loads(path.read_text()) for path in SCHEMA_FILES}
ENTITY_FILES = [
    "model_call_ref",
    "agent_invocation",
    "tool_call_observation",
    "context_compaction",
    "sandbox_observation",
    "observation_gap",
    "agent_observations",
    "trajectory",
    "model_call_record",
    "capture_exchange",
    "agent_outcome",
]


def test_every_entity_has_its_schema_file():
    assert set(ENTITY_FILES) <= set(DOCUMENTS)


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_schema_passes_the_draft_2020_12_meta_schema(name):
    Draft202012Validator.check_schema(DOCUMENTS[name])
    assert DOCUMENTS[name]["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_schema_id_carries_the_contract_version_and_file_name(name):
    assert DOCUMENTS[name]["$id"] == f"https://gym-contract.dev/schemas/v1/{name}.schema.json"


def _property_maps(document):
    """Every `properties` map of a schema, wherever it is nested: $defs, items, combinators, conditionals."""
    for path, node in objects(document):
        if isinstance(node.get("properties"), dict) and path[-1:] != ("properties",):
            yield path, node["properties"]


def _undocumented(document):
    return [
        "/".join(map(str, (*path, "properties", prop)))
        for path, props in _property_maps(document)
        for prop, subschema in props.items()
        # `true` declares a key in a condition (for strict validators) and says nothing of it.
        if subschema is not True and "description" not in subschema
    ]


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_every_property_has_a_description(name):
    assert _undocumented(DOCUMENTS[name]) == []


@pytest.mark.parametrize("keyword", ["if", "then", "else", "not", "allOf", "anyOf", "oneOf", "$defs", "items"])
def test_the_description_check_looks_inside_every_subschema_keyword(keyword):
    bare = {"properties": {"hidden": {"type": "string"}}}
    nested = {keyword: [bare] if keyword.endswith("Of") else {"Def": bare} if keyword == "$defs" else bare}
    assert _undocumented({"properties": {"outer": {"description": "documented", **nested}}}) != []


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_every_schema_has_examples(name):
    assert DOCUMENTS[name].get("examples"), f"{name} has no examples"


def _examples():
    for name in schemas.names():
        for index, example in enumerate(schemas.get(name).get("examples", [])):
            yield pytest.param(name, example, id=f"{name}-{index}")
    # Examples on $defs entries are checked against their own subschema too.
    for stem, document in DOCUMENTS.items():
        for def_name, subschema in document.get("$defs", {}).items():
            for index, example in enumerate(subschema.get("examples", [])):
                yield pytest.param(f"{stem}#/$defs/{def_name}", example, id=f"{stem}-{def_name}-{index}")


@pytest.mark.parametrize(("name", "example"), list(_examples()))
def test_every_example_validates(name, example):
    if "#" in name:
        stem, pointer = name.split("#")
        validator = Draft202012Validator({"$ref": f"{DOCUMENTS[stem]['$id']}#{pointer}"}, registry=schemas.registry())
    else:
        validator = schemas.validator(name)
    assert [error.message for error in validator.iter_errors(example)] == []


def test_names_cover_every_file_and_the_named_fragments():
    names = schemas.names()
    assert set(DOCUMENTS) <= set(names)
    assert {"conversation_item", "model_call_capture", "trajectory_turn"} <= set(names)


def test_get_returns_a_copy_that_callers_may_change():
    first = schemas.get("trajectory")
    first["title"] = "changed"
    assert schemas.get("trajectory")["title"] == "TrajectoryRecord"


def test_unknown_name_is_a_clear_error():
    with pytest.raises(schemas.UnknownSchemaError, match="no bundled schema named 'nope'"):
        schemas.get("nope")


def test_fragment_ids_point_into_their_file():
    assert schemas.schema_id("model_call_capture").endswith("model_call_record.schema.json#/$defs/ModelCallCapture")


def test_validators_resolve_relative_refs_across_files():
    bundle = {"source": "pi", "records": [{"kind": "agent_invocation", "invocation_id": "r", "model_calls": [{}]}]}
    errors = list(schemas.validator("agent_observations").iter_errors(bundle))
    assert errors, "an empty ModelCallRef inside a bundle must be rejected through two $refs"


def test_remote_refs_are_refused_not_fetched():
    validator = Draft202012Validator({"$ref": "https://example.com/elsewhere.json"}, registry=schemas.registry())
    with pytest.raises(_WrappedReferencingError) as caught:
        validator.is_valid({})
    chain, error = [], caught.value
    while error is not None:
        chain.append(error)
        error = error.__cause__ or error.__context__
    assert any(isinstance(link, schemas.RemoteReferenceError) for link in chain)


def test_every_ref_in_the_bundle_resolves_locally():
    resolver = schemas.registry().resolver()
    for name, document in DOCUMENTS.items():
        base = resolver.lookup(document["$id"]).resolver
        for _, node in objects(document):
            if isinstance(node.get("$ref"), str):
                assert base.lookup(node["$ref"]).contents is not None, (name, node["$ref"])


def test_lookup_finds_what_the_registry_finds_for_every_ref_in_the_bundle():
    # The compiler of the fast path's types follows references with `lookup`, the validators with the registry.
    resolver = schemas.registry().resolver()
    followed = 0
    for document in schemas._documents().values():
        base = resolver.lookup(document["$id"]).resolver
        for _, node in objects(document):
            if isinstance(node.get("$ref"), str):
                found = base.lookup(node["$ref"])
                contents, uri = schemas.lookup(node["$ref"], document["$id"])
                assert contents is found.contents
                assert schemas.lookup("#", uri)[0] is found.resolver.lookup("#").contents  # the same base
                followed += 1
    assert followed > 50


@pytest.mark.parametrize(
    ("reference", "base"),
    [
        ("https://example.com/elsewhere.json", ""),
        ("other.schema.json#/$defs/X", "https://gym-contract.dev/schemas/v1/trajectory.schema.json"),
        ("#/$defs/NoSuchDefinition", "https://gym-contract.dev/schemas/v1/trajectory.schema.json"),
        ("#anchor", "https://gym-contract.dev/schemas/v1/trajectory.schema.json"),
    ],
)
def test_lookup_refuses_what_the_bundle_does_not_hold(reference, base):
    with pytest.raises(schemas.RemoteReferenceError):
        schemas.lookup(reference, base)


def test_gap_code_registry_is_valid_sorted_and_unique():
    registry = json.loads((REPO / "schemas" / "v1" / "gap_codes.json").read_text())
    schemas.validator("gap_codes").validate(registry)
    codes = [entry["code"] for entry in registry["codes"]]
    assert codes == sorted(codes)
    assert len(codes) == len(set(codes))
    assert registry["contract_version"] == schemas.CONTRACT_VERSION


def test_gap_code_registry_holds_the_codes_the_engine_relies_on():
    known = schemas.gap_codes()
    for code in (
        "model_call_reference_unmatched",
        "model_call_reference_ambiguous",
        "model_call_reference_conflict",
        "model_call_ownership_unavailable",
        "model_calls_unavailable",
        "turns_unavailable",
        "conversation_unavailable",
        "trajectory_projection_failed",
        "model_call_capture_records_unreadable",
    ):
        assert code in known


def test_an_installed_wheel_ships_the_schemas():
    from importlib import metadata

    try:
        files = metadata.files("gym-contract") or []
    except metadata.PackageNotFoundError:
        pytest.skip("gym-contract is not installed")
    shipped = {str(path) for path in files}
    if not any(name.startswith("gym_contract/") and name.endswith(".py") for name in shipped):
        pytest.skip("gym-contract is installed in editable mode")
    for name in DOCUMENTS:
        assert f"gym_contract/_schemas/v1/{name}.schema.json" in shipped
    assert "gym_contract/_schemas/v1/gap_codes.json" in shipped
