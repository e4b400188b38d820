"""Instances of the bundled schemas drawn by hypothesis-jsonschema, with its strategies built once per sub-schema."""

from __future__ import annotations

from functools import cache
from typing import Any

import hypothesis_jsonschema._from_schema as _library
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from hypothesis_jsonschema._canonicalise import encode_canonical_json

from tests.support import inline

_BUILD = "__from_schema"  # the library's builder of a strategy for one (sub-)schema


def _remember_built_strategies() -> None:
    """Build each sub-schema's strategy once instead of on every draw.

    hypothesis-jsonschema draws an object key by key and, for each key, canonicalises the property's
    schema and builds its strategy anew; with the contract's large inlined schemas that is 95 % of
    the suite's drawing time (27 s against 1.9 s for 30 agent invocations). The builder is a pure
    function of the schema, the alphabet and the custom formats, so its strategies can be shared;
    the drawn examples are the same either way.
    """
    build = getattr(_library, _BUILD)
    if getattr(build, "remembers", False):
        return
    built: dict[tuple[str, int, int], tuple[Any, Any, st.SearchStrategy[Any]]] = {}

    def remembered(schema: Any, *, alphabet: Any, custom_formats: Any) -> st.SearchStrategy[Any]:
        # Keyed on the identities of the alphabet and formats, which the entry keeps alive.
        key = (encode_canonical_json(schema), id(alphabet), id(custom_formats))
        entry = built.get(key)
        if entry is None:
            strategy = build(schema, alphabet=alphabet, custom_formats=custom_formats)
            entry = built[key] = (alphabet, custom_formats, strategy)
        return entry[2]

    remembered.remembers = True  # type: ignore[attr-defined]
    setattr(_library, _BUILD, remembered)


@cache
def schema_instances(name: str) -> st.SearchStrategy[Any]:
    """Values the bundled schema `name` is meant to accept (hypothesis-jsonschema does not know every keyword).

    Built on the first draw, not when a test module that names it in `@given` is imported: every
    process that collects the suite imports those modules, and building a large schema's strategy
    takes seconds that only the process running the test needs to spend.
    """
    return st.deferred(lambda: _built(name))


def _built(name: str) -> st.SearchStrategy[Any]:
    _remember_built_strategies()
    return from_schema(inline(name))
