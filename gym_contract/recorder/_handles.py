"""The handles a recorder gives back: an invocation, a tool call and a compaction, each ended by a call or a `with`."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from contextvars import ContextVar, Token
from types import TracebackType
from typing import TYPE_CHECKING, NamedTuple

from gym_contract.recorder._state import CompactionState, InvocationState, ToolState

if TYPE_CHECKING:
    from gym_contract.models import ModelServerRef
    from gym_contract.recorder._recorder import Recorder

__all__ = ["SCOPE", "Compaction", "Invocation", "Scope", "ToolCall"]

_CANCELLED = (asyncio.CancelledError, concurrent.futures.CancelledError, KeyboardInterrupt, GeneratorExit)
_TIMED_OUT = (TimeoutError, asyncio.TimeoutError, concurrent.futures.TimeoutError)


class Scope(NamedTuple):
    """What a `with` block of one recorder has made current in this thread or task, over what was current before."""

    recorder: Recorder
    invocation: InvocationState
    tool: ToolState | None
    outer: Scope | None


SCOPE: ContextVar[Scope | None] = ContextVar("gym_contract_recorder_scope", default=None)
"""The innermost `with` block of any recorder; each asyncio task and each thread sees its own."""


class _Block:
    """A handle usable as a `with` block: entering makes it current, leaving ends it unless it was ended."""

    __slots__ = ("_recorder", "_tokens")

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._tokens: list[Token[Scope | None]] = []

    def _scope(self) -> Scope:
        raise NotImplementedError

    def _leave(self, error: BaseException | None) -> None:
        raise NotImplementedError

    def _enter(self) -> None:
        self._tokens.append(SCOPE.set(self._scope()))

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._tokens:
            # Left in another context than it was entered in: nothing of this one to undo.
            with contextlib.suppress(ValueError):
                SCOPE.reset(self._tokens.pop())
        self._leave(error)


class Invocation(_Block):
    """One agent conversation, the root's or a subagent's; `with` makes it current, and ends it on leaving.

    Leaving the block ends the invocation `completed`, or `failed` with the exception's class name
    as its `error_type` (`incomplete` when it was cancelled), unless `end` was called first.
    """

    __slots__ = ("_state",)

    def __init__(self, recorder: Recorder, state: InvocationState) -> None:
        super().__init__(recorder)
        self._state = state

    @property
    def invocation_id(self) -> str:
        """The invocation's id, as given or as the recorder made it."""
        return self._state.invocation_id

    def __repr__(self) -> str:
        return f"Invocation({self._state.invocation_id!r})"

    def __enter__(self) -> Invocation:
        self._enter()
        return self

    def _scope(self) -> Scope:
        return Scope(self._recorder, self._state, None, SCOPE.get())

    def _leave(self, error: BaseException | None) -> None:
        if self._state.end is None and not self._state.closed:
            if error is None:
                self.end()
            else:
                status = "incomplete" if isinstance(error, (*_CANCELLED, *_TIMED_OUT)) else "failed"
                self.end(status, error_type=type(error).__name__)

    def end(self, status: str = "completed", *, error_type: str | None = None, at: float | None = None) -> None:
        """End the invocation: `completed`, `failed`, `incomplete` or `unknown`; ``at`` is when, else now."""
        self._recorder._end_invocation(self._state, status, error_type, at)

    def subagent(
        self,
        invocation_id: str | None = None,
        *,
        spawned_by: str | ToolCall | None = None,
        started_at: float | None = None,
    ) -> Invocation:
        """Start a subagent of this invocation, spawned by the tool call ``spawned_by`` (one of this invocation's)."""
        return self._recorder.invocation(invocation_id, parent=self, spawned_by=spawned_by, started_at=started_at)

    def model_call(
        self,
        response_id: str | None = None,
        *,
        model_call_id: str | None = None,
        model_ref: str | ModelServerRef | None = None,
        at: float | None = None,
    ) -> None:
        """Record a model call this invocation made (see `Recorder.model_call`)."""
        self._recorder.model_call(response_id, model_call_id=model_call_id, model_ref=model_ref, invocation=self, at=at)

    def tool(
        self,
        tool_call_id: str | None = None,
        name: str | None = None,
        *,
        sandbox_id: str | None = None,
        timing_source: str = "executor",
        started_at: float | None = None,
    ) -> ToolCall:
        """Start a tool call of this invocation (see `Recorder.tool`)."""
        return self._recorder.tool(
            tool_call_id,
            name,
            invocation=self,
            sandbox_id=sandbox_id,
            timing_source=timing_source,
            started_at=started_at,
        )

    def compaction(
        self, *, trigger: str | None = None, tokens_before: int | None = None, started_at: float | None = None
    ) -> Compaction:
        """Start a compaction of this invocation's context (see `Recorder.compaction`)."""
        return self._recorder.compaction(
            trigger=trigger, tokens_before=tokens_before, invocation=self, started_at=started_at
        )

    def gap(self, code: str, detail: str | None = None) -> None:
        """Record a gap of this invocation: a fact the harness knows it cannot give."""
        self._recorder.gap(code, detail, invocation=self)


class ToolCall(_Block):
    """One tool call; `with` makes it current (a subagent started inside is spawned by it), and ends it on leaving.

    Leaving the block ends the call `completed`; an exception ends it `timeout` (a `TimeoutError`),
    `cancelled` (cancellation) or `failed`, with the exception's class name as its `error_type`.
    """

    __slots__ = ("_invocation", "_state")

    def __init__(self, recorder: Recorder, invocation: InvocationState, state: ToolState) -> None:
        super().__init__(recorder)
        self._invocation = invocation
        self._state = state

    @property
    def tool_call_id(self) -> str:
        """The call's id, as given or as the recorder made it."""
        return self._state.tool_call_id

    @property
    def invocation_id(self) -> str:
        """The invocation that made the call."""
        return self._state.invocation_id

    def __repr__(self) -> str:
        return f"ToolCall({self._state.invocation_id!r}, {self._state.tool_call_id!r})"

    def __enter__(self) -> ToolCall:
        self._enter()
        return self

    def _scope(self) -> Scope:
        return Scope(self._recorder, self._invocation, self._state, SCOPE.get())

    def _leave(self, error: BaseException | None) -> None:
        if not self._state.ended:
            if error is None:
                self.end()
            elif isinstance(error, _TIMED_OUT):
                self.end("timeout", error_type=type(error).__name__)
            elif isinstance(error, _CANCELLED):
                self.end("cancelled", error_type=type(error).__name__)
            else:
                self.end("failed", error_type=type(error).__name__)

    def end(self, status: str = "completed", *, error_type: str | None = None, at: float | None = None) -> None:
        """End the call: `completed`, `failed`, `timeout`, `cancelled`, `incomplete` or `unknown`, at ``at`` or now."""
        self._recorder._end_tool(self._state, status, error_type, at)


class Compaction(_Block):
    """One compaction of an invocation's context; leaving a `with` block ends it `completed`, or `failed`.

    The model calls the invocation records while the compaction is open are the compaction's own; the
    last one before it and the first one after it become its `before_model_call` and `after_model_call`.
    """

    __slots__ = ("_state",)

    def __init__(self, recorder: Recorder, state: CompactionState) -> None:
        super().__init__(recorder)
        self._state = state

    @property
    def invocation_id(self) -> str:
        """The invocation whose context was compacted."""
        return self._state.invocation_id

    def __repr__(self) -> str:
        return f"Compaction({self._state.invocation_id!r})"

    def __enter__(self) -> Compaction:
        return self  # a compaction makes nothing current: the invocation's calls find it by time

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._leave(error)

    def _leave(self, error: BaseException | None) -> None:
        if self._state.end is None and not self._state.closed:
            if error is None:
                self.end()
            else:
                self.end("aborted" if isinstance(error, _CANCELLED) else "failed")

    def end(
        self,
        outcome: str = "completed",
        *,
        tokens_after: int | None = None,
        summary: str | None = None,
        first_kept_item_id: str | None = None,
        at: float | None = None,
    ) -> None:
        """End the compaction: `completed`, `failed`, `aborted` or `unknown`, with what it left behind."""
        self._recorder._end_compaction(self._state, outcome, tokens_after, summary, first_kept_item_id, at)
