"""The rules that rate one rollout's evidence V, O or X on each of the criteria C1–C7.

Every rule reads only fields that the fast path keeps: opaque payloads (model-call request and
response, tool output, a turn's question, answer and reasoning) reach the rules as raw bytes on
the fast path and as values on the others, so no rule reads them — a record gets the same
verdicts on every path. Records are read by attribute (`gym_contract._objects`): an absent field
reads as UNSET. Reasons are stable phrases naming the field or gap code that decided, so they can be
counted over a whole file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Literal

from gym_contract._objects import NO_MEMBERS, OBJECT_CLASSES, UNSET, DictObject, given, objects
from gym_contract._values import nonempty, number, text
from gym_contract._vocabulary import CAPTURED_TOKEN_FIELDS, TOKEN_FIELDS, token_count

Verdict = Literal["V", "O", "X"]

# Token counts a dialect's usage object carries beyond prompt, completion and total (CONTRACT §3.5.1):
# Responses usage always has input/output token details; Anthropic Messages reports cache reads but
# never reasoning tokens; Chat Completions' details objects are optional, so nothing more is expected.
EXTRA_TOKENS_BY_DIALECT: dict[str, tuple[str, ...]] = {
    "responses": ("reasoning_tokens", "cached_tokens"),
    "messages": ("cached_tokens",),
}
ALWAYS_EXPECTED_TOKENS = ("prompt_tokens", "completion_tokens", "total_tokens")
METADATA_FIELDS = ("dialect", "model", "status_code")
TURN_KNOWN_FIELDS = ("task_id", "rollout_id", "turn_no", "timestamp", "step_count", "resolved")
TURN_PAYLOAD_KEYS = ("question", "answer", "reasoning_content")
TOOL_TIMING_FIELDS = ("started_at", "completed_at", "duration_ms")
# What a V verdict says, the same for every rollout rated V.
FULL = {
    "C1": "every model call has dialect, model, status_code and token counts",
    "C2": "every model call has every token count its dialect reports",
    "C3": "every turn has every per-turn field",
    "C4": "every invocation has its conversation and owns its model calls",
    "C5": "every tool call has output, status, both timestamps and duration",
    "C6": "every tool call has its own interval",
    "C7": "agent-side evidence with its invocations",
}


@dataclass(frozen=True, slots=True)
class Evidence:
    """The parts of one rollout the rules read, taken from `ng_trajectory` when there is one."""

    model_calls: list[Any]
    invocations: list[Any]
    turns: list[Any]
    tool_calls: list[Any]
    gap_codes: frozenset[str]
    observations: bool
    """Whether the rollout's observation bundle holds a record."""


def evidence_of(record: Any, kind: str) -> Evidence:
    """A rollout's evidence: the trajectory when attached (it already merges the rest), else the raw parts."""
    trajectory = record if kind == "trajectory" else record.ng_trajectory
    bundle: Any = record.ng_agent_observations if kind == "rollout" else None
    capture: Any = record.ng_model_call_capture if kind == "rollout" else None
    bundle = bundle if type(bundle) in OBJECT_CLASSES else NO_MEMBERS
    capture = capture if type(capture) in OBJECT_CLASSES else NO_MEMBERS
    if type(trajectory) in OBJECT_CLASSES:
        return Evidence(
            model_calls=objects(trajectory.model_calls),
            invocations=objects(trajectory.invocations),
            turns=objects(trajectory.turns),
            tool_calls=objects(trajectory.tool_calls),
            gap_codes=_codes(objects(trajectory.gaps)),
            observations=_holds_object(bundle.records),
        )
    observation_records = objects(bundle.records)
    return Evidence(
        model_calls=[_from_capture(call) for call in objects(capture.calls)],
        invocations=[r for r in observation_records if r.kind == "agent_invocation"],
        turns=[],
        tool_calls=[r for r in observation_records if r.kind == "tool_call"],
        gap_codes=_codes(objects(bundle.gaps) + objects(capture.gaps)),
        observations=bool(observation_records),
    )


def _from_capture(call: Any) -> DictObject:
    """A captured call seen through the trajectory's field names, as projection maps them (CONTRACT §2.3)."""
    return DictObject(
        {
            "model_call_id": call.model_call_id,
            "response_metadata": {name: getattr(call, name) for name in (*METADATA_FIELDS, "model_ref", "response_id")},
            "token_stats": {name: getattr(call, source) for source, name in CAPTURED_TOKEN_FIELDS.items()},
        }
    )


def _codes(gaps: list[Any]) -> frozenset[str]:
    return frozenset(code for gap in gaps if isinstance(code := gap.code, str))


@cache
def _criteria_of_gap() -> dict[str, frozenset[str]]:
    from gym_contract import schemas  # read when the first rollout is rated

    return {code: frozenset(entry.get("criteria") or ()) for code, entry in schemas.gap_codes().items()}


@lru_cache(maxsize=4096)  # a file's rollouts report few distinct sets of gaps, and every rollout is rated
def gaps_against(criterion: str, codes: frozenset[str]) -> tuple[str, ...]:
    """Gap codes of the rollout that the registry lists under ``criterion``, as reasons."""
    registry = _criteria_of_gap()
    return tuple(f"gap {code}" for code in sorted(codes) if criterion in registry.get(code, ()))


def known(value: Any) -> bool:
    return given(value)


def is_count(value: Any) -> bool:
    return token_count(value) is not None


def rate(
    full: str, problems: Iterable[str], gaps: tuple[str, ...], *, unavailable: str | None = None
) -> tuple[Verdict, tuple[str, ...]]:
    """X with its reason when ``unavailable`` is set; else V unless a field problem or a gap leaves it at O."""
    if unavailable is not None:
        return "X", (unavailable, *gaps)
    reasons = (*dict.fromkeys(problems), *gaps)
    return ("O", reasons) if reasons else ("V", (full,))


# ------------------------------------------------------------------------------------------ criteria


def c1(evidence: Evidence) -> tuple[Verdict, tuple[str, ...]]:
    problems: list[str] = []
    for call in evidence.model_calls:
        metadata = _sub(call, "response_metadata")
        problems += [
            f"model call without response_metadata.{name}"
            for name in METADATA_FIELDS
            if not known(getattr(metadata, name))
        ]
        stats = _sub(call, "token_stats")
        if not any(is_count(getattr(stats, name)) for name in TOKEN_FIELDS):
            problems.append("model call without any token_stats count")
    gaps = gaps_against("C1", evidence.gap_codes)
    unavailable = None if evidence.model_calls else "no model calls"
    return rate(FULL["C1"], problems, gaps, unavailable=unavailable)


def c2(evidence: Evidence) -> tuple[Verdict, tuple[str, ...]]:
    problems: list[str] = []
    counted = 0
    for call in evidence.model_calls:
        stats = _sub(call, "token_stats")
        counted += any(is_count(getattr(stats, name)) for name in TOKEN_FIELDS)
        dialect = _sub(call, "response_metadata").dialect
        problems += [
            f"token_stats.{name} unknown" for name in ALWAYS_EXPECTED_TOKENS if not is_count(getattr(stats, name))
        ]
        for name in EXTRA_TOKENS_BY_DIALECT.get(dialect, ()) if isinstance(dialect, str) else ():
            if not is_count(getattr(stats, name)):
                problems.append(f"token_stats.{name} unknown ({dialect} dialect reports it)")
    gaps = gaps_against("C2", evidence.gap_codes)
    unavailable = (
        "no model calls" if not evidence.model_calls else None if counted else "no model call has a token count"
    )
    return rate(FULL["C2"], problems, gaps, unavailable=unavailable)


def c3(evidence: Evidence) -> tuple[Verdict, tuple[str, ...]]:
    turns = evidence.turns
    # One pass over every turn and field each (a comprehension per field costs more than its reads).
    nulls = {name for turn in turns for name in TURN_KNOWN_FIELDS if getattr(turn, name) in _NO_VALUE}
    missing = {name for turn in turns for name in TURN_PAYLOAD_KEYS if getattr(turn, name) is UNSET}
    problems = [f"turns[].{name} null" for name in TURN_KNOWN_FIELDS if name in nulls]
    problems += [f"turns[].{name} missing" for name in TURN_PAYLOAD_KEYS if name in missing]
    gaps = gaps_against("C3", evidence.gap_codes)
    unavailable = None if evidence.turns else "no turns"
    return rate(FULL["C3"], problems, gaps, unavailable=unavailable)


def c4(evidence: Evidence) -> tuple[Verdict, tuple[str, ...]]:
    with_conversation = [inv for inv in evidence.invocations if _holds_object(inv.conversation)]
    problems: list[str] = []
    if len(with_conversation) < len(evidence.invocations):
        problems.append("invocation with an empty conversation")
    owned_ids = _owned_ids(evidence.invocations)
    owned_keys: set[tuple[Any, Any, Any]] | None = None  # read only for a call that no reference names by id
    for call in evidence.model_calls:
        call_id = call.model_call_id
        if isinstance(call_id, str) and call_id in owned_ids:
            continue
        if owned_keys is None:
            owned_keys = _owned_keys(evidence.invocations)
        if _ref_key(_sub(call, "response_metadata")) not in owned_keys:
            problems.append("model call that no invocation's model_calls reference resolves to")
    gaps = gaps_against("C4", evidence.gap_codes)
    unavailable = None if with_conversation else "no invocation with a conversation"
    return rate(FULL["C4"], problems, gaps, unavailable=unavailable)


def c5(evidence: Evidence) -> tuple[Verdict, tuple[str, ...]]:
    outputs = _tool_outputs(evidence.invocations, _owners(evidence.tool_calls))
    problems: list[str] = []
    for tool in evidence.tool_calls:
        invocation_id, tool_call_id = tool.invocation_id, tool.tool_call_id
        if not (type(invocation_id) is str and type(tool_call_id) is str and (invocation_id, tool_call_id) in outputs):
            problems.append("tool call without a function_call_output in its invocation's conversation")
        if tool.status in _STATUS_UNKNOWN:
            problems.append("tool_calls[].status unknown")
        for name in TOOL_TIMING_FIELDS:
            if getattr(tool, name) in _NO_VALUE:
                problems.append(f"tool_calls[].{name} null")
    gaps = gaps_against("C5", evidence.gap_codes)
    unavailable = None if evidence.tool_calls else "no tool calls"
    return rate(FULL["C5"], problems, gaps, unavailable=unavailable)


def c6(evidence: Evidence) -> tuple[Verdict, tuple[str, ...]]:
    intervals = [_interval(tool) for tool in evidence.tool_calls]
    timed = [interval for interval in intervals if interval is not None]
    problems: list[str] = []
    if len(timed) < len(intervals):
        problems.append("tool call without its own started_at and completed_at")
    # Overlapping calls stamped with one identical interval were timed together, not each on its own.
    shared = Counter(interval for interval in timed if interval[1] > interval[0])
    if any(count > 1 for count in shared.values()):
        problems.append("overlapping tool calls share one identical interval")
    gaps = gaps_against("C6", evidence.gap_codes)
    unavailable = (
        "no tool calls"
        if not evidence.tool_calls
        else None
        if timed
        else "no tool call has started_at and completed_at"
    )
    return rate(FULL["C6"], problems, gaps, unavailable=unavailable)


def c7(evidence: Evidence) -> tuple[Verdict, tuple[str, ...]]:
    agent_side = evidence.observations or evidence.invocations or evidence.turns or evidence.tool_calls
    problems = [] if evidence.invocations else ["no agent invocation"]
    gaps = gaps_against("C7", evidence.gap_codes)
    unavailable = None if agent_side else "no agent-side evidence (observations, invocations, turns or tool calls)"
    return rate(FULL["C7"], problems, gaps, unavailable=unavailable)


RULES = {"C1": c1, "C2": c2, "C3": c3, "C4": c4, "C5": c5, "C6": c6, "C7": c7}
# A field with no value, absent or null, told by `in` rather than by a call of `given` per field and
# rollout (measured: the calls cost 1–3 ms in 20 of the report's time per 200 rollouts on Python 3.10).
_NO_VALUE = (UNSET, None)
_STATUS_UNKNOWN = (None, UNSET, "unknown")


# ------------------------------------------------------------------------------------------ quick checks
# Most rollouts are complete, and coverage runs inside `gym-contract validate`: these say "V" for the
# common case in one cheap pass per list, and leave everything else (and every reason) to the rules above.
# They may only answer True when the rule would find no field problem and the evidence available (V, or
# O for the rollout's gaps alone); any odd shape raises and falls back to the rule. A field that is
# absent (UNSET) or null fails a check as a missing key did.


_EXPECTED_TOKENS = {dialect: (*ALWAYS_EXPECTED_TOKENS, *extra) for dialect, extra in EXTRA_TOKENS_BY_DIALECT.items()}


def _calls_complete(evidence: Evidence) -> bool:
    for call in evidence.model_calls:
        metadata, stats = call.response_metadata, call.token_stats
        if metadata.dialect in _NO_VALUE or metadata.model in _NO_VALUE or metadata.status_code in _NO_VALUE:
            return False
        for name in _EXPECTED_TOKENS.get(metadata.dialect, ALWAYS_EXPECTED_TOKENS):
            value = getattr(stats, name)
            if type(value) is not int or value < 0:
                return False
    return bool(evidence.model_calls)


def _turns_complete(evidence: Evidence) -> bool:
    for turn in evidence.turns:
        if turn.resolved in _NO_VALUE or turn.step_count in _NO_VALUE or turn.timestamp in _NO_VALUE:
            return False
        if turn.turn_no in _NO_VALUE or turn.task_id in _NO_VALUE or turn.rollout_id in _NO_VALUE:
            return False
        if turn.question is UNSET or turn.answer is UNSET or turn.reasoning_content is UNSET:
            return False
    return bool(evidence.turns)


def _history_complete(evidence: Evidence) -> bool:
    for invocation in evidence.invocations:
        conversation = invocation.conversation
        if type(conversation) is not list or not conversation or type(conversation[0]) not in OBJECT_CLASSES:
            return False
    # Calls are usually referenced by model_call_id; the (model_ref, response_id) keys are read only for
    # the calls that no id reference owns.
    owned_ids = {ref.model_call_id for invocation in evidence.invocations for ref in invocation.model_calls}
    unowned = [
        call
        for call in evidence.model_calls
        if not (type(call_id := call.model_call_id) is str and call_id and call_id in owned_ids)
    ]
    if unowned:
        owned_ids, owned_keys = _owned_ids(evidence.invocations), _owned_keys(evidence.invocations)
        for call in unowned:
            if call.model_call_id not in owned_ids and _ref_key(call.response_metadata) not in owned_keys:
                return False
    return bool(evidence.invocations)


def _tools_complete(evidence: Evidence) -> bool:
    outputs = _tool_outputs(evidence.invocations, _owners(evidence.tool_calls))
    for tool in evidence.tool_calls:
        if tool.status in _STATUS_UNKNOWN or (tool.invocation_id, tool.tool_call_id) not in outputs:
            return False
        if tool.started_at in _NO_VALUE or tool.completed_at in _NO_VALUE or tool.duration_ms in _NO_VALUE:
            return False
    return bool(evidence.tool_calls)


def _timing_complete(evidence: Evidence) -> bool:
    intervals = set()
    for tool in evidence.tool_calls:
        started, completed = tool.started_at, tool.completed_at
        if type(started) is not float or type(completed) is not float or completed <= started:
            return False  # ints, reversed or empty intervals: the rule decides
        intervals.add((started, completed))
    return len(intervals) == len(evidence.tool_calls) > 0


def _agent_side_complete(evidence: Evidence) -> bool:
    return bool(evidence.invocations)


QUICK_CHECKS = {
    "C1": _calls_complete,
    "C2": _calls_complete,
    "C3": _turns_complete,
    "C4": _history_complete,
    "C5": _tools_complete,
    "C6": _timing_complete,
    "C7": _agent_side_complete,
}


@lru_cache(maxsize=4096)
def gapped_criteria(codes: frozenset[str]) -> frozenset[str]:
    """Criteria that at least one of the rollout's gaps weakens, by the registry."""
    if not codes:
        return frozenset()
    registry = _criteria_of_gap()
    return frozenset(criterion for code in codes for criterion in registry.get(code, ()))


def quickly_complete(criteria: Iterable[str], evidence: Evidence) -> set[str]:
    """The criteria among ``criteria`` that the quick checks prove V; each check runs at most once."""
    proven: set[str] = set()
    answers: dict[Any, bool] = {}
    for criterion in criteria:
        check = QUICK_CHECKS[criterion]
        if check not in answers:
            try:
                answers[check] = check(evidence)
            except (KeyError, TypeError, AttributeError):
                answers[check] = False
        if answers[check]:
            proven.add(criterion)
    return proven


# ------------------------------------------------------------------------------------------ helpers


def _sub(holder: Any, key: str) -> Any:
    value = getattr(holder, key)
    return value if type(value) in OBJECT_CLASSES else NO_MEMBERS


def _ref_key(holder: Any) -> tuple[Any, Any, Any] | None:
    """(model_ref.type, model_ref.name, response_id) when all are there: the join key without a call id."""
    model_ref, response_id = holder.model_ref, nonempty(holder.response_id)
    if type(model_ref) not in OBJECT_CLASSES or response_id is None:
        return None
    server_type, name = text(model_ref.type), text(model_ref.name)
    return (server_type, name, response_id) if server_type is not None and name is not None else None


def _owned_ids(invocations: list[Any]) -> set[str]:
    """The model_call_ids the invocations' references name."""
    return {
        call_id
        for invocation in invocations
        for ref in objects(invocation.model_calls)
        if (call_id := nonempty(ref.model_call_id)) is not None
    }


def _owned_keys(invocations: list[Any]) -> set[tuple[Any, Any, Any]]:
    """The (model_ref, response_id) join keys the invocations' references name."""
    return {
        key
        for invocation in invocations
        for ref in objects(invocation.model_calls)
        if (key := _ref_key(ref)) is not None
    }


def _holds_object(value: Any) -> bool:
    """Whether ``value`` is a list with an object in it (a conversation that says something)."""
    return type(value) is list and any(type(item) in OBJECT_CLASSES for item in value)


def _tool_outputs(invocations: list[Any], owners: set[str]) -> set[tuple[str, str]]:
    """(invocation_id, call_id) of the `function_call_output` items of the invocations that own tool calls."""
    found: set[tuple[str, str]] = set()
    for invocation in invocations:
        invocation_id, conversation = invocation.invocation_id, invocation.conversation
        if type(invocation_id) is str and invocation_id in owners and type(conversation) is list:
            found.update(
                [
                    (invocation_id, call_id)
                    for item in conversation
                    if type(item) in OBJECT_CLASSES
                    and item.type == "function_call_output"
                    and type(call_id := item.call_id) is str
                ]
            )
    return found


def _owners(tool_calls: list[Any]) -> set[str]:
    return {owner for tool in tool_calls if type(owner := tool.invocation_id) is str}


def _interval(tool: Any) -> tuple[float, float] | None:
    started: Any = tool.started_at
    completed: Any = tool.completed_at
    if type(started) is float and type(completed) is float and completed >= started:
        return (started, completed)  # the common case, told without the typed reader
    # As floats (an integer too large for one is infinite), but ordered as written: Python compares exactly.
    begin, end = number(started), number(completed)
    if begin is not None and end is not None and completed >= started:
        return (begin, end)
    return None
