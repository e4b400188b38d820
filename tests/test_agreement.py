"""Schema and model agree: the JSON Schema validator and the generated model accept exactly the same data."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import schemas
from tests.schema_instances import schema_instances
from tests.support import dump, load, model_accepts, model_entities, objects

ENTITIES = model_entities()

WRONG_VALUES = [None, True, False, -1, 0, 1.5, -0.5, "", "text", "1", [], [1], {}, {"k": "v"}]
MUTATIONS = ("drop_key", "replace_value", "negative", "unknown_key", "bad_enum")


@st.composite
def mutated(draw: st.DrawFn, instances: st.SearchStrategy[Any]) -> Any:
    """A schema-generated instance with one structural fault put into one of its objects."""
    instance = copy.deepcopy(draw(instances))
    targets = list(objects(instance))
    if not targets:
        return draw(st.sampled_from(WRONG_VALUES))
    _, node = draw(st.sampled_from(targets))
    mutation = draw(st.sampled_from(MUTATIONS))
    keys = sorted(node)
    if mutation == "unknown_key" or not keys:
        node["unexpected_key"] = draw(st.sampled_from(WRONG_VALUES))
        return instance
    key = draw(st.sampled_from(keys))
    if mutation == "drop_key":
        del node[key]
    elif mutation == "replace_value":
        node[key] = draw(st.sampled_from(WRONG_VALUES))
    elif mutation == "negative":
        node[key] = draw(st.sampled_from([-1, -0.001, -(10**6)]))
    else:
        node[key] = "not_a_known_value"
    return instance


@cache
def _strategy(name: str) -> st.SearchStrategy[Any]:
    return schema_instances(name)


@pytest.mark.parametrize("name", sorted(ENTITIES))
def test_mutated_instances_are_judged_alike(name):
    validator, model = schemas.validator(name), ENTITIES[name]

    @given(mutated(_strategy(name)))
    def check(instance):
        assert validator.is_valid(instance) == model_accepts(model, instance), instance

    check()


@pytest.mark.parametrize("name", sorted(ENTITIES))
def test_generated_instances_are_judged_alike_and_round_trip(name):
    validator, model = schemas.validator(name), ENTITIES[name]

    @given(_strategy(name))
    def check(instance):
        # The generator does not know every keyword (dependentRequired), so verdicts are compared.
        valid = validator.is_valid(instance)
        assert valid == model_accepts(model, instance), instance
        if not valid:
            return
        loaded = load(model, instance)
        dumped = dump(model, loaded)
        assert validator.is_valid(dumped), "a model's dump must satisfy its own schema"
        reloaded = load(model, dumped)
        assert reloaded == loaded
        assert dump(model, reloaded) == dumped

    check()
