"""The recorder's inner workings: its state under one lock, the current scope, the clock, and misuse reporting."""

from __future__ import annotations

import itertools
import math
import os
import sys
import threading
import warnings
from collections.abc import Mapping
from typing import Any

from gym_contract.models import ModelServerRef
from gym_contract.recorder import _state as check
from gym_contract.recorder._handles import SCOPE, Invocation, Scope
from gym_contract.recorder._state import (
    Clock,
    CompactionState,
    InvocationState,
    Moment,
    MonotonicClock,
    RecorderError,
    RecorderWarning,
    ToolState,
    UnfitValueError,
)

__all__ = ["Gap", "RecorderCore", "server"]

Gap = tuple[str, str | None, str | None]

_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _harness_level() -> int:
    """The `stacklevel` that names the harness's own line: the first frame outside this package, from `_flush`."""
    frame = sys._getframe(2)  # the caller of `_flush`
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_HERE):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


class RecorderCore:
    """What every recorder call shares: the records so far, the lock that guards them, and the checks on values."""

    def __init__(self, source: str, harness: str | None, model_ref: Any, clock: Clock | None, strict: bool) -> None:
        # What a harness configures once is refused at once; only what it reports while running is never raised.
        if not isinstance(source, str) or not source:
            raise ValueError(f"source must be a non-empty string, not {source!r}")
        if harness is not None and (not isinstance(harness, str) or not harness):
            raise ValueError(f"harness must be a non-empty string or None, not {harness!r}")
        if clock is not None and not callable(clock):
            raise TypeError(f"clock must be a callable giving UTC Unix seconds, not {type(clock).__name__}")
        self.source = source
        self.harness = harness if harness is not None else source
        """The harness named by the outcomes `outcome` builds; the source unless given."""
        self.strict = bool(strict)
        self._server = server(model_ref) if model_ref is not None else None
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        self._trusted = clock is None
        self._latest = -math.inf
        self._lock = threading.Lock()
        self._order = itertools.count()
        self._invocations: dict[str, InvocationState] = {}
        self._root: InvocationState | None = None
        self._tools: dict[tuple[str, str], ToolState] = {}
        self._tools_by_id: dict[str, list[ToolState]] = {}
        self._compactions: list[CompactionState] = []
        self._sandboxes: list[dict[str, Any]] = []
        self._gaps: list[Gap] = []
        self._unwarned: list[str] = []
        self._made_calls = 0
        self._finished = False

    def _start_invocation(
        self, given: Any, parent: InvocationState | None, spawned: str | None, start: Moment
    ) -> InvocationState:
        invocation_id = self._id(given, "invocation_id") if given is not None else None
        if invocation_id is None:
            invocation_id = self._made_invocation_id(parent)
        state = self._invocations.get(invocation_id)
        if state is None:
            state = self._invocations[invocation_id] = InvocationState(invocation_id)
        elif state.started:
            self._misuse(f"invocation {invocation_id!r} started twice; the first start is kept", invocation_id)
            return state
        state.started, state.start = True, start
        state.parent = parent.invocation_id if parent is not None else None
        state.spawned_by = spawned
        state.unattributed = parent is not None and spawned is None
        if parent is None and self._root is None:
            self._root = state
        return state

    def _made_invocation_id(self, parent: InvocationState | None) -> str:
        if parent is None:
            made, number = "root", 1
            while made in self._invocations:
                number += 1
                made = f"root-{number}"
            return made
        while True:
            parent.children += 1
            made = f"{parent.invocation_id}.child-{parent.children}"
            if made not in self._invocations:
                return made

    def _new_tool(self, invocation_id: str, tool_call_id: str, started_at: float | None) -> ToolState:
        state = ToolState(invocation_id, tool_call_id, None, None, None, started_at)
        self._tools[(invocation_id, tool_call_id)] = state
        self._tools_by_id.setdefault(tool_call_id, []).append(state)
        return state

    def _find_tool(self, tool_call_id: Any, invocation: str | Invocation | None) -> ToolState | None:
        if invocation is not None:
            owner = self._invocation_of(invocation)
            return self._tools.get((owner.invocation_id, tool_call_id)) if isinstance(tool_call_id, str) else None
        candidates = self._tools_by_id.get(tool_call_id, []) if isinstance(tool_call_id, str) else []
        scope = self._scope()
        here = scope.invocation.invocation_id if scope is not None else None
        open_calls = [state for state in candidates if not state.ended]
        for group in (open_calls, candidates):
            for state in group:
                if state.invocation_id == here:
                    return state
            if group:
                return group[0]
        return None

    def _close_open(self) -> None:
        for tool in self._tools.values():
            if not tool.ended:
                tool.ended, tool.closed, tool.status = True, True, "incomplete"
                self._gaps.append(("tool_result_missing", tool.invocation_id, tool.tool_call_id))
        for compaction in self._compactions:
            if compaction.end is None and not compaction.closed:
                compaction.closed = True
                self._gaps.append(("compaction_outcome_unavailable", compaction.invocation_id, None))
        for invocation in self._invocations.values():
            if invocation.started and invocation.end is None and not invocation.closed:
                invocation.closed, invocation.status = True, "incomplete"
                self._gaps.append(("invocation_end_missing", invocation.invocation_id, None))

    def _closed(self, what: str, owner: str) -> None:
        """An end of what `finish` closed: it stays as closed, and the late end is reported."""
        self._misuse(f"{what} ended after finish() closed it; it stays as closed", owner)

    # ---------------------------------------------------------------------------------- the parts

    def _scope(self) -> Scope | None:
        scope = SCOPE.get()
        while scope is not None and scope.recorder is not self:
            scope = scope.outer
        return scope

    def _named(self, named: Any) -> InvocationState:
        """The invocation a handle or an id names; an id not heard of yet is kept until it starts or `finish`."""
        if isinstance(named, Invocation):
            if named._recorder is not self:
                self._misuse(f"{named!r} belongs to another recorder; its id is used here", named.invocation_id)
            named = named.invocation_id
        invocation_id = self._id(named, "invocation")
        if invocation_id is None:
            return self._default_invocation()
        state = self._invocations.get(invocation_id)
        if state is None:
            state = self._invocations[invocation_id] = InvocationState(invocation_id)
        return state

    def _invocation_of(self, named: Any) -> InvocationState:
        if named is not None:
            return self._named(named)
        scope = self._scope()
        return scope.invocation if scope is not None else self._default_invocation()

    def _default_invocation(self) -> InvocationState:
        """The run's root: the first invocation started without a parent, started now when there is none."""
        if self._root is None:
            self._start_invocation(None, None, None, self._moment(None))
        assert self._root is not None
        return self._root

    def _moment(self, at: Any) -> Moment:
        if at is not None:
            try:
                return (check.seconds(at, "the time given"), next(self._order))
            except UnfitValueError as why:
                self._misuse(f"{why}; the recorder's clock is read instead", None)
        return (self._now(), next(self._order))

    def _now(self) -> float:
        try:
            reading = self._clock()
        except Exception as error:  # a harness's clock failing must not fail the harness
            self._misuse(f"the clock raised {type(error).__name__}; the latest reading is kept", None)
            return self._latest  # -inf before any reading: the time stays unknown
        if self._trusted:
            return reading
        try:
            reading = check.seconds(reading, "the clock's reading")
        except UnfitValueError as why:
            self._misuse(f"{why}; the latest reading is kept", None)
            return self._latest  # -inf before any reading: the time stays unknown
        if reading < self._latest:
            self._misuse("the clock ran backwards; its readings are held at the latest", None)
            return self._latest
        self._latest = reading
        return reading

    def _check_open(self) -> None:
        if self._finished:
            self._misuse("recorded after finish(): only a later finish() includes it", None)

    def _misuse(self, problem: str, owner: str | None, *, code: str = "recorder_misuse", detail: Any = "") -> None:
        """A call the evidence cannot hold: its gap and a warning, or under strict the exception. Holds the lock."""
        if self.strict:
            raise RecorderError(problem)
        self._gaps.append((code, owner, problem if detail == "" else detail))
        self._unwarned.append(problem)

    def _checked(self, reader: Any, value: Any, what: str, owner: str | None) -> Any:
        try:
            return reader(value, what)
        except UnfitValueError as why:
            self._misuse(f"{why}; left unknown", owner)
            return None

    def _id(self, value: Any, what: str, owner: str | None = None) -> str | None:
        try:
            return check.identifier(value, what)
        except UnfitValueError as why:
            self._misuse(f"{why}; one is made instead" if what != "code" else str(why), owner)
            return None

    def _text(self, value: Any, what: str, owner: str | None) -> str | None:
        result: str | None = self._checked(check.text, value, what, owner)
        return result

    def _count(self, value: Any, what: str, owner: str | None) -> int | None:
        result: int | None = self._checked(check.count, value, what, owner)
        return result

    def _choice(self, value: Any, allowed: tuple[str, ...], what: str, owner: str | None, default: Any = None) -> Any:
        try:
            return check.choice(value, allowed, what)
        except UnfitValueError as why:
            self._misuse(f"{why}; {default or 'nothing'} is kept", owner)
            return default

    def _flush(self) -> None:
        if self._unwarned:
            with self._lock:
                problems, self._unwarned = self._unwarned, []
            level = _harness_level()
            for problem in problems:
                warnings.warn(problem, RecorderWarning, stacklevel=level)


def server(model_ref: Any) -> dict[str, Any]:
    """A model server as a model-call reference names it: a configured name, or a `ModelServerRef`."""
    if isinstance(model_ref, str) and model_ref:
        return {"type": "responses_api_models", "name": model_ref}
    if isinstance(model_ref, ModelServerRef):
        return model_ref.model_dump(mode="json")
    if isinstance(model_ref, Mapping):
        try:
            return ModelServerRef.model_validate(dict(model_ref)).model_dump(mode="json")
        except ValueError:
            pass
    raise UnfitValueError(f"model_ref must be a server name or a ModelServerRef, not {model_ref!r}")


def _unique(gaps: list[tuple[str, str | None, str | None]]) -> list[tuple[str, str | None, str | None]]:
    return list(dict.fromkeys(gaps))
