"""Records that carry exactly one named diagnostic code: a clean record drawn, then broken in one way."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from gym_contract._json_writing import dumps
from gym_contract._vocabulary import CAPTURE, TRAJECTORY
from gym_contract.strategies._records import START, agent_outcomes, bundles, rollout_records


@dataclass(frozen=True)
class Defect:
    """A record (or a line of a JSONL file) that the engine reports with one diagnostic code, and no other."""

    code: str
    """The diagnostic code every diagnostic of this record has."""
    kind: str | None
    """The kind to check it as (`iter_diagnostics(record, kind)`, `--kind`); None: told from its shape."""
    record: Any
    """The record as a Python value; None when only its text can carry the defect (a repeated key, bad UTF-8)."""
    line: bytes
    """The record as one line of a JSONL file, without the newline."""


Breaker = Callable[[st.DrawFn], tuple[str | None, Any, bytes | None]]
"""Draws a broken record: its kind, the record (or None), and its line when the record cannot say it."""


def _text(record: Any) -> bytes:
    return dumps(record)


def _of_kind(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [record for record in records if record.get("kind") == kind]


def _tool(invocation: str, call_id: str, **timing: float) -> dict[str, Any]:
    return {"kind": "tool_call", "invocation_id": invocation, "tool_call_id": call_id, **timing}


def _with_records(draw: st.DrawFn, *added: dict[str, Any]) -> tuple[str, dict[str, Any], None]:
    """A clean bundle with ``added`` records among its own."""
    bundle = draw(bundles())
    bundle["records"] = [*bundle["records"], *added]
    return "bundle", bundle, None


def _bundle_with(draw: st.DrawFn, change: Callable[[dict[str, Any]], None]) -> tuple[str, dict[str, Any], None]:
    bundle = draw(bundles())
    change(bundle)
    return "bundle", bundle, None


def _root(bundle: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in bundle["records"] if r.get("invocation_id") == "root" and r["kind"] == "agent_invocation")


def _trajectory_with(draw: st.DrawFn, change: Callable[[dict[str, Any]], None]) -> tuple[str, dict[str, Any], None]:
    """A projected trajectory with a model call and a turn (from the harness's own trajectory), changed."""
    projected = rollout_records(max_calls=4).map(lambda r: r[TRAJECTORY])
    trajectory = draw(projected.filter(lambda t: t["model_calls"] and t["turns"]))
    change(trajectory)
    return "trajectory", trajectory, None


def _token_stats(trajectory: dict[str, Any]) -> dict[str, Any]:
    return dict(trajectory["model_calls"][0]["token_stats"])


def _retotal(trajectory: dict[str, Any]) -> None:
    stats = _token_stats(trajectory)
    stats["total_tokens"] = stats["total_tokens"] + 1
    trajectory["model_calls"][0]["token_stats"] = stats


def _overcache(trajectory: dict[str, Any]) -> None:
    stats = _token_stats(trajectory)
    stats["cached_tokens"] = stats["prompt_tokens"] + 1
    trajectory["model_calls"][0]["token_stats"] = stats


def _rename_rollout(trajectory: dict[str, Any]) -> None:
    trajectory["rollout_id"] = "rollout 7/0"
    for turn in trajectory["turns"]:
        turn["rollout_id"] = "rollout 7/0"


def _partial_metrics(draw: st.DrawFn) -> tuple[str, dict[str, Any], None]:
    """A capture whose reasoning tokens are known for one call of several, and summed all the same."""
    capture = draw(rollout_records(max_calls=4).map(lambda r: r[CAPTURE]).filter(lambda c: len(c["calls"]) > 1))
    reasoning = draw(st.integers(1, 500))
    capture["calls"][0]["tokens_reasoning"] = reasoning
    capture["metrics"]["tokens_reasoning"] = reasoning
    return "model_call_capture", capture, None


def _outcome(draw: st.DrawFn, **fields: Any) -> tuple[str, dict[str, Any], None]:
    return "agent_outcome", {**draw(agent_outcomes()), **fields}, None


def _repeated_key(draw: st.DrawFn) -> tuple[str, None, bytes]:
    bundle = draw(bundles())
    text = _text(bundle)
    return "bundle", None, b'{"source":' + dumps(bundle["source"]) + b"," + text[1:]


def _invalid_utf8(draw: st.DrawFn) -> tuple[str, None, bytes]:
    bundle = draw(bundles())
    bundle["source"] = "harness-NAME"
    return "bundle", None, _text(bundle).replace(b"NAME", b"\xff\xfe")


_BREAKERS: dict[str, Breaker] = {
    # The line itself.
    "json_invalid": lambda draw: ("bundle", None, _text(draw(bundles()))[:-1]),
    "utf8_invalid": _invalid_utf8,
    "json_duplicate_key": _repeated_key,
    "record_not_object": lambda draw: (None, draw(st.lists(bundles(1), min_size=1, max_size=2)), None),
    "kind_unknown": lambda draw: (None, {"greeting": draw(st.sampled_from(["hello", "bonjour"]))}, None),
    # A bundle.
    "schema_violation": lambda draw: _bundle_with(draw, lambda b: _root(b).update(surprise=True)),
    "invocation_id_duplicate": lambda draw: _bundle_with(draw, lambda b: b["records"].append(copy.deepcopy(_root(b)))),
    "invocation_parent_cycle": lambda draw: _bundle_with(draw, lambda b: _root(b).update(parent_invocation_id="root")),
    "tool_timing_reversed": lambda draw: _with_records(draw, _tool("root", "late", started_at=START + 9,
                                                                   completed_at=START + 1)),
    "invocation_reference_missing": lambda draw: _with_records(draw, _tool("elsewhere", "lost")),
    "parent_invocation_missing": lambda draw: _with_records(
        draw, {"kind": "agent_invocation", "invocation_id": "orphan", "parent_invocation_id": "unseen"}
    ),
    "spawned_by_tool_call_missing": lambda draw: _with_records(
        draw, {"kind": "agent_invocation", "invocation_id": "stray", "parent_invocation_id": "root",
               "spawned_by_tool_call_id": "never_called"}
    ),
    "tool_call_duplicate": lambda draw: _with_records(draw, _tool("root", "twice"), _tool("root", "twice")),
    "duration_mismatch": lambda draw: _with_records(draw, _tool("root", "slow", started_at=START,
                                                                completed_at=START + 1, duration_ms=5000.0)),
    "compaction_tokens_grew": lambda draw: _with_records(
        draw, {"kind": "context_compaction", "invocation_id": "root", "tokens_before": 900, "tokens_after": 1200}
    ),
    "gap_code_unknown": lambda draw: _bundle_with(draw, lambda b: b["gaps"].append({"code": "gap_nobody_registered"})),
    "timestamp_implausible": lambda draw: _with_records(draw, _tool("root", "ancient", started_at=100.0)),
    # A trajectory projected by the package.
    "model_call_id_duplicate": lambda draw: _trajectory_with(
        draw, lambda t: t["model_calls"].append(copy.deepcopy(t["model_calls"][0]))
    ),
    "turn_identity_mismatch": lambda draw: _trajectory_with(draw, lambda t: t["turns"][0].update(task_id="another")),
    "turn_number_duplicate": lambda draw: _trajectory_with(draw, lambda t: t["turns"].append(dict(t["turns"][0]))),
    "token_total_mismatch": lambda draw: _trajectory_with(draw, _retotal),
    "cached_tokens_exceed_prompt": lambda draw: _trajectory_with(draw, _overcache),
    "model_call_reference_dangling": lambda draw: _trajectory_with(
        draw, lambda t: t["turns"][0]["model_calls"].append({"model_call_id": "never_captured"})
    ),
    "rollout_id_invalid": lambda draw: _trajectory_with(draw, _rename_rollout),
    # A capture attachment, an outcome.
    "metrics_partial_sum": _partial_metrics,
    "outcome_status_inconsistent": lambda draw: _outcome(
        draw, response_status="completed", failure_kind="model_rate_limited", retryable=True,
        partial_work_retained=False
    ),
    "outcome_partial_work_missing": lambda draw: _outcome(
        draw, response_status="incomplete", failure_kind="model_context_limit", retryable=False,
        partial_work_retained=False
    ),
}  # fmt: skip

DEFECT_CODES: tuple[str, ...] = tuple(sorted(_BREAKERS))
"""The diagnostic codes `defects` can draw. The others are about reading files (`input_unreadable`,
`input_truncated`), a limit the caller sets (`line_too_long`), or a run that read no record (`no_records`)."""


@st.composite
def _defect(draw: st.DrawFn, code: str) -> Defect:
    kind, record, line = _BREAKERS[code](draw)
    return Defect(code, kind, record, line if line is not None else _text(record))


def defects(code: str | None = None) -> st.SearchStrategy[Defect]:
    """Records that the engine reports with ``code``, and with no other code; any of `DEFECT_CODES` when None.

    Each is a clean record of the kind the code is about, broken in one way: a bundle with an
    invocation that is its own parent, a trajectory whose tokens do not add up, a line with a
    repeated key. Raises `ValueError` for a code it cannot draw.
    """
    if code is None:
        return st.sampled_from(DEFECT_CODES).flatmap(_defect)
    if code not in _BREAKERS:
        raise ValueError(f"no defect strategy for {code!r}; known: {', '.join(DEFECT_CODES)}")
    return _defect(code)
