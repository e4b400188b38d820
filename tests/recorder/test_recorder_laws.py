"""The recorder's laws, over any sequence of calls, misuse included: it never raises, what `finish` returns keeps the
contract, every gap it writes is registered for it, the same calls give the same bytes, and strict raises exactly where
the lenient recorder warns."""

from __future__ import annotations

import ast
import json
import math
import warnings
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract._json_writing import dumps
from gym_contract.producers import COMMON_SUMMARY_FIELDS, Observed
from gym_contract.recorder import CURRENT, Invocation, Recorder, RecorderError, RecorderWarning, ToolCall
from tests.support import REPO

BASE = 1_790_000_000.0
PACKAGE = REPO / "gym_contract" / "recorder"


@cache
def registered_for_recorder() -> frozenset[str]:
    document = json.loads((REPO / "schemas" / "v1" / "gap_codes.json").read_text())
    return frozenset(entry["code"] for entry in document["codes"] if "recorder" in entry["emitted_by"])


# ------------------------------------------------------------------------------------------- calls

ids = st.sampled_from(["root", "a", "b", "call_1", "call_2", None, "", 7])
times = st.one_of(st.none(), st.floats(BASE - 5, BASE + 50), st.sampled_from([math.nan, math.inf, "soon", True]))
statuses = st.sampled_from(["completed", "failed", "incomplete", "unknown", "timeout", "cancelled", "aborted", "bogus"])
texts = st.sampled_from([None, "x", "", 3])
picks = st.integers(0, 9)
named = st.one_of(st.none(), picks, st.sampled_from(["root", "ghost", "", 5]))

CALLS = st.one_of(
    st.tuples(
        st.just("invocation"),
        st.fixed_dictionaries(
            {
                "invocation_id": ids,
                "parent": st.one_of(st.just(CURRENT), named),
                "spawned_by": st.one_of(st.just(CURRENT), st.none(), picks.map(lambda i: ("tool", i)), ids),
                "started_at": times,
            }
        ),
    ),
    st.tuples(
        st.just("end_invocation"),
        st.fixed_dictionaries({"pick": picks, "status": statuses, "error_type": texts, "at": times}),
    ),
    st.tuples(
        st.just("enter"), st.fixed_dictionaries({"pick": picks, "kind": st.sampled_from(["invocation", "tool"])})
    ),
    st.tuples(
        st.just("exit"),
        st.fixed_dictionaries(
            {
                "pick": picks,
                "kind": st.sampled_from(["invocation", "tool", "compaction"]),
                "error": st.sampled_from([None, ValueError, TimeoutError, KeyboardInterrupt]),
            }
        ),
    ),
    st.tuples(
        st.just("model_call"),
        st.fixed_dictionaries(
            {
                "response_id": texts,
                "model_call_id": texts,
                "model_ref": st.sampled_from([None, "other", 3]),
                "invocation": named,
                "at": times,
            }
        ),
    ),
    st.tuples(
        st.just("tool"),
        st.fixed_dictionaries(
            {
                "tool_call_id": ids,
                "name": texts,
                "invocation": named,
                "timing_source": st.sampled_from(["executor", "harness", "artifact", "bogus"]),
                "started_at": times,
            }
        ),
    ),
    st.tuples(
        st.just("end_tool_handle"),
        st.fixed_dictionaries({"pick": picks, "status": statuses, "error_type": texts, "at": times}),
    ),
    st.tuples(
        st.just("end_tool"),
        st.fixed_dictionaries({"tool_call_id": ids, "status": statuses, "invocation": named, "at": times}),
    ),
    st.tuples(
        st.just("compaction"),
        st.fixed_dictionaries(
            {
                "trigger": texts,
                "tokens_before": st.sampled_from([None, 5, -1, True]),
                "invocation": named,
                "started_at": times,
            }
        ),
    ),
    st.tuples(
        st.just("end_compaction"),
        st.fixed_dictionaries(
            {
                "pick": picks,
                "outcome": statuses,
                "tokens_after": st.sampled_from([None, 4, -2]),
                "summary": texts,
                "first_kept_item_id": texts,
                "at": times,
            }
        ),
    ),
    st.tuples(
        st.just("sandbox"),
        st.fixed_dictionaries(
            {
                "role": st.sampled_from(["agent", "verifier", "judge"]),
                "outcome": statuses,
                "exit_code": st.sampled_from([None, 0, 137, 2**70, 1.5]),
                "wall_time_s": st.sampled_from([None, 1.5, -1, math.nan]),
            }
        ),
    ),
    st.tuples(
        st.just("gap"),
        st.fixed_dictionaries(
            {
                "code": st.sampled_from(["no_sandbox_runtime", "", 3]),
                "detail": texts,
                "invocation": named,
            }
        ),
    ),
    st.tuples(
        st.just("finish"),
        st.fixed_dictionaries(
            {
                "failure_kind": st.sampled_from([None, "model_request_error", "agent_timeout", "bogus", 4]),
                "status_code": st.sampled_from([None, 413, 429, 503, 418, "x", 2**80]),
            }
        ),
    ),
)
# A clock's steps: forward mostly, sometimes back, still, or no number at all.
CLOCK_STEPS = st.lists(st.sampled_from([0.25, 0.25, 1.0, 0.0, -3.0, math.nan]), min_size=1, max_size=6)


class Run:
    """One recorder driven by the drawn calls; handles are picked by index among those made so far."""

    def __init__(self, strict: bool, steps: list[float]) -> None:
        self.now, self.steps, self.tick = BASE, steps, 0
        self.recorder = Recorder(model_ref="policy", clock=self.clock, strict=strict)
        self.handles: dict[str, list[Any]] = {"invocation": [], "tool": [], "compaction": []}
        self.finished: list[Observed] = []
        self.explicit_gaps: set[Any] = set()

    def clock(self) -> float:
        step = self.steps[self.tick % len(self.steps)]
        self.tick += 1
        self.now += step
        return self.now

    def pick(self, kind: str, index: int) -> Any:
        made = self.handles[kind]
        return made[index % len(made)] if made else None

    def invocation(self, value: Any) -> Any:
        return self.pick("invocation", value) if isinstance(value, int) and not isinstance(value, bool) else value

    def apply(self, name: str, args: dict[str, Any]) -> None:
        recorder = self.recorder
        if name == "invocation":
            spawned = args["spawned_by"]
            if isinstance(spawned, tuple):
                spawned = self.pick("tool", spawned[1])
            parent = args["parent"] if args["parent"] is CURRENT else self.invocation(args["parent"])
            self.handles["invocation"].append(
                recorder.invocation(
                    args["invocation_id"], parent=parent, spawned_by=spawned, started_at=args["started_at"]
                )
            )
        elif name in ("end_invocation", "end_tool_handle", "end_compaction"):
            kind = {"end_invocation": "invocation", "end_tool_handle": "tool", "end_compaction": "compaction"}[name]
            handle = self.pick(kind, args.pop("pick"))
            if handle is not None:
                status = args.pop("status", None) or args.pop("outcome")
                handle.end(status, **args)
        elif name == "enter":
            handle = self.pick(args["kind"], args["pick"])
            if handle is not None:
                handle.__enter__()
        elif name == "exit":
            handle = self.pick(args["kind"], args["pick"])
            if handle is not None:
                error = args["error"]() if args["error"] is not None else None
                handle.__exit__(type(error) if error else None, error, None)
        elif name == "model_call":
            recorder.model_call(**{**args, "invocation": self.invocation(args["invocation"])})
        elif name == "tool":
            self.handles["tool"].append(recorder.tool(**{**args, "invocation": self.invocation(args["invocation"])}))
        elif name == "end_tool":
            recorder.end_tool(**{**args, "invocation": self.invocation(args["invocation"])})
        elif name == "compaction":
            made = recorder.compaction(**{**args, "invocation": self.invocation(args["invocation"])})
            self.handles["compaction"].append(made)
        elif name == "sandbox":
            recorder.sandbox(**args)
        elif name == "gap":
            self.explicit_gaps.add(args["code"])
            recorder.gap(**{**args, "invocation": self.invocation(args["invocation"])})
        elif name == "finish":
            outcome = recorder.outcome(args["failure_kind"], status_code=args["status_code"])
            self.finished.append(recorder.finish(outcome))


def lenient(calls: list[tuple[str, dict[str, Any]]], steps: list[float]) -> tuple[Run, list[int]]:
    """The calls run on a lenient recorder, then a last finish: the run, and the calls that warned (by index)."""
    run = Run(False, steps)
    warned = []
    for index, (name, args) in enumerate([*calls, ("finish", {"failure_kind": None, "status_code": None})]):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run.apply(name, dict(args))
        assert all(issubclass(w.category, RecorderWarning) for w in caught), [str(w.message) for w in caught]
        if caught:
            warned.append(index)
    return run, warned


def broken_laws(run: Run) -> Iterator[str]:
    for observed in run.finished:
        document = json.loads(dumps(observed.document()))
        for key, kind in (("ng_agent_observations", "bundle"), ("ng_agent_outcome", "agent_outcome")):
            for diagnostic in iter_diagnostics(document[key], kind):
                if diagnostic.severity == "error":
                    yield f"{key}{diagnostic.path}: {diagnostic.code} {diagnostic.message}"
        for gap in document["ng_agent_observations"]["gaps"]:
            if gap["code"] not in registered_for_recorder() and gap["code"] not in run.explicit_gaps:
                yield f"gap {gap['code']} is not registered for the recorder"
        summary = document["run_summary"]
        if list(summary) != list(COMMON_SUMMARY_FIELDS):
            yield f"run summary fields {list(summary)}"
        yield from (f"run_summary.{k} = {v!r}" for k, v in summary.items() if v is not None and not v >= 0)


# -------------------------------------------------------------------------------------------- laws


@given(calls=st.lists(CALLS, max_size=25), steps=CLOCK_STEPS)
def test_any_calls_give_valid_evidence_the_same_every_time(calls: list[Any], steps: list[float]) -> None:
    run, _ = lenient(calls, steps)
    assert list(broken_laws(run)) == []
    again, _ = lenient(calls, steps)
    assert [dumps(o.document()) for o in again.finished] == [dumps(o.document()) for o in run.finished]


@given(calls=st.lists(CALLS, max_size=25), steps=CLOCK_STEPS)
def test_strict_raises_exactly_where_the_lenient_recorder_warns(calls: list[Any], steps: list[float]) -> None:
    _, warned = lenient(calls, steps)
    run = Run(True, steps)
    raised_at, message = None, ""
    for index, (name, args) in enumerate([*calls, ("finish", {"failure_kind": None, "status_code": None})]):
        try:
            run.apply(name, dict(args))
        except RecorderError as error:
            raised_at, message = index, str(error)
            break
    assert raised_at == (warned[0] if warned else None)
    assert raised_at is None or message


def test_nothing_started_is_dropped_and_what_is_open_is_closed() -> None:
    run, warned = lenient(
        [
            ("invocation", {"invocation_id": None, "parent": None, "spawned_by": None, "started_at": None}),
            (
                "tool",
                {
                    "tool_call_id": "call_1",
                    "name": "bash",
                    "invocation": None,
                    "timing_source": "executor",
                    "started_at": None,
                },
            ),
            ("compaction", {"trigger": "auto", "tokens_before": 5, "invocation": None, "started_at": None}),
        ],
        [0.25],
    )
    observed = run.finished[-1]
    assert warned == []
    assert [
        (r.kind, getattr(r, "status", None) or getattr(r, "outcome", None)) for r in observed.observations.records
    ] == [
        ("agent_invocation", "incomplete"),
        ("tool_call", "incomplete"),
        ("context_compaction", "unknown"),
    ]
    assert [(g.code, g.invocation_id, g.detail) for g in observed.observations.gaps] == [
        ("tool_result_missing", "root", "call_1"),
        ("compaction_outcome_unavailable", "root", None),
        ("invocation_end_missing", "root", None),
        ("compaction_before_model_call_unavailable", "root", None),
        ("compaction_after_model_call_unavailable", "root", None),
    ]


def written_gap_codes() -> set[str]:
    """The codes the recorder's source writes: a gap tuple's first item, or a `code=` it passes on."""
    codes: set[str] = set()
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple) and len(node.elts) == 3:
                first = node.elts[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str) and "_" in first.value:
                    codes.add(first.value)
            elif isinstance(node, (ast.keyword, ast.arg)) and getattr(node, "arg", None) == "code":
                value = node.value if isinstance(node, ast.keyword) else None
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    codes.add(value.value)
    return codes


def test_every_gap_code_the_recorder_writes_is_registered_for_it() -> None:
    written = written_gap_codes()
    assert {"tool_result_missing", "duplicate_tool_call", "invocation_end_missing"} <= written
    assert sorted(written - registered_for_recorder()) == []
    assert "recorder_misuse" in registered_for_recorder()


@pytest.mark.parametrize("strict", [False, True])
def test_a_handle_of_another_recorder_is_misuse(strict: bool) -> None:
    other = Recorder().invocation("elsewhere")
    recorder = Recorder(strict=strict)
    if strict:
        with pytest.raises(RecorderError, match="belongs to another recorder"):
            recorder.tool("call_1", invocation=other)
        return
    with pytest.warns(RecorderWarning, match="belongs to another recorder"):
        call = recorder.tool("call_1", invocation=other)
    assert isinstance(call, ToolCall)
    assert call.invocation_id == "elsewhere"
    assert isinstance(other, Invocation)
