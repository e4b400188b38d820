"""The `Recorder`: what a harness calls while it runs, safe from threads and asyncio tasks, and never raising."""

from __future__ import annotations

import enum
from typing import Any, Final, Literal

from gym_contract.models import AgentOutcome, ModelServerRef
from gym_contract.producers._kit import Observed
from gym_contract.recorder import _state as check
from gym_contract.recorder._bundle import assemble, outcome_of
from gym_contract.recorder._core import RecorderCore
from gym_contract.recorder._core import server as server_of
from gym_contract.recorder._handles import Compaction, Invocation, Scope, ToolCall
from gym_contract.recorder._state import (
    COMPACTION_OUTCOMES,
    INVOCATION_STATUSES,
    SANDBOX_OUTCOMES,
    SANDBOX_ROLES,
    TIMING_SOURCES,
    TOOL_STATUSES,
    Clock,
    CompactionState,
    InvocationState,
    ToolState,
    UnfitValueError,
    known,
)

__all__ = ["CURRENT", "Recorder"]


class _Current(enum.Enum):
    CURRENT = "current"


CURRENT: Final = _Current.CURRENT
"""The default of `parent` and `spawned_by`: whatever the innermost `with` block of this thread or task made current."""

Named = str | Invocation | None


class Recorder(RecorderCore):
    """Records one run of a harness as it happens; `finish` returns the `Observed` every producer returns.

    ``source`` is the bundle's `source`; the gaps the recorder writes are registered under
    `recorder`. ``model_ref`` names the model server that serves the run (`ModelServerRef.name`),
    with which a response id becomes a model-call reference. ``clock`` gives UTC Unix seconds (a
    monotonic clock anchored to the wall clock by default); a clock that runs backwards is held at
    its latest reading. A call the evidence cannot hold (ending a tool twice, an id that is no
    string, a status outside the contract's) becomes a gap and a `RecorderWarning`, never an
    exception; with ``strict=True`` it raises `RecorderError` instead, for a harness's own tests.

    Only the configuration is refused at once: ValueError for a ``source`` or ``harness`` that is
    not a non-empty string, or a ``model_ref`` that names no model server; TypeError for a
    ``clock`` that cannot be called.
    """

    def __init__(
        self,
        *,
        source: str = "recorder",
        harness: str | None = None,
        model_ref: str | ModelServerRef | None = None,
        clock: Clock | None = None,
        strict: bool = False,
    ) -> None:
        super().__init__(source, harness, model_ref, clock, strict)

    # ------------------------------------------------------------------------------- invocations

    def invocation(
        self,
        invocation_id: str | None = None,
        *,
        parent: Named | Literal[_Current.CURRENT] = CURRENT,
        spawned_by: str | ToolCall | Literal[_Current.CURRENT] | None = CURRENT,
        started_at: float | None = None,
    ) -> Invocation:
        """Start an invocation: the root, or a subagent of ``parent`` spawned by its tool call ``spawned_by``.

        By default the parent is the invocation current here (the innermost `with` block of this
        thread or task) and the spawning call the tool call current here; pass ``parent=None`` for
        another root. The id is made when not given: `root`, then `<parent>.child-<n>` for subagents.
        A parent may be named by an id the recorder has not heard of yet (it is checked at `finish`).
        """
        with self._lock:
            self._check_open()
            scope = self._scope()
            if parent is CURRENT:
                parent_state = scope.invocation if scope is not None else None
            else:
                parent_state = self._named(parent) if parent is not None else None
            spawned = self._spawner(scope, parent_state, spawned_by)
            state = self._start_invocation(invocation_id, parent_state, spawned, self._moment(started_at))
        self._flush()
        return Invocation(self, state)

    def _spawner(self, scope: Scope | None, parent: InvocationState | None, spawned_by: Any) -> str | None:
        if spawned_by is CURRENT:
            tool = scope.tool if scope is not None else None
            owner = parent.invocation_id if parent is not None else None
            return tool.tool_call_id if tool is not None and tool.invocation_id == owner else None
        if spawned_by is None:
            return None
        if isinstance(spawned_by, ToolCall):
            if parent is None or spawned_by.invocation_id != parent.invocation_id:
                owner = parent.invocation_id if parent is not None else None
                self._misuse(f"{spawned_by!r} is no tool call of the parent {owner!r}; no spawning call kept", owner)
                return None
            return spawned_by.tool_call_id
        return self._id(spawned_by, "spawned_by")

    def _end_invocation(self, state: InvocationState, status: Any, error_type: Any, at: Any) -> None:
        with self._lock:
            if state.closed:
                self._closed(f"invocation {state.invocation_id!r}", state.invocation_id)
            elif state.end is not None:
                self._misuse(
                    f"invocation {state.invocation_id!r} ended twice; the first end is kept", state.invocation_id
                )
            else:
                self._check_open()
                state.status = self._choice(status, INVOCATION_STATUSES, "status", state.invocation_id, "unknown")
                state.error_type = self._text(error_type, "error_type", state.invocation_id)
                state.end = self._moment(at)
        self._flush()

    def current(self) -> Invocation | None:
        """The invocation current in this thread or task (the innermost `with` block of this recorder), if any."""
        scope = self._scope()
        return Invocation(self, scope.invocation) if scope is not None else None

    # ----------------------------------------------------------------------------------- records

    def model_call(
        self,
        response_id: str | None = None,
        *,
        model_call_id: str | None = None,
        model_ref: str | ModelServerRef | None = None,
        invocation: Named = None,
        at: float | None = None,
    ) -> None:
        """Record a model call of ``invocation`` (the current one by default), once its response is in.

        It is referenced by ``model_call_id`` when the harness has the capture's id, else by the model
        server (``model_ref``, the recorder's by default) and the ``response_id`` the model returned.
        A call with neither is still counted, and its gap says why it cannot be joined.
        """
        with self._lock:
            self._check_open()
            state = self._invocation_of(invocation)
            owner = state.invocation_id
            call_id = self._text(model_call_id, "model_call_id", owner) or None
            response = self._text(response_id, "response_id", owner) or None
            server = self._server
            if model_ref is not None:
                try:
                    server = server_of(model_ref)
                except UnfitValueError as why:
                    self._misuse(str(why), owner)
            ref: dict[str, Any] | None = None
            if call_id is not None or (server is not None and response is not None):
                ref = {"model_call_id": call_id, "model_ref": server, "response_id": response}
            elif response is None:
                self._gaps.append(("model_response_id_unavailable", owner, None))
            else:
                self._gaps.append(("model_call_ownership_unavailable", owner, None))
            state.calls.append((self._moment(at), ref))
        self._flush()

    def tool(
        self,
        tool_call_id: str | None = None,
        name: str | None = None,
        *,
        invocation: Named = None,
        sandbox_id: str | None = None,
        timing_source: str = "executor",
        started_at: float | None = None,
    ) -> ToolCall:
        """Start a tool call of ``invocation`` (the current one by default); end it with `ToolCall.end` or a `with`.

        ``timing_source`` says where its times are measured: `executor` around the execution itself,
        `harness` where the harness heard of it (a callback). The id is made when not given.
        """
        with self._lock:
            self._check_open()
            owner = self._invocation_of(invocation)
            key = self._id(tool_call_id, "tool_call_id", owner.invocation_id) if tool_call_id is not None else None
            if key is None:
                key = self._made_tool_id(owner.invocation_id)
            state = self._tools.get((owner.invocation_id, key))
            if state is not None:
                self._misuse(
                    f"tool call {key!r} of {owner.invocation_id!r} started twice; the first start is kept",
                    owner.invocation_id,
                    code="duplicate_tool_call",
                    detail=key,
                )
            else:
                state = self._new_tool(owner.invocation_id, key, known(self._moment(started_at)[0]))
                state.name = self._text(name, "name", owner.invocation_id)
                state.sandbox_id = self._text(sandbox_id, "sandbox_id", owner.invocation_id)
                state.timing_source = self._choice(timing_source, TIMING_SOURCES, "timing_source", owner.invocation_id)
        self._flush()
        return ToolCall(self, owner, state)

    def _made_tool_id(self, invocation_id: str) -> str:
        while True:  # a made id never takes one already given
            self._made_calls += 1
            made = f"call-{self._made_calls}"
            if (invocation_id, made) not in self._tools:
                return made

    def end_tool(
        self,
        tool_call_id: str,
        status: str = "completed",
        *,
        error_type: str | None = None,
        invocation: Named = None,
        at: float | None = None,
    ) -> None:
        """End a tool call by its id, as a harness's completion hook knows it; see `ToolCall.end`.

        Without ``invocation`` the call is looked for in the current invocation, then among every
        open call of that id. A call never started is recorded with its end alone (gap
        `tool_start_missing`).
        """
        with self._lock:
            found = self._find_tool(tool_call_id, invocation)
            if found is None:
                owner = self._invocation_of(invocation)
                key = self._id(tool_call_id, "tool_call_id", owner.invocation_id)
                if key is not None:
                    self._misuse(
                        f"tool call {key!r} of {owner.invocation_id!r} ended but never started",
                        owner.invocation_id,
                        code="tool_start_missing",
                        detail=key,
                    )
                    found = self._new_tool(owner.invocation_id, key, None)
        if found is None:
            self._flush()
            return
        self._end_tool(found, status, error_type, at)

    def _end_tool(self, state: ToolState, status: Any, error_type: Any, at: Any) -> None:
        with self._lock:
            owner, key = state.invocation_id, state.tool_call_id
            if state.closed:
                self._closed(f"tool call {key!r} of {owner!r}", owner)
            elif state.ended:
                self._misuse(
                    f"tool call {key!r} of {owner!r} ended twice; the first end is kept",
                    owner,
                    code="duplicate_tool_call",
                    detail=key,
                )
            else:
                self._check_open()
                state.ended = True
                state.status = self._choice(status, TOOL_STATUSES, "status", owner, "unknown")
                state.error_type = self._text(error_type, "error_type", owner)
                completed = known(self._moment(at)[0])
                if completed is not None and state.started_at is not None and completed < state.started_at:
                    self._misuse(
                        f"tool call {key!r} of {owner!r} ends before it starts; its completion time is dropped",
                        owner,
                        code="tool_timing_invalid",
                        detail=key,
                    )
                else:
                    state.completed_at = completed
        self._flush()

    def compaction(
        self,
        *,
        trigger: str | None = None,
        tokens_before: int | None = None,
        invocation: Named = None,
        started_at: float | None = None,
    ) -> Compaction:
        """Start a compaction of ``invocation``'s context (the current one by default); end it with `Compaction.end`."""
        with self._lock:
            self._check_open()
            owner = self._invocation_of(invocation).invocation_id
            state = CompactionState(
                owner,
                self._moment(started_at),
                self._text(trigger, "trigger", owner),
                self._count(tokens_before, "tokens_before", owner),
            )
            self._compactions.append(state)
        self._flush()
        return Compaction(self, state)

    def _end_compaction(
        self, state: CompactionState, outcome: Any, tokens_after: Any, summary: Any, first_kept: Any, at: Any
    ) -> None:
        with self._lock:
            owner = state.invocation_id
            if state.closed:
                self._closed(f"a compaction of {owner!r}", owner)
            elif state.end is not None:
                self._misuse(f"a compaction of {owner!r} ended twice; the first end is kept", owner)
            else:
                self._check_open()
                state.outcome = self._choice(outcome, COMPACTION_OUTCOMES, "outcome", owner, "unknown")
                state.tokens_after = self._count(tokens_after, "tokens_after", owner)
                state.summary = self._text(summary, "summary", owner)
                state.first_kept_item_id = self._text(first_kept, "first_kept_item_id", owner)
                end = self._moment(at)
                if end < state.start:
                    self._misuse(f"a compaction of {owner!r} ends before it starts; held at its start", owner)
                    end = state.start
                state.end = end
        self._flush()

    def sandbox(
        self,
        role: str = "agent",
        *,
        provider: str | None = None,
        sandbox_id: str | None = None,
        outcome: str = "unknown",
        exit_code: int | None = None,
        wall_time_s: float | None = None,
        cpu_time_s: float | None = None,
        peak_memory_mib: float | None = None,
        resource_usage_source: str | None = None,
        error_type: str | None = None,
    ) -> None:
        """Record what a sandbox the harness owns did: its role, outcome, exit code and measured usage."""
        with self._lock:
            self._check_open()
            checked = self._choice(role, SANDBOX_ROLES, "role", None)
            if checked is not None:  # without its role a sandbox record says nothing; the gap says why it is missing
                self._sandboxes.append(
                    {
                        "kind": "sandbox",
                        "role": checked,
                        "provider": self._text(provider, "provider", None),
                        "sandbox_id": self._text(sandbox_id, "sandbox_id", None),
                        "outcome": self._choice(outcome, SANDBOX_OUTCOMES, "outcome", None, "unknown"),
                        "exit_code": self._checked(check.integer, exit_code, "exit_code", None),
                        "wall_time_s": self._checked(check.number, wall_time_s, "wall_time_s", None),
                        "cpu_time_s": self._checked(check.number, cpu_time_s, "cpu_time_s", None),
                        "peak_memory_mib": self._checked(check.number, peak_memory_mib, "peak_memory_mib", None),
                        "resource_usage_source": self._text(resource_usage_source, "resource_usage_source", None),
                        "error_type": self._text(error_type, "error_type", None),
                    }
                )
        self._flush()

    def gap(self, code: str, detail: str | None = None, *, invocation: str | Invocation | None = None) -> None:
        """Record a fact the harness knows it cannot give (a registered gap code), for the run or one invocation."""
        with self._lock:
            self._check_open()
            owner = self._named(invocation).invocation_id if invocation is not None else None
            checked = self._id(code, "code", owner)
            if checked is not None:
                self._gaps.append((checked, owner, self._text(detail, "detail", owner)))
        self._flush()

    # ------------------------------------------------------------------------------------ the end

    def outcome(
        self,
        failure_kind: str | None = None,
        *,
        status_code: int | None = None,
        error_name: str | None = None,
        message: str | None = None,
        retryable: bool | None = None,
        harness_version: str | None = None,
    ) -> AgentOutcome:
        """How the run ended, as the harness itself knows it: its `ng_agent_outcome` (see the recorder guide).

        ``failure_kind`` is one of the contract's failure kinds; without it an HTTP ``status_code``
        decides it (400/413/422 a request error, 401/403 auth, 429 rate-limited, 5xx server), any
        other error (a name or a message) is `unknown_error`, and no error at all is a completed run.
        """
        built, problem = outcome_of(
            self.harness, failure_kind, status_code, error_name, message, retryable, harness_version
        )
        if problem is not None:
            with self._lock:
                self._misuse(problem, None)
            self._flush()
        return built

    def finish(self, outcome: AgentOutcome | None = None) -> Observed:
        """Close what is still open and return the run's `Observed`: the bundle, ``outcome`` and the run summary.

        A tool call still running is closed `incomplete` (gap `tool_result_missing`), an invocation
        `incomplete` (gap `invocation_end_missing`), a compaction with outcome `unknown` (gap
        `compaction_outcome_unavailable`). Finishing again returns the evidence as it then stands.
        """
        with self._lock:
            if outcome is not None and not isinstance(outcome, AgentOutcome):
                self._misuse(f"outcome must be an AgentOutcome or None, not {type(outcome).__name__}", None)
                outcome = None
            self._close_open()
            self._finished = True
            assembled = assemble(
                self.source,
                self._invocations,
                list(self._tools.values()),
                self._compactions,
                self._sandboxes,
                self._gaps,
            )
            for problem, owner in assembled.problems:
                self._misuse(problem, owner)
            gaps = list(dict.fromkeys([*self._gaps, *assembled.gaps]))
        self._flush()
        return Observed(assembled.bundle(gaps), outcome, assembled.summary)
