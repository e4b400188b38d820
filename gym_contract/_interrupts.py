"""Ctrl-C and SIGTERM: one way to stop, a partial result kept, every worker process ended, a bounded exit.

The command line installs `handling` for the whole of a command. The first SIGINT raises
`KeyboardInterrupt` and the first SIGTERM `Terminated` (a kind of it), so that every path that
stops on Ctrl-C stops on SIGTERM alike; the exit status is `128 + ` that signal (130, 143). What
follows the first signal is already under way and bounded in time, so a second one, which a
shell sends when Ctrl-C is pressed twice or the whole process group is signalled, changes
nothing; one that still comes `FORCE_AFTER` seconds later means that the way out is stuck, and
the worker processes are killed and the process ends at once, with the same status. The first
is raised where the ``except`` meant for it can catch it, which on Python 3.13 is not everywhere
(`_skips_a_handler`).

Worker processes stop cooperatively: they ignore SIGINT (the parent decides for them) and take
SIGTERM as a request to stop, which `check` turns into `Stopped` between two records, so that
a worker hands back the report of what it had checked instead of dying in the middle of a write.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any, Protocol

__all__ = [
    "FORCE_AFTER",
    "Stopped",
    "Terminated",
    "check",
    "deferred",
    "disown",
    "exit_status",
    "handling",
    "keeping_whole",
    "own",
    "received",
    "reclaim",
]

FORCE_AFTER = 2.0
"""Seconds after the first signal from which another one ends the process at once."""

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_CHECKS_BEFORE_BACK_EDGE = sys.version_info >= (3, 13)
_PATIENCE = 0.3
"""Seconds an interruption may wait for a place where raising it reaches its handler (`_skips_a_handler`);
after that it is raised wherever it is taken, as a loop that calls no function offers no such place."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises `KeyboardInterrupt`, so that both take the same way out."""


class Stopped(KeyboardInterrupt):
    """Raised by `check` in a worker process whose parent asked it to stop."""


class _Killable(Protocol):
    def kill(self) -> None: ...


_handling = False
_first: int | None = None
_first_at = 0.0
_deferring = 0
_pending: int | None = None
_owed: int | None = None
_stop_asked = False
# Held strongly and let go by `disown`: a WeakSet's callback, run as an owner is collected, is Python
# code where Python's own handler can raise Ctrl-C, only for it to be printed as ignored and lost.
_owners: set[Any] = set()


def received() -> int | None:
    """The first of SIGINT and SIGTERM that reached this process while `handling` was on, if any."""
    return _first


def exit_status() -> int:
    """The exit status of an interrupted command: 128 plus the signal's number, as shells report it."""
    return 128 + (_first if _first is not None else signal.SIGINT)


def _interruption(signum: int) -> KeyboardInterrupt:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _first, _first_at
    if _first is None:
        _first, _first_at = signum, time.monotonic()
        _raise_where_caught(signum, frame)
    elif _owed is not None:  # taken again (see `_raise_where_caught`), or another signal while it waits
        _raise_where_caught(_owed, frame)
    elif time.monotonic() - _first_at >= FORCE_AFTER:
        _force_exit()


def _raise_where_caught(signum: int, frame: FrameType | None) -> None:
    """Raise the interruption for ``signum`` now, unless it would skip the handler meant for it: then
    leave it owed, for the watcher of `_nudging` to send the signal again a moment later, when the
    main thread is somewhere else. (Raising the signal again from here would be taken at once, in
    this very handler.)"""
    global _pending, _owed
    if _deferring:
        _pending, _owed = signum, None
        return
    if time.monotonic() - _first_at < _PATIENCE and _skips_a_handler(frame):
        _owed = signum
        return
    _owed = None
    raise _interruption(signum)


def _skips_a_handler(frame: FrameType | None) -> bool:
    """Whether an exception raised in ``frame`` now would skip a handler (``except``, ``finally``,
    ``with``) around the loop it runs.

    Python 3.13 looks for signals at a loop's back edge before taking it, and its compiler sometimes
    leaves that jump out of the exception table of the ``try`` or ``with`` around the loop
    (python/cpython#130279). An interruption raised there passes the ``except KeyboardInterrupt``
    that keeps what was checked, and the command ends with an empty summary. Earlier versions look
    after the jump, at the loop's head, which the table covers.
    """
    if not _CHECKS_BEFORE_BACK_EDGE or frame is None:
        return False
    try:
        return _outside_the_handlers_of_its_loop(frame.f_code, frame.f_lasti)
    except Exception:  # reading bytecode is a precaution: failing it, raise as ever
        return False


@functools.lru_cache(maxsize=64)
def _outside_the_handlers_of_its_loop(code: CodeType, offset: int) -> bool:
    import dis  # on a signal only: most runs never need it

    bytecode = dis.Bytecode(code)
    jump = next((instruction for instruction in bytecode if instruction.offset == offset), None)
    if jump is None or not jump.opname.startswith("JUMP_BACKWARD"):
        return False
    entries = bytecode.exception_entries  # type: ignore[attr-defined]  # there from 3.11, not in the stubs

    def handlers(at: int) -> set[int]:
        return {entry.target for entry in entries if entry.start <= at < entry.end}

    return not handlers(jump.argval) <= handlers(offset)


def _force_exit() -> None:
    """The way out did not end in time: kill every worker process this one owns, then end now."""
    for owner in list(_owners):
        with contextlib.suppress(Exception):  # ending the process matters more than any one worker
            owner.kill()
    os._exit(exit_status())


def own(processes: _Killable) -> None:
    """Have ``processes`` (something with `kill`) killed if the process has to end at once, until `disown`."""
    _owners.add(processes)


def disown(processes: _Killable) -> None:
    """``processes`` have ended: nothing is left of them to kill."""
    _owners.discard(processes)


@contextmanager
def handling(*, keep_after: bool = False) -> Iterator[None]:
    """SIGINT and SIGTERM handled as described above while inside; put back as they were after.

    With ``keep_after``, when a signal came, both stay handled so after: the command's status is
    decided, a later Ctrl-C must not turn the end of the process into a traceback, and one that
    comes `FORCE_AFTER` seconds later still ends a process that is slow to end.
    Outside the main thread, where signals cannot be handled, nothing changes.
    """
    global _first, _pending, _owed, _deferring, _handling
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _first, _pending, _owed, _deferring = None, None, None, 0
    if keep_after:
        _settle_at_exit()
    previous = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    for signum in _SIGNALS:
        signal.signal(signum, _on_signal)
    _handling = True
    try:
        with _nudging():
            yield
    finally:
        _handling = False
        if not (keep_after and _first is not None):
            for signum, handler in previous.items():
                signal.signal(signum, handler)


_settled = False


def _settle_at_exit() -> None:
    """Once a signal came, ignore more of them in the last moments of the process: the interpreter's
    finalisation puts back the default handlers, which would end the process by the signal instead
    of with its status. Registered first, so that it runs last, after Ray's own shutdown."""
    global _settled
    if _settled:
        return
    _settled = True

    def settle() -> None:
        if _first is not None:
            for signum in _SIGNALS:
                signal.signal(signum, signal.SIG_IGN)

    atexit.register(settle)


@contextmanager
def _nudging() -> Iterator[None]:
    """Have a signal sent again to the main thread until its handler has run and raised it.

    A signal that comes while the main thread is between two system calls in C code (two reads of
    a pipe) is acted upon only when the second returns, which on a pipe that stays open may be
    never. The interpreter writes every signal's number to a wakeup descriptor; a thread that
    reads it sends the signal to the main thread again, which interrupts the read. It sends it again
    too while the handler leaves the interruption owed (`_raise_where_caught`).
    """
    global _nudge_pipe, _watcher
    reader, writer = _nudge_pipe = os.pipe()
    os.set_blocking(writer, False)
    before = signal.set_wakeup_fd(writer, warn_on_full_buffer=False)
    watcher = _watcher = threading.Thread(target=_nudge, args=(reader,), name="gym-contract signals", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(before)
        _nudge_pipe = None  # its numbers are free again: a worker started later must not close them
        os.close(writer)  # the watcher reads the end of the pipe and stops
        watcher.join(_NUDGE_SECONDS * 4)
        os.close(reader)
        _watcher = None


def only_the_watcher_beside() -> bool:
    """Whether the one thread running beside the calling one, if any, is the signal watcher of `_nudging`.

    It spends its life in a read of a pipe, holding no lock, so a process forked now cannot deadlock
    on anything it held: the warning Python 3.12 and later give of a fork beside threads does not apply.
    """
    here = threading.current_thread()
    return all(thread is here or thread is _watcher for thread in threading.enumerate())


_NUDGE_SECONDS = 0.05
_OWED_NUDGE_SECONDS = 0.005  # an owed interruption is sent again often: each time may find a place to raise it
_NUDGING_SECONDS = 1.0
_nudge_pipe: tuple[int, int] | None = None
_watcher: threading.Thread | None = None


def _nudge(reader: int) -> None:
    main = threading.main_thread().ident
    while received := os.read(reader, 64):
        for signum in set(received) & set(_SIGNALS):
            until = time.monotonic() + _NUDGING_SECONDS
            while time.monotonic() < until:
                time.sleep(_NUDGE_SECONDS if _owed is None else _OWED_NUDGE_SECONDS)
                if (_first is not None and _owed is None) or not _handling or main is None:
                    break
                signal.pthread_kill(main, signum)


def reclaim() -> None:
    """Handle SIGINT and SIGTERM here again, inside `handling`, after a library took them (Ray's
    `ray.init` makes SIGTERM exit at once, without the summary)."""
    if _handling and threading.current_thread() is threading.main_thread():
        for signum in _SIGNALS:
            signal.signal(signum, _on_signal)


@contextmanager
def deferred() -> Iterator[None]:
    """Inside, a first signal is noted and raised only on leaving: for what must not be cut in two
    (a message between processes, the merge of a report). Needs `handling` or `keeping_whole` to have
    any effect."""
    global _deferring, _pending
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
    if not _deferring and _pending is not None:
        signum, _pending = _pending, None
        raise _interruption(signum)


def _as_python_does_but_deferred(signum: int, frame: FrameType | None) -> None:
    global _pending
    if _deferring:
        _pending = signum
        return
    raise KeyboardInterrupt


@contextmanager
def keeping_whole() -> Iterator[None]:
    """For a library call: Ctrl-C raises `KeyboardInterrupt` as Python's own handler does, except inside
    `deferred`, where it waits for the block's end, as under `handling`.

    Without it a library caller's Ctrl-C can land between taking a worker's result and keeping it,
    or in the middle of merging a report. Only Python's own handler, in the main thread, is stood in
    for: a handler the caller installed, or the command line's, is theirs to keep.
    """
    global _pending
    if (
        _handling
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    _pending = None
    signal.signal(signal.SIGINT, _as_python_does_but_deferred)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGINT) is _as_python_does_but_deferred:
            signal.signal(signal.SIGINT, signal.default_int_handler)


# ------------------------------------------------------------------------------------------ workers


def as_worker() -> None:
    """In a new worker process: ignore SIGINT, and take SIGTERM as a request to stop (see `check`)."""
    global _first, _pending, _owed, _deferring, _stop_asked, _handling
    _first, _pending, _owed, _deferring, _stop_asked, _handling = None, None, None, 0, False, False
    _owners.clear()
    signal.set_wakeup_fd(-1)  # the parent's: a signal to a worker is no signal to the parent
    if _nudge_pipe is not None:
        for descriptor in _nudge_pipe:
            with contextlib.suppress(OSError):
                os.close(descriptor)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _ask_to_stop)


def _ask_to_stop(signum: int, frame: object) -> None:
    global _stop_asked
    _stop_asked = True


def check() -> None:
    """Raise `Stopped` if this worker process was asked to stop; called between two records."""
    if _stop_asked:
        raise Stopped()
