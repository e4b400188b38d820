"""The producer laws, over every registered producer: no artifact makes one raise but to refuse an input that is none
of its forms, every output keeps the contract, every gap code is registered for it, and observing is deterministic.

Each producer starts from its seed (tests/producers/seeds.py), real artifacts cut small; the
artifacts are then damaged — truncated, ill-typed, emptied, deleted, made enormous or deep, renamed
to hostile paths, replaced by symlinks out of the input or into a loop.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract._json_writing import dumps
from gym_contract.models import AgentObservationBundle
from gym_contract.producers import (
    COMMON_SUMMARY_FIELDS,
    Observed,
    Producer,
    RunSummary,
    UnrecognisedArtifactError,
    producers,
)
from gym_contract.reading._json_parsing import loads
from tests.producers.seeds import SEEDS, Seed
from tests.strategies import as_line, damaged_lines, json_values
from tests.support import REPO

PRODUCERS = {declared.name: declared for declared in producers()}
# Names a file may have on Linux that a path-handling bug trips over.
HOSTILE_NAMES = (
    "-rf.jsonl",
    "line\nbreak.jsonl",
    "tab\tand space .jsonl",
    " ",
    "ü-é-日本.jsonl",
    "\udcff-not-utf8.jsonl",
    "x" * 249 + ".jsonl",  # 255 bytes, the longest name Linux allows
    "..jsonl",
    "*.jsonl",
)
MARKER = b"OUTSIDE-THE-INPUT"
OUTSIDE_LINE = (
    b'{"type":"assistant","sessionId":"OUTSIDE-THE-INPUT","uuid":"OUTSIDE-THE-INPUT",'
    b'"message":{"role":"assistant","id":"OUTSIDE-THE-INPUT","content":"OUTSIDE-THE-INPUT"}}\n'
)


@cache
def registry_entries() -> list[dict[str, Any]]:
    """The gap registry's entries, as schemas/v1/gap_codes.json holds them."""
    entries: list[dict[str, Any]] = json.loads((REPO / "schemas" / "v1" / "gap_codes.json").read_text())["codes"]
    return entries


def registry() -> dict[str, set[str]]:
    """Gap code → the producers (`emitted_by`) the registry lists for it."""
    return {entry["code"]: set(entry["emitted_by"]) for entry in registry_entries()}


# ------------------------------------------------------------------------------------- damage


@st.composite
def damage(draw: st.DrawFn, seed: Seed) -> list[tuple[str, str, Any]]:
    """One to three harms, each to one of the seed's files: (harm, file, what it needs)."""
    harms = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(sorted(seed.files)))
        harm = draw(
            st.sampled_from(["truncate", "ill_typed", "empty", "delete", "enormous", "deep", "rename", "symlink_out"])
        )
        if harm == "truncate":
            harms.append((harm, name, draw(st.integers(0, max(0, len(seed.files[name]) - 1)))))
        elif harm == "ill_typed":
            line = draw(st.one_of(st.builds(as_line, json_values(max_leaves=8)), damaged_lines()))
            harms.append((harm, name, (draw(st.integers(0, 40)), line)))
        elif harm == "rename":
            harms.append((harm, name, draw(st.sampled_from(HOSTILE_NAMES))))
        else:
            harms.append((harm, name, None))
    return harms


def write(root: Path, name: str, content: bytes) -> Path:
    target = root / os.fsdecode(os.fsencode(name))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return target


def harmed(seed: Seed, harms: list[tuple[str, str, Any]]) -> dict[str, bytes | None]:
    """The seed's files after the harms that change content; None marks a deleted file."""
    files: dict[str, bytes | None] = dict(seed.files)
    for harm, name, argument in harms:
        content = files.get(name)
        if content is None:
            continue
        if harm == "truncate":
            files[name] = content[:argument]
        elif harm == "ill_typed":
            lines = content.splitlines()
            at, line = argument
            lines[min(at, len(lines)) : min(at, len(lines)) + 1] = [line]
            files[name] = b"\n".join(lines) + b"\n"
        elif harm == "empty":
            files[name] = b""
        elif harm == "delete":
            files[name] = None
        elif harm == "enormous":
            files[name] = content + as_line({"type": "assistant", "message": {"content": "x" * 2_000_000}}) + b"\n"
        elif harm == "deep":
            files[name] = content + b'{"type":"user","message":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    return files


@contextmanager
def artifacts(seed: Seed, harms: list[tuple[str, str, Any]]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The harmed artifacts on disk: the path to observe and the options, under a fresh input root."""
    with tempfile.TemporaryDirectory() as folder:
        outside = Path(folder) / "outside"
        outside.mkdir()
        (outside / "elsewhere.jsonl").write_bytes(OUTSIDE_LINE)
        root = Path(folder) / "input"
        root.mkdir()
        files = harmed(seed, harms)
        for name, content in files.items():
            if content is not None:
                write(root, name, content)
        for harm, name, argument in harms:
            where = root / name
            if harm == "rename" and where.is_file():
                where.rename(where.parent / argument)
            elif harm == "symlink_out" and where.parent.is_dir():
                where.unlink(missing_ok=True)
                where.symlink_to(outside / "elsewhere.jsonl")
                # And a directory that leads back up to the root: a loop for any walk that follows links.
                loop = where.parent / "loop"
                if not loop.exists():
                    loop.symlink_to(root, target_is_directory=True)
        options = {key: root / value for key, value in seed.options.items()}
        yield root / seed.path, options


def observed_bytes(declared: Producer, path: Path, options: dict[str, Any], process: dict[str, Any]) -> bytes:
    observed = declared.observe(path, model_ref="policy", **process, **options)
    assert isinstance(observed, Observed)
    return dumps(observed.document(), indent=True)


def observed_or_refused(declared: Producer, path: Path, options: dict[str, Any], process: dict[str, Any]) -> bytes:
    """The document's bytes, or `REFUSED` and what the refusal says when the input is none of the producer's forms."""
    try:
        return observed_bytes(declared, path, options, process)
    except UnrecognisedArtifactError as error:
        # A refusal says what was found instead; an empty reason would leave `REFUSED: ` alone.
        return REFUSED + (error.why.encode() or b"(no reason given)")


REFUSED = b"REFUSED: "
APPENDING = frozenset({"enormous", "deep"})
"""Harms that only add a line to a file."""


# ------------------------------------------------------------------------------------------ laws


def test_every_registered_producer_has_a_seed() -> None:
    assert set(SEEDS) == set(PRODUCERS)


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_the_seed_is_read_whole_and_clean(name: str) -> None:
    declared, seed = PRODUCERS[name], SEEDS[name]()
    with artifacts(seed, []) as (path, options):
        document = loads(observed_bytes(declared, path, options, {"exit_code": 0}))
    kinds = {record["kind"] for record in document["ng_agent_observations"]["records"]}
    # The seed exercises what the laws must keep whole: invocations, tool calls and a compaction.
    assert {"agent_invocation", "tool_call", "context_compaction"} <= kinds
    # A harness with subagents shows one in its seed; one without them says it cannot show any.
    gaps = {found["code"] for found in document["ng_agent_observations"]["gaps"]}
    assert document["run_summary"]["subagent_calls"] or "subagent_hierarchy_unavailable" in gaps


PROCESS = st.fixed_dictionaries({"exit_code": st.sampled_from([None, 0, 1, 137]), "timed_out": st.booleans()})


@pytest.mark.parametrize("name", sorted(PRODUCERS))
@given(data=st.data(), process=PROCESS)
def test_no_artifact_makes_a_producer_raise_and_every_output_keeps_the_contract(
    name: str, data: st.DataObject, process: dict[str, Any]
) -> None:
    declared, seed = PRODUCERS[name], SEEDS[name]()
    harms = data.draw(damage(seed), label="harms")
    with artifacts(seed, harms) as (path, options):
        first = observed_or_refused(declared, path, options, process)
        again = observed_or_refused(declared, path, options, process)
    if first.startswith(REFUSED):  # harm that left none of the producer's forms: refused, the same way each time
        assert first == again
        assert not first.endswith(b"(no reason given)")
        # A line added to an artifact is damage to it, never a reason to take it for something else.
        assert not all(harm in APPENDING for harm, _, _ in harms), first.decode()
        return
    assert breaches(declared, first, again) == []
    # A file the caller names is read wherever it leads; one found inside the input never leaves it.
    named = {seed.path, *seed.options.values()}
    if not any(harm == "symlink_out" and name in named for harm, name, _ in harms):
        assert MARKER not in first, "a file linked from outside the input was read"


def breaches(declared: Producer, first: bytes, again: bytes) -> list[str]:
    """The laws an output breaks, given the bytes of two observations of one input."""
    found = [] if first == again else ["not deterministic: the same input gave different bytes"]
    document = loads(first)
    found += [
        f"{key}{diagnostic.path}: {diagnostic.code}"
        for key, kind in (("ng_agent_observations", "bundle"), ("ng_agent_outcome", "agent_outcome"))
        if document[key] is not None
        for diagnostic in iter_diagnostics(document[key], kind)
        if diagnostic.severity == "error"
    ]
    bundle = document["ng_agent_observations"]
    if bundle.get("source") != declared.source:
        found.append(f"source {bundle.get('source')!r}, not {declared.source!r}")
    found += [
        f"gap {gap['code']} is not registered for {declared.source} in gap_codes.json"
        for gap in bundle.get("gaps", [])
        if declared.source not in registry().get(gap["code"], set())
    ]
    summary = document["run_summary"]
    if list(summary)[: len(COMMON_SUMMARY_FIELDS)] != list(COMMON_SUMMARY_FIELDS):
        found.append("the run summary does not start with the common fields")
    found += [
        f"run_summary.{name} is {summary.get(name)!r}"
        for name in COMMON_SUMMARY_FIELDS
        if not (summary.get(name) is None or summary[name] >= 0)
    ]
    return found


SHARED_MODULES = tuple(sorted((REPO / "gym_contract" / "producers").glob("_*.py")))
"""The producer kit and the readers producers share (`_kit.py`, `_pi_session.py`)."""


@dataclass(frozen=True)
class WrittenGap:
    """A gap a producer's source makes: its code, and whether it gives a detail."""

    code: str
    detailed: bool


def _gap_calls(tree: ast.AST) -> Iterator[WrittenGap]:
    """The gaps made in ``tree``: `gap("code", …)`, `ObservationGap(code="code")`, a code chosen by `a if c else b`."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if not name.lower().endswith("gap"):
            continue
        given = [*node.args[:1], *(keyword.value for keyword in node.keywords if keyword.arg == "code")]
        detail = [*node.args[2:3], *(keyword.value for keyword in node.keywords if keyword.arg == "detail")]
        detailed = any(not (isinstance(value, ast.Constant) and value.value is None) for value in detail)
        for argument in given:
            for choice in (argument.body, argument.orelse) if isinstance(argument, ast.IfExp) else (argument,):
                if isinstance(choice, ast.Constant) and isinstance(choice.value, str):
                    yield WrittenGap(choice.value, detailed)


def _names(tree: ast.AST) -> set[str]:
    return {
        node.id if isinstance(node, ast.Name) else node.attr
        for node in ast.walk(tree)
        if isinstance(node, (ast.Name, ast.Attribute))
    }


def written_gaps(package: Path) -> set[WrittenGap]:
    """The gaps a producer's source makes, its own package's and those of the shared functions it calls.

    A shared function counts when the package names it, or a shared function it counts names it:
    the kit's tool-interval gaps are Codex's and Claude Code's, not Pi's, which never calls it.
    """
    own = [ast.parse(path.read_text(encoding="utf-8")) for path in sorted(package.rglob("*.py"))]
    shared = {
        node.name: node
        for path in SHARED_MODULES
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef)
    }
    reached: set[str] = set()
    named = set().union(*(_names(tree) for tree in own))
    while named & set(shared) - reached:
        for function in named & set(shared) - reached:
            reached.add(function)
            named |= _names(shared[function])
    trees = [*own, *(shared[function] for function in sorted(reached))]
    return {found for tree in trees for found in _gap_calls(tree)}


def written_gap_codes(package: Path) -> set[str]:
    """The gap codes a producer's source makes, shared functions it calls included."""
    return {found.code for found in written_gaps(package)}


def package_of(declared: Producer) -> Path:
    return Path(importlib.import_module(declared.observe.__module__).__file__ or "").parent


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_every_gap_code_a_producer_writes_is_registered_for_it(name: str) -> None:
    # The property test sees the codes its damage reaches; this reads every one the source can make.
    declared = PRODUCERS[name]
    written = written_gap_codes(package_of(declared))

    assert written, "a producer names the gaps it reports"
    assert sorted(code for code in written if declared.source not in registry().get(code, set())) == []


WRITTEN_ELSEWHERE: dict[tuple[str, str], str] = {
    ("claude_code", "compaction_model_call_match_ambiguous"): (
        "written into a Claude Code bundle by the projection, which matches its compactions to the captured calls "
        "(gym_contract.evidence); the producer reads no capture"
    ),
    ("claude_code", "observation_parse_failed"): (
        "the reference agent application's, when its extraction raises; this producer raises on no artifact"
    ),
    ("pi", "observation_parse_failed"): (
        "the reference agent application's, when its extraction raises; this producer raises on no artifact"
    ),
    ("openclaw", "observation_capture_failed"): (
        "the reference agent application's, when capturing fails while the agent runs; this producer reads the "
        "files after the run"
    ),
}
"""Codes the registry lists for a producer's `source` that its bundles get from elsewhere, and from where."""


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_every_gap_code_the_registry_lists_for_a_producer_is_written_by_it_or_said_to_come_from_elsewhere(
    name: str,
) -> None:
    declared = PRODUCERS[name]
    written = written_gap_codes(package_of(declared))
    listed = {code for code, emitters in registry().items() if declared.source in emitters}
    elsewhere = {code for source, code in WRITTEN_ELSEWHERE if source == declared.source}

    assert sorted(listed - written - elsewhere) == []
    # An entry of the table is kept true: the code is still registered for the producer, and still not written by it.
    assert sorted(elsewhere - listed) == []
    assert sorted(elsewhere & written) == []


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_a_producer_gives_a_gap_a_detail_only_where_the_registry_says_what_it_holds(name: str) -> None:
    details = {entry["code"]: entry["detail"] for entry in registry_entries()}

    detailed = {found.code for found in written_gaps(package_of(PRODUCERS[name])) if found.detailed}

    assert sorted(code for code in detailed if details.get(code) is None) == []


def test_the_source_reader_sees_every_way_a_gap_is_made() -> None:
    tree = ast.parse(
        'gap("a")\ngap("b", owner, "x")\ngap("c" if k else "d", detail=None)\nObservationGap(code="e", detail=d)\n'
    )
    assert set(_gap_calls(tree)) == {
        WrittenGap("a", False),
        WrittenGap("b", True),
        WrittenGap("c", False),
        WrittenGap("d", False),
        WrittenGap("e", True),
    }
    # Pi reads sessions with the shared reader but never times a call with the kit's interval.
    pi = written_gap_codes(package_of(PRODUCERS["pi"]))
    assert "invalid_assistant_content" in pi
    assert "tool_start_missing" not in pi
    assert "tool_start_missing" in written_gap_codes(package_of(PRODUCERS["codex"]))


def test_the_laws_catch_an_output_that_breaks_them() -> None:
    declared = PRODUCERS["claude-code"]
    good = dumps(
        Observed(
            AgentObservationBundle.model_validate({"source": declared.source, "records": [], "gaps": []}),
            None,
            RunSummary(),
        ).document(),
        indent=True,
    )
    bad = dumps(
        Observed(
            AgentObservationBundle.model_validate(
                {"source": "elsewhere", "records": [], "gaps": [{"code": "made_up_gap"}]}
            ),
            None,
            RunSummary(tool_calls=-1),
        ).document(),
        indent=True,
    )

    assert breaches(declared, good, good) == []
    assert breaches(declared, good, bad)[0].startswith("not deterministic")
    assert breaches(declared, bad, bad) == [
        "source 'elsewhere', not 'claude_code'",
        "gap made_up_gap is not registered for claude_code in gap_codes.json",
        "run_summary.tool_calls is -1",
    ]


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_a_missing_or_empty_input_is_refused_as_none_of_the_forms(name: str, tmp_path: Path) -> None:
    declared = PRODUCERS[name]
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_bytes(b"")
    for path in (tmp_path / "absent", tmp_path / "empty", tmp_path / "file"):
        with pytest.raises(UnrecognisedArtifactError) as refused:
            declared.observe(path, model_ref="policy")
        assert refused.value.why
        assert str(refused.value).startswith(str(path))


def test_the_damage_reaches_the_disk_as_drawn() -> None:
    seed = SEEDS["claude-code"]()
    name = "config/projects/-home-user-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    harms = [("rename", name, "line\nbreak.jsonl"), ("symlink_out", "stream.jsonl", None)]
    with artifacts(seed, harms) as (path, options):
        assert (path / "projects" / "-home-user-spotter" / "line\nbreak.jsonl").is_file()
        assert options["stream"].is_symlink()
        assert options["stream"].read_bytes() == OUTSIDE_LINE
        assert (options["stream"].parent / "loop").resolve() == options["stream"].parent.resolve()
    shutil.rmtree(path, ignore_errors=True)
