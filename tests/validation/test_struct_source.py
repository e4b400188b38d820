"""The Structs written out as source are the compiled ones: in step with the schemas, field for field, verdict too."""

from __future__ import annotations

import json
import shutil
import typing
from functools import cache
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_contract import schemas
from gym_contract import strategies as contract
from gym_contract._vocabulary import ROLLOUT_ATTACHMENTS, SCHEMA_OF_KIND
from gym_contract.validation import _fastpath, _struct_source, _struct_types, _structs_v1
from tests.schema_instances import schema_instances
from tests.support import REPO
from tests.test_agreement import mutated

RECORD_SCHEMAS = sorted(SCHEMA_OF_KIND.values())


@cache
def _compiled() -> dict[str, Any]:
    """Each record schema's type as a compiler builds it now, from the schemas."""
    compiler = _struct_types._Compiler()
    return {name: compiler.for_uri(schemas.schema_id(name)) for name in RECORD_SCHEMAS}


def test_the_committed_module_is_what_the_schemas_and_the_compiler_give_now():
    source = _struct_source.render()
    # Another compiler numbers its helpers on from the first's: the module is written the same.
    assert _struct_source.render() == source
    fresh = _struct_source.formatted(source)
    committed = _struct_source.RENDERED.read_text(encoding="utf-8")
    assert committed == fresh, (
        f"{_struct_source.RENDERED.relative_to(REPO)} is out of step with the schemas or their compiler: "
        f"run {_struct_source.COMMAND}"
    )


def test_the_module_records_the_schemas_it_was_written_from():
    assert schemas._digest() == _structs_v1.SCHEMAS_DIGEST
    assert sorted(_structs_v1.SCHEMA_TYPES) == RECORD_SCHEMAS


@pytest.mark.parametrize("kind", sorted(SCHEMA_OF_KIND))
def test_the_fast_path_decodes_with_the_written_structs(kind):
    assert _struct_types.record_type(kind) is _structs_v1.SCHEMA_TYPES[SCHEMA_OF_KIND[kind]]


# ------------------------------------------------------------------ the same types


def _same(written: Any, compiled: Any, seen: set[tuple[int, int]]) -> None:
    """``written`` is ``compiled`` rebuilt: the same shape, and Structs of the same name, fields and options."""
    if isinstance(compiled, type) and issubclass(compiled, msgspec.Struct):
        assert isinstance(written, type), (written, compiled)
        assert issubclass(written, msgspec.Struct), (written, compiled)
        if (id(written), id(compiled)) not in seen:
            seen.add((id(written), id(compiled)))
            _same_struct(written, compiled, seen)
        return
    assert typing.get_origin(written) is typing.get_origin(compiled), (written, compiled)
    if typing.get_origin(compiled) is typing.Annotated:
        assert written.__metadata__ == compiled.__metadata__
        _same(written.__origin__, compiled.__origin__, seen)
    elif typing.get_origin(compiled) is typing.Literal:
        assert typing.get_args(written) == typing.get_args(compiled)
    elif typing.get_origin(compiled) is not None:
        assert len(typing.get_args(written)) == len(typing.get_args(compiled)), (written, compiled)
        for inner_written, inner_compiled in zip(typing.get_args(written), typing.get_args(compiled), strict=True):
            _same(inner_written, inner_compiled, seen)
    else:
        assert written is compiled, (written, compiled)


def _same_struct(written: Any, compiled: Any, seen: set[tuple[int, int]]) -> None:
    assert written.__name__ == compiled.__name__
    assert _options(written) == _options(compiled), written.__name__
    assert hasattr(written, "__post_init__") == hasattr(compiled, "__post_init__"), written.__name__
    written_fields, compiled_fields = msgspec.structs.fields(written), msgspec.structs.fields(compiled)
    assert len(written_fields) == len(compiled_fields), written.__name__
    for mine, theirs in zip(written_fields, compiled_fields, strict=True):
        assert (mine.name, mine.encode_name, mine.required) == (theirs.name, theirs.encode_name, theirs.required)
        assert mine.default is theirs.default
        _same(mine.type, theirs.type, seen)


def _options(struct: Any) -> dict[str, Any]:
    config = struct.__struct_config__
    return {name: getattr(config, name) for name in dir(config) if not name.startswith("_")}


@pytest.mark.parametrize("name", RECORD_SCHEMAS)
def test_every_written_struct_has_the_compiled_fields_names_and_options(name):
    seen: set[tuple[int, int]] = set()
    _same(_structs_v1.SCHEMA_TYPES[name], _compiled()[name], seen)
    assert seen  # Structs were compared, not merely two equal names


def test_the_annotations_of_every_written_struct_resolve_in_its_module():
    classes = [value for value in vars(_structs_v1).values() if isinstance(value, type)]
    structs = [value for value in classes if value.__module__ == _structs_v1.__name__]
    assert len(structs) > len(RECORD_SCHEMAS)
    for struct in structs:
        hints = typing.get_type_hints(struct, include_extras=True)
        assert set(hints) == set(struct.__struct_fields__)


# ------------------------------------------------------------------ the same verdicts


def _verdict(name: str, data: bytes, compiled: bool) -> bytes | None:
    """The record decoded and written again, or None when the Structs refuse it."""
    kind = _compiled()[name] if compiled else _structs_v1.SCHEMA_TYPES[name]
    try:
        return msgspec.json.encode(msgspec.json.decode(data, type=kind))
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None


def _agree(name: str, data: bytes) -> bool | None:
    """Asserts that both sets of Structs judge ``data`` alike; whether they accept it."""
    written = _verdict(name, data, compiled=False)
    assert written == _verdict(name, data, compiled=True), data[:200]
    return written is not None


@cache
def _records() -> list[tuple[str, bytes]]:
    """Every record of a known kind in the repository's JSONL files, and the attachments of its rollouts and of
    the conformance suite's expected documents."""
    found = []
    for path in sorted([*(REPO / "examples").rglob("*.jsonl"), *(REPO / "tests").rglob("*.jsonl")]):
        for line in path.read_bytes().splitlines():
            kind = _fastpath.kind_of(line)
            if kind == "rollout":
                found += _attachments(json.loads(line))
            elif kind is not None:
                found.append((SCHEMA_OF_KIND[kind], line))
    for path in sorted((REPO / "tests" / "conformance").rglob("expected.json")):
        found += _attachments(json.loads(path.read_bytes()))
    return found


def _attachments(document: Any) -> list[tuple[str, bytes]]:
    return [
        (SCHEMA_OF_KIND[attachment], json.dumps(document[key]).encode())
        for key, attachment in ROLLOUT_ATTACHMENTS.items()
        if isinstance(document, dict) and isinstance(document.get(key), dict)
    ]


def test_the_repositorys_records_are_judged_alike():
    records = _records()
    assert {name for name, _ in records} == set(RECORD_SCHEMAS)
    verdicts = [_agree(name, data) for name, data in records]
    assert True in verdicts  # both ways are exercised
    assert False in verdicts


@pytest.mark.parametrize("name", RECORD_SCHEMAS)
@settings(max_examples=20)
@given(data=st.data())
def test_instances_of_the_schemas_and_broken_ones_are_judged_alike(name, data):
    instance = data.draw(st.one_of(schema_instances(name), mutated(schema_instances(name))))
    _agree(name, json.dumps(instance).encode())


_DRAWN = {
    "agent_observations": contract.bundles(max_invocations=3),
    "trajectory": contract.trajectories(max_calls=3, max_invocations=3),
    "model_call_capture": contract.model_call_captures(max_calls=3),
    "capture_exchange": contract.capture_exchanges(),
    "agent_outcome": contract.agent_outcomes(),
}


@settings(max_examples=20)
@given(st.sampled_from(sorted(_DRAWN)).flatmap(lambda name: st.tuples(st.just(name), _DRAWN[name])))
def test_the_contract_strategies_records_are_judged_alike(drawn):
    name, record = drawn
    assert _agree(name, json.dumps(record).encode())


@settings(max_examples=20)
@given(contract.defects())
def test_the_contract_strategies_broken_records_are_judged_alike(defect):
    if defect.kind in SCHEMA_OF_KIND:
        _agree(SCHEMA_OF_KIND[defect.kind], defect.line)


# ------------------------------------------------------------------ stale types


def _clear_caches() -> None:
    for cached in (
        schemas._documents,
        schemas._documents_by_id,
        schemas.registry,  # it holds the documents read before: they would not be those read after
        schemas.validator,
        _struct_types._compiler,
        _struct_types._rendered,
        _struct_types.schema_type,
        _struct_types.record_decoder,
    ):
        cached.cache_clear()


@pytest.fixture
def edited_schemas(tmp_path, monkeypatch):
    """The bundled schemas with one edit the written Structs do not know: an outcome may no longer be incomplete."""
    folder = tmp_path / schemas.SCHEMA_VERSION
    shutil.copytree(schemas.directory(), folder)
    outcome = folder / "agent_outcome.schema.json"
    document = json.loads(outcome.read_text(encoding="utf-8"))
    document["properties"]["response_status"]["enum"].remove("incomplete")
    outcome.write_text(json.dumps(document), encoding="utf-8")
    monkeypatch.setattr(
        schemas, "_plain", lambda *parts: str(place) if (place := tmp_path.joinpath(*parts)).exists() else None
    )
    _clear_caches()
    yield
    monkeypatch.undo()
    _clear_caches()


def _outcome(status: str) -> bytes:
    record = {"harness": "opencode", "classifier": {"name": "c", "version": "1"}, "response_status": status}
    return json.dumps(record).encode()


def test_the_written_structs_take_an_incomplete_outcome():
    record = msgspec.json.decode(_outcome("incomplete"))
    assert schemas.validator("agent_outcome").is_valid(record)
    _struct_types.record_decoder("agent_outcome").decode(_outcome("incomplete"))


def test_an_edited_schema_is_compiled_afresh_rather_than_judged_by_stale_structs(edited_schemas):
    assert schemas._digest() != _structs_v1.SCHEMAS_DIGEST
    assert _struct_types.record_type("agent_outcome") is not _structs_v1.SCHEMA_TYPES["agent_outcome"]
    decoder = _struct_types.record_decoder("agent_outcome")
    decoder.decode(_outcome("failed"))
    with pytest.raises(msgspec.ValidationError):
        decoder.decode(_outcome("incomplete"))


# ------------------------------------------------------------------ opaque values


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    found = [prefix]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, inner in items:
        found += _paths(inner, (*prefix, key))
    return found


def test_opaque_values_are_where_they_are_with_the_compiled_structs(monkeypatch):
    records = [(kind, json.loads(data)) for kind, data in _records()[:200]]
    kinds = {name: kind for kind, name in SCHEMA_OF_KIND.items()}

    def opaque() -> list[bool]:
        return [_fastpath.opaque_at(kinds[name], path, record) for name, record in records for path in _paths(record)]

    written = opaque()
    monkeypatch.setattr(_struct_types, "record_type", lambda kind: _compiled()[SCHEMA_OF_KIND[kind]])
    assert opaque() == written
    assert True in written
    assert False in written
