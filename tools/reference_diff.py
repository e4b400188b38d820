"""Differential check against the reference: generated documents judged by our schemas and by NeMo Gym's models.

    python tools/reference_diff.py --reference-src GYM_CHECKOUT --reference-python GYM_PYTHON [-n 5000] [--seed 0]

GYM_PYTHON is an interpreter that can import the NeMo Gym checkout GYM_CHECKOUT (its own virtual
environment, never this package's). Documents of every kind the two share are drawn from
`gym_contract.strategies`, from hypothesis-jsonschema on our schemas, and from both with one value
changed (deleted, nulled, made negative, given another JSON type, or a string that breaks an id
pattern). Each is judged by our schema and by the reference (`tools/reference_verdicts.py`, run in
GYM_PYTHON); every disagreement is counted by class, and each class is marked with the place that
documents it (`docs/concepts/versioning.md`, "Differences from the reference implementation").
Exit 1 when a disagreement falls in no documented class. Not a test: it needs the reference here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gym_contract import iter_diagnostics, schemas  # noqa: E402
from gym_contract import strategies as contract  # noqa: E402
from tests.schema_instances import schema_instances  # noqa: E402

KINDS = (
    "model_call_ref",
    "agent_invocation",
    "tool_call_observation",
    "context_compaction",
    "sandbox_observation",
    "observation_gap",
    "agent_observations",
    "trajectory",
    "trajectory_model_call",
    "trajectory_turn",
    "trajectory_tool_call",
    "model_call_record",
    "conversation_item",
    "capture_exchange",
)
# Kinds whose cross-field rules our engine checks as diagnostics where the reference's model raises
# (a record on its own has its rules checked there too, once it is in a bundle or a trajectory).
ENGINE_KINDS = {"agent_observations": "bundle", "trajectory": "trajectory"}
# "[1, 2]" and "7": arguments text that parses to something other than an object.
ODD_VALUES: tuple[Any, ...] = (None, -1, -0.5, "", "a b", "-x", [], {}, True, 1.5, "x", 7, "[1, 2]", "7")


# ------------------------------------------------------------------------------------------ documents


def _parts(bundle: dict[str, Any], trajectory: dict[str, Any], capture: dict[str, Any]) -> list[tuple[str, Any]]:
    """The documents of every shared kind inside one drawn bundle, trajectory and capture."""
    found: list[tuple[str, Any]] = [("agent_observations", bundle), ("trajectory", trajectory)]
    by_kind = {
        "agent_invocation": "agent_invocation",
        "tool_call": "tool_call_observation",
        "context_compaction": "context_compaction",
        "sandbox": "sandbox_observation",
    }
    for record in bundle.get("records", []):
        found.append((by_kind.get(record.get("kind"), "agent_invocation"), record))
        for item in record.get("conversation", []) if record.get("kind") == "agent_invocation" else []:
            found.append(("conversation_item", item))
        for reference in record.get("model_calls", []):
            found.append(("model_call_ref", reference))
    found += [("observation_gap", gap) for gap in [*bundle.get("gaps", []), *trajectory.get("gaps", [])]]
    found += [("trajectory_turn", turn) for turn in trajectory.get("turns", [])]
    found += [("trajectory_model_call", call) for call in trajectory.get("model_calls", [])]
    found += [("trajectory_tool_call", call) for call in trajectory.get("tool_calls", [])]
    found += [("model_call_record", call) for call in capture.get("calls", [])]
    return found


@cache
def example_exchanges() -> list[dict[str, Any]]:
    """Every line of the example capture files: each dialect, with function calls and tool uses."""
    files = sorted((ROOT / "examples").rglob("*.capture.jsonl"))
    return [json.loads(line) for path in files for line in path.read_text().splitlines() if line.strip()]


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, path)]
    while stack:
        item, at = stack.pop()
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, child in children:
            found.append((*at, key))
            stack.append((child, (*at, key)))
    return found


def _changed(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with one value deleted or replaced by an odd one."""
    copy = json.loads(json.dumps(document))
    places = _places(copy)
    if not places:
        return draw(st.sampled_from(ODD_VALUES))
    # Numbers (bounds), and the fields a captured record copies out of a response's tool calls,
    # are changed more often than their share of the places.
    numbers = [path for path in places if _is_number(_at(copy, path))]
    copied = [path for path in places if path[-1] in ("arguments", "call_id", "name", "input")]
    favoured = draw(st.sampled_from([numbers, copied, copied, places]))
    path = draw(st.sampled_from(favoured or places))
    parent = _at(copy, path[:-1])
    if _is_number(parent[path[-1]]) and draw(st.booleans()):
        parent[path[-1]] = -parent[path[-1]] - 1
    elif isinstance(parent, dict) and draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(st.sampled_from(ODD_VALUES))
    return copy


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


@st.composite
def documents(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """A batch of documents: clean ones from our strategies or schemas, and each of them changed once."""
    if draw(st.integers(0, 9)) == 0:  # a whole rollout's documents: some thirty at once
        capture = draw(contract.model_call_captures())
        drawn = _parts(draw(contract.bundles()), draw(contract.trajectories()), capture)
        drawn.append(("capture_exchange", draw(contract.capture_exchanges())))
    else:
        kind = draw(st.sampled_from((*KINDS, "capture_exchange", "capture_exchange", "capture_exchange")))
        # Capture lines from the strategies and the examples hold realistic responses; the examples'
        # hold tool calls for the reference to derive.
        source = schema_instances(kind)
        if kind == "capture_exchange":
            source = draw(st.sampled_from([source, contract.capture_exchanges(), st.sampled_from(example_exchanges())]))
        drawn = [(kind, draw(source))]
    return [*drawn, *((kind, _changed(draw, document)) for kind, document in drawn)]


def copied_field_variants() -> list[tuple[str, Any]]:
    """Every example capture line with one field that a record copies from a tool call (`arguments`,
    `call_id`, `name`, `input`) replaced by each odd value: what a model's response may hold there."""
    found: list[tuple[str, Any]] = []
    for exchange in example_exchanges():
        for path in _places(exchange):
            if path[-1] not in ("arguments", "call_id", "name", "input") or "response" not in path:
                continue
            for value in ODD_VALUES:
                variant = json.loads(json.dumps(exchange))
                _at(variant, path[:-1])[path[-1]] = value
                found.append(("capture_exchange", variant))
    return found


def draw_documents(count: int, seed: int) -> list[tuple[str, Any]]:
    """``count`` documents: the copied-field variants of the example capture lines, then documents
    drawn in rounds of a hundred batches, each round under its own seed."""
    found: list[tuple[str, Any]] = copied_field_variants()[:count]

    @settings(max_examples=100, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(documents())
    def collect(batch: list[tuple[str, Any]]) -> None:
        found.extend(batch)

    rounds = 0
    while len(found) < count:
        hypothesis.seed(seed * 1_000_003 + rounds)(collect)()
        rounds += 1
    return found[:count]


# ------------------------------------------------------------------------------------------ verdicts


def reference_verdicts(python: str, checkout: str, drawn: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps({"kind": kind, "document": document}) + "\n" for kind, document in drawn)
    result = subprocess.run(
        [python, str(ROOT / "tools" / "reference_verdicts.py"), checkout],
        input=lines,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT / "tools",  # not the repository root: the reference must not import this package
    )
    return [json.loads(line) for line in result.stdout.splitlines()]


def _shape(path: Any) -> str:
    return "/" + "/".join("*" if isinstance(part, int) else str(part) for part in path)


def our_refusal(kind: str, document: Any) -> tuple[str, bool] | None:
    """Where (indices shown as `*`) and by which keyword our schema refuses ``document``, and whether the
    conversation item the refusal is in has neither `type` nor `role`; None when our schema takes it."""
    from jsonschema.exceptions import best_match

    error = best_match(schemas.validator(kind).iter_errors(document))
    if error is None:
        return None
    path = list(error.absolute_path)
    items = [document] if kind == "conversation_item" else []
    node = document
    for before, part in zip([None, *path], path, strict=False):
        node = node[part] if isinstance(node, (dict, list)) else None
        if before == "conversation" and isinstance(node, dict):
            items.append(node)
    untyped = any(isinstance(item, dict) and "type" not in item for item in items)
    return f"{_shape(path)} {error.validator}", untyped


def engine_errors(kind: str, document: Any) -> list[str]:
    """The codes of the errors our engine reports on a bundle or a trajectory (none for other kinds)."""
    engine_kind = ENGINE_KINDS.get(kind)
    if engine_kind is None:
        return []
    return sorted({d.code for d in iter_diagnostics(document, engine_kind) if d.severity == "error"})


# Each class of disagreement found, with the line of the differences list that documents it.
DOCUMENTED = {
    "coerced": "JSON types are never coerced",
    "untyped": "a conversation item without `type` is read only as a message",
    "rule": "cross-field rules are diagnostics of the engine",
    "conversation": "provider payloads inside conversation items are checked by JSON type only",
    "rollout_id": "a trajectory's rollout id keeps the pattern that names capture files",
    "negative": "counts, sizes and durations are never negative",
    "exchange": "a capture line is an object with `model_call_id`, `request` and `response` as written",
    "tool_calls": "a captured tool call has a string id and name and object arguments",
}


def classify(kind: str, document: Any, reference: dict[str, Any]) -> tuple[str, str] | None:
    """(class, detail) of a disagreement, or None when both verdicts agree. A record the reference
    derives from a capture line must be one our schema takes: the reference writes it into rollouts."""
    derived = reference.get("record")
    if derived is not None:
        refusal = our_refusal("model_call_record", derived)
        if refusal is not None:
            verdict = "negative" if refusal[0].endswith("minimum") else "written"
            return verdict, f"model_call_record derived by the reference: we refuse at {refusal[0]}"
    refusal = our_refusal(kind, document)
    ours, untyped = refusal if refusal is not None else (None, False)
    if reference["lax"] and ours is None:
        codes = engine_errors(kind, document)
        if codes == ["rollout_id_invalid"]:
            return "rollout_id", f"{kind}: engine {codes}"
        return ("engine", f"{kind}: engine {codes}") if codes else None
    if not reference["lax"] and ours is not None:
        return None
    if not reference["lax"]:
        error = reference["error"]
        if error["type"] == "value_error" and (kind not in ENGINE_KINDS or engine_errors(kind, document)):
            return "rule", f"{kind}: {error['msg']}"
        if any(str(part).startswith("NeMoGym") for part in error["loc"]):  # a field of a conversation item
            return "conversation", f"{kind}: the reference refuses {_shape(error['loc'])} ({error['type']})"
        return "laxer", f"{kind}: the reference refuses {_shape(error['loc'])} ({error['type']})"
    if not reference["strict"]:
        return "coerced", f"{kind}: {ours}"
    assert ours is not None
    if untyped:
        return "untyped", f"{kind}: {ours}"
    if ours.endswith(("minimum", "exclusiveMinimum")):
        return "negative", f"{kind}: {ours}"
    if kind == "capture_exchange":
        return "exchange", f"{kind}: {ours}"
    if kind == "model_call_record" and ours.startswith(("/tool_calls", "/calls")):
        return "tool_calls", f"{kind}: {ours}"
    return "stricter", f"{kind}: we refuse at {ours}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-src", required=True, help="a NeMo Gym checkout")
    parser.add_argument("--reference-python", required=True, help="an interpreter that can import it")
    parser.add_argument("-n", type=int, default=5000, help="documents to judge (default 5000)")
    parser.add_argument("--seed", type=int, default=0, help="the same seed draws the same documents")
    parser.add_argument("--show", type=int, default=3, help="examples to print per undocumented class")
    parser.add_argument("--details", action="store_true", help="also count every class by where it refuses")
    parser.add_argument("--dump", help="write every undocumented disagreement to this JSONL file")
    args = parser.parse_args(argv)
    drawn = draw_documents(args.n, args.seed)
    verdicts = reference_verdicts(args.reference_python, args.reference_src, drawn)
    classes: Counter[str] = Counter()
    details: Counter[tuple[str, str]] = Counter()
    examples: dict[str, list[Any]] = {}
    undocumented_lines: list[str] = []
    for (kind, document), reference in zip(drawn, verdicts, strict=True):
        found = classify(kind, document, reference)
        if found is None:
            continue
        classes[found[0]] += 1
        details[found] += 1
        examples.setdefault(found[1], []).append(document)
        if args.dump and found[0] not in DOCUMENTED:
            undocumented_lines.append(json.dumps({"detail": found[1], "document": document, "reference": reference}))
    print(f"{len(drawn)} documents; {sum(classes.values())} disagreements")
    for name, number in classes.most_common():
        print(f"{number:6}  {name:<12} {DOCUMENTED.get(name, 'NOT DOCUMENTED')}")
    if args.details:
        print()
        for (name, detail), number in sorted(details.items()):
            print(f"{number:6}  {name:<12} {detail}")
    if args.dump:
        Path(args.dump).write_text("".join(line + "\n" for line in undocumented_lines), encoding="utf-8")
    undocumented = [(found, number) for found, number in details.most_common() if found[0] not in DOCUMENTED]
    for (_, detail), number in undocumented:
        print(f"\n{number:6}  {detail}")
        for example in examples[detail][: args.show]:
            print("        " + json.dumps(example)[:400])
    return 1 if undocumented else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
