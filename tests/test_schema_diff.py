"""`gym-contract schema diff`: each kind of change classified by the versioning policy, and v1 kept additive."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gym_contract import schemas
from gym_contract.schema_diff import changes, load_version, released_versions
from tests.support import REPO

BASE: dict[str, Any] = {
    "type": "object",
    "required": ["id"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1, "description": "the id"},
        "status": {"enum": ["ok", "failed"], "default": "ok"},
        "count": {"type": "integer", "minimum": 0, "maximum": 10},
        "ref": {"$ref": "common.schema.json#/$defs/A"},
        "item": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    },
    "$defs": {"Kept": {"type": "string", "pattern": "^[a-z]+$"}},
}


def edited(**edits: Any) -> dict[str, Any]:
    """BASE with each `path=value` set (path parts joined by `__`); a value of `...` removes the key."""
    schema = json.loads(json.dumps(BASE))
    for path, value in edits.items():
        *parents, last = path.split("__")
        node = schema
        for part in parents:
            node = node[part]
        if value is ...:
            del node[last]
        else:
            node[last] = value
    return schema


P = "properties"
CASES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    ("no change", edited(), []),
    ("new optional property", edited(**{f"{P}__note": {"type": "string"}}), [("additive", "/properties/note")]),
    (
        "new required property",
        edited(**{f"{P}__note": {"type": "string"}, "required": ["id", "note"]}),
        [("breaking", "/required"), ("breaking", "/properties/note")],
    ),
    ("property removed", edited(**{f"{P}__count": ...}), [("breaking", "/properties/count")]),
    ("optional made required", edited(required=["id", "count"]), [("breaking", "/required")]),
    ("required made optional", edited(required=[]), [("additive", "/required")]),
    ("type widened", edited(**{f"{P}__id__type": ["string", "null"]}), [("additive", "/properties/id/type")]),
    (
        "type narrowed",
        edited(**{f"{P}__count__type": "string"}),
        [("additive", "/properties/count/type"), ("breaking", "/properties/count/type")],
    ),
    ("type constraint removed", edited(**{f"{P}__id__type": ...}), [("additive", "/properties/id/type")]),
    (
        "enum widened",
        edited(**{f"{P}__status__enum": ["ok", "failed", "skipped"]}),
        [("additive", "/properties/status/enum")],
    ),
    ("enum narrowed", edited(**{f"{P}__status__enum": ["ok"]}), [("breaking", "/properties/status/enum")]),
    ("enum set where there was none", edited(**{f"{P}__id__enum": ["a"]}), [("breaking", "/properties/id/enum")]),
    ("lower bound lowered", edited(**{f"{P}__id__minLength": 0}), [("additive", "/properties/id/minLength")]),
    ("lower bound raised", edited(**{f"{P}__count__minimum": 1}), [("breaking", "/properties/count/minimum")]),
    ("upper bound raised", edited(**{f"{P}__count__maximum": 100}), [("additive", "/properties/count/maximum")]),
    ("upper bound lowered", edited(**{f"{P}__count__maximum": 5}), [("breaking", "/properties/count/maximum")]),
    ("bound removed", edited(**{f"{P}__count__maximum": ...}), [("additive", "/properties/count/maximum")]),
    ("bound added", edited(**{f"{P}__id__maxLength": 64}), [("breaking", "/properties/id/maxLength")]),
    (
        "description changed",
        edited(**{f"{P}__id__description": "the record's id"}),
        [("annotation", "/properties/id/description")],
    ),
    ("unknown keys allowed", edited(additionalProperties=True), [("additive", "/additionalProperties")]),
    ("refusal of unknown keys removed", edited(additionalProperties=...), [("additive", "/additionalProperties")]),
    ("default changed", edited(**{f"{P}__status__default": "failed"}), [("breaking", "/properties/status/default")]),
    (
        "reference changed",
        edited(**{f"{P}__ref__$ref": "common.schema.json#/$defs/B"}),
        [("breaking", "/properties/ref/$ref")],
    ),
    (
        "oneOf branch added",
        edited(**{f"{P}__item__oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}),
        [("additive", "/properties/item/oneOf/2")],
    ),
    (
        "oneOf branch removed",
        edited(**{f"{P}__item__oneOf": [{"type": "string"}]}),
        [("breaking", "/properties/item/oneOf/1")],
    ),
    ("allOf added", edited(**{f"{P}__id__allOf": [{"maxLength": 5}]}), [("breaking", "/properties/id/allOf/0")]),
    ("pattern added", edited(**{f"{P}__id__pattern": "^x"}), [("breaking", "/properties/id/pattern")]),
    ("pattern removed", edited(**{"$defs__Kept__pattern": ...}), [("additive", "/$defs/Kept/pattern")]),
    ("definition added", edited(**{"$defs__New": {"type": "integer"}}), [("additive", "/$defs/New")]),
    ("definition removed", edited(**{"$defs__Kept": ...}), [("breaking", "/$defs/Kept")]),
    (
        "nested type narrowed",
        edited(**{"$defs__Kept__type": "integer"}),
        [("additive", "/$defs/Kept/type"), ("breaking", "/$defs/Kept/type")],
    ),
    ("const set", edited(**{f"{P}__status__const": "ok"}), [("breaking", "/properties/status/const")]),
    ("dependency added", edited(dependentRequired={"count": ["status"]}), [("breaking", "/dependentRequired")]),
    (
        "keyword unknown to the classifier",
        edited(**{"x-origin": {"propertyName": "kind"}}),
        [("breaking", "/x-origin")],
    ),
    (
        "OpenAPI's discriminator, which no validator evaluates",
        edited(discriminator={"propertyName": "kind"}),
        [("annotation", "/discriminator")],
    ),
    (
        "property declared with no constraint where unknown keys are refused",
        edited(**{f"{P}__note": True}),
        [("additive", "/properties/note")],
    ),
    (
        "property declared with no constraint where every key is taken",
        edited(**{f"{P}__item__properties": {"note": {"description": "a note"}}}),
        [("annotation", "/properties/item/properties/note")],
    ),
    (
        "a condition loosened",
        edited(**{"if": {"required": ["count"]}, "then": {"required": ["status"]}}),
        [("breaking", "/if"), ("breaking", "/then")],
    ),
    (
        "not added",
        edited(**{f"{P}__id__not": {"const": "x"}}),
        [("breaking", "/properties/id/not")],
    ),
    (
        "pattern property added",
        edited(patternProperties={"^x_": {"type": "string"}}),
        [("breaking", "/patternProperties/^x_")],
    ),
    (
        "dependent schema added",
        edited(dependentSchemas={"count": {"required": ["status"]}}),
        [("breaking", "/dependentSchemas/count")],
    ),
    (
        "oneOf branch widened where two branches may then meet",
        edited(**{f"{P}__item__oneOf": [{"type": "string"}, {"type": ["integer", "string"]}]}),
        [("breaking", "/properties/item/oneOf/1/type")],
    ),
]


@pytest.mark.parametrize(("old_to_new", "new", "expected"), CASES, ids=[case[0] for case in CASES])
def test_each_change_has_the_verdict_of_the_versioning_policy(
    old_to_new: str, new: dict[str, Any], expected: list[tuple[str, str]]
):
    found = changes({"x.schema.json": BASE}, {"x.schema.json": new})
    assert sorted((change.verdict, change.path) for change in found) == sorted(expected), old_to_new


def test_a_property_defined_on_an_object_that_took_any_value_under_its_key_narrows_it():
    old = {"type": "object", "required": ["x"]}
    typed = {"type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}}
    assert [(c.verdict, c.path) for c in changes({"x.schema.json": old}, {"x.schema.json": typed})] == [
        ("breaking", "/properties/x")
    ]
    declared = {"type": "object", "required": ["x"], "properties": {"x": {"description": "the x"}}}
    assert [(c.verdict, c.path) for c in changes({"x.schema.json": old}, {"x.schema.json": declared})] == [
        ("annotation", "/properties/x")
    ]


def test_data_that_used_a_new_typed_key_of_an_open_schema_is_refused_so_the_change_breaks():
    """What `schema diff` calls breaking really refuses data the old schema took (checked with jsonschema)."""
    old = {"type": "object", "properties": {"id": {"type": "string"}}}
    new = {"type": "object", "properties": {"id": {"type": "string"}, "ts": {"type": "integer"}}}
    data = {"id": "a", "ts": "2024-01-01"}
    assert Draft202012Validator(old).is_valid(data)
    assert not Draft202012Validator(new).is_valid(data)
    assert [(c.verdict, c.path) for c in changes({"x.schema.json": old}, {"x.schema.json": new})] == [
        ("breaking", "/properties/ts")
    ]


def verdicts(old: Any, new: Any, **files: Any) -> list[tuple[str, str]]:
    found = changes({"x.schema.json": old, **files}, {"x.schema.json": new, **files})
    return [(change.verdict, change.path) for change in found if change.file == "x.schema.json"]


def test_what_a_not_takes_counts_the_other_way_round():
    old = {"type": "object", "not": {"required": ["a", "b"]}}
    assert verdicts(old, {"type": "object", "not": {"required": ["a"]}}) == [("breaking", "/not/required")]
    assert verdicts(old, {"type": "object", "not": {"required": ["a", "b", "c"]}}) == [("additive", "/not/required")]
    assert verdicts(old, {"type": "object"}) == [("additive", "/not")]


def test_a_type_that_every_branch_already_demands_changes_nothing():
    records = {
        "a.schema.json": {"type": "object", "properties": {"kind": {"const": "a"}}},
        "b.schema.json": {
            "$ref": "#/$defs/B",
            "$defs": {"B": {"type": "object", "properties": {"kind": {"const": "b"}}}},
        },
    }
    union = {"required": ["kind"], "oneOf": [{"$ref": "a.schema.json"}, {"$ref": "b.schema.json"}]}
    typed = {**union, "type": "object"}
    assert verdicts(union, typed, **records) == [("annotation", "/type")]
    assert verdicts(union, {**union, "type": "array"}, **records) == [("breaking", "/type")]
    loose = {"required": ["kind"], "oneOf": [{"$ref": "a.schema.json"}, {"minLength": 1}]}
    assert verdicts(loose, {**loose, "type": "object"}, **records) == [("breaking", "/type")]


def test_a_oneof_told_apart_by_a_required_tag_may_widen_a_branch():
    records = {
        "a.schema.json": {"type": "object", "properties": {"kind": {"const": "a"}}},
        "b.schema.json": {"type": "object", "properties": {"kind": {"const": "b"}, "n": {"maximum": 1}}},
    }
    widened = {
        **records,
        "b.schema.json": {"type": "object", "properties": {"kind": {"const": "b"}, "n": {"maximum": 9}}},
    }
    union = {"required": ["kind"], "oneOf": [{"$ref": "a.schema.json"}, {"$ref": "b.schema.json"}]}
    found = changes({"x.schema.json": union, **records}, {"x.schema.json": union, **widened})
    assert [(c.file, c.verdict) for c in found] == [("b.schema.json", "additive")]
    inline = {
        "oneOf": [
            {"properties": {"kind": {"const": "a"}}},
            {"properties": {"kind": {"const": "b"}, "n": {"maximum": 1}}},
        ]
    }
    wider = json.loads(json.dumps(inline))
    wider["oneOf"][1]["properties"]["n"]["maximum"] = 9
    assert verdicts({**inline, "required": ["kind"]}, {**wider, "required": ["kind"]}) == [
        ("additive", "/oneOf/1/properties/n/maximum")
    ]
    assert verdicts(inline, wider) == [("breaking", "/oneOf/1/properties/n/maximum")]


def test_declaring_a_property_counts_where_unevaluated_properties_may_see_it():
    old = {"unevaluatedProperties": False, "allOf": [{"properties": {"a": True}}]}
    new = {"unevaluatedProperties": False, "allOf": [{"properties": {"a": True, "b": True}}]}
    assert verdicts(old, new) == [("additive", "/allOf/0/properties/b")]


def test_unknown_keys_refused_where_they_were_allowed_breaks():
    loose = edited(additionalProperties=True)
    assert [(c.verdict, c.path) for c in changes({"x.schema.json": loose}, {"x.schema.json": BASE})] == [
        ("breaking", "/additionalProperties")
    ]


def test_files_and_gap_codes_added_are_additive_and_removed_are_breaking():
    registry = {"codes": [{"code": "a", "meaning": "x", "emitted_by": ["pi"]}, {"code": "b", "meaning": "y"}]}
    grown = {"codes": [{"code": "a", "meaning": "x, said better", "emitted_by": ["pi", "hermes"]}, {"code": "c"}]}
    found = changes(
        {"gap_codes.json": registry, "old.schema.json": BASE}, {"gap_codes.json": grown, "new.schema.json": BASE}
    )
    assert sorted((c.file, c.path, c.verdict) for c in found) == [
        ("gap_codes.json", "/codes/a/emitted_by", "additive"),
        ("gap_codes.json", "/codes/a/meaning", "annotation"),
        ("gap_codes.json", "/codes/b", "breaking"),
        ("gap_codes.json", "/codes/c", "additive"),
        ("new.schema.json", "", "additive"),
        ("old.schema.json", "", "breaking"),
    ]


def test_a_gap_detail_stated_where_none_was_is_additive_and_a_stated_one_changed_breaks():
    registry = {"codes": [{"code": "a", "detail": None}, {"code": "b", "detail": "call id"}, {"code": "c"}]}
    stated = {"codes": [{"code": "a", "detail": "call id"}, {"code": "b", "detail": "the call id"}, {"code": "c"}]}
    dropped = {"codes": [{"code": "a", "detail": None}, {"code": "b", "detail": None}, {"code": "c", "detail": 1}]}

    assert [(c.path, c.verdict) for c in changes({"gap_codes.json": registry}, {"gap_codes.json": stated})] == [
        ("/codes/a/detail", "additive"),
        ("/codes/b/detail", "breaking"),
    ]
    assert [(c.path, c.verdict) for c in changes({"gap_codes.json": registry}, {"gap_codes.json": dropped})] == [
        ("/codes/b/detail", "breaking"),
        ("/codes/c/detail", "breaking"),
    ]


def test_every_bundled_schema_compared_with_itself_has_no_change():
    current = load_version(schemas.directory())
    assert changes(current, current) == []


def test_v1_changes_only_additively_against_every_release_of_major_version_1():
    assert "1.0" in released_versions()
    current = load_version(schemas.directory())
    for version in released_versions():
        breaking = [c for c in changes(load_version(version), current) if c.verdict == "breaking"]
        assert breaking == [], f"schemas/v1 breaks {version}: {breaking}"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gym_contract", "schema", "diff", *args], capture_output=True, text=True, check=False
    )


def test_the_command_exits_1_on_a_breaking_change_and_says_where(tmp_path: Path):
    new = tmp_path / "v1"
    shutil.copytree(REPO / "schemas" / "v1", new)
    bundle = json.loads((new / "agent_observations.schema.json").read_text())
    bundle["properties"]["note"] = {"type": "string"}
    bundle["required"] = [*bundle.get("required", []), "note"]
    (new / "agent_observations.schema.json").write_text(json.dumps(bundle))
    result = run("1.0", str(new))
    assert result.returncode == 1
    assert "breaking    agent_observations.schema.json/properties/note: required property 'note' added" in result.stdout
    as_json = json.loads(run("1.0", str(new), "--format", "json").stdout)
    assert {
        "file": "agent_observations.schema.json",
        "path": "/required",
        "verdict": "breaking",
        "what": 'required gained "note"',
    } in as_json


def test_the_command_passes_on_the_released_version_and_refuses_what_it_cannot_read(tmp_path: Path):
    assert run("1.0").returncode == 0
    missing = run("0.9")
    assert missing.returncode == 2
    assert missing.stderr == "gym-contract: '0.9' is neither a folder nor a released version (released: 1.0)\n"
    (tmp_path / "x.schema.json").write_text("{not json")
    broken = run(str(tmp_path), "1.0")
    assert broken.returncode == 2
    assert broken.stderr.startswith("gym-contract: x.schema.json in ")
