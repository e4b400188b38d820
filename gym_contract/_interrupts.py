"""Ctrl-C and SIGTERM: one way to stop, a partial result kept, every worker process ended, a bounded exit.

The command line installs `handling` for the whole of a command. The first SIGINT raises
`KeyboardInterrupt` and the first SIGTERM `Terminated` (a kind of it), so that every path that
stops on Ctrl-C stops on SIGTERM alike; the exit status is `128 + ` that signal (130, 143). What
follows the first signal is already under way and bounded in time, so a second one, which a
shell sends when Ctrl-C is pressed twice or the whole process group is signalled, changes
nothing; one that still comes `FORCE_AFTER` seconds later means that the way out is stuck, and
the worker processes are killed and the process ends at once, with the same status.

Worker processes stop cooperatively: they ignore SIGINT (the parent decides for them) and take
SIGTERM as a request to stop, which `check` turns into `Stopped` between two records, so that
a worker hands back the report of what it had checked instead of dying in the middle of a write.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

__all__ = [
    "FORCE_AFTER",
    "Stopped",
    "Terminated",
    "check",
    "deferred",
    "exit_status",
    "handling",
    "received",
    "reclaim",
]

FORCE_AFTER = 2.0
"""Seconds after the first signal from which another one ends the process at once."""

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


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
_stop_asked = False
_owners: weakref.WeakSet[Any] = weakref.WeakSet()


def received() -> int | None:
    """The first of SIGINT and SIGTERM that reached this process while `handling` was on, if any."""
    return _first


def exit_status() -> int:
    """The exit status of an interrupted command: 128 plus the signal's number, as shells report it."""
    return 128 + (_first if _first is not None else signal.SIGINT)


def _interruption(signum: int) -> KeyboardInterrupt:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _on_signal(signum: int, frame: object) -> None:
    global _first, _first_at, _pending
    if _first is None:
        _first, _first_at = signum, time.monotonic()
        if _deferring:
            _pending = signum
            return
        raise _interruption(signum)
    if time.monotonic() - _first_at >= FORCE_AFTER:
        _force_exit()


def _force_exit() -> None:
    """The way out did not end in time: kill every worker process this one owns, then end now."""
    for owner in list(_owners):
        with contextlib.suppress(Exception):  # ending the process matters more than any one worker
            owner.kill()
    os._exit(exit_status())


def own(processes: _Killable) -> None:
    """Have ``processes`` (something with `kill`) killed if the process has to end at once."""
    _owners.add(processes)


@contextmanager
def handling(*, keep_after: bool = False) -> Iterator[None]:
    """SIGINT and SIGTERM handled as described above while inside; put back as they were after.

    With ``keep_after``, when a signal came, both stay ignored after: the command's status is
    decided, and a later Ctrl-C must not turn the end of the process into a traceback.
    Outside the main thread, where signals cannot be handled, nothing changes.
    """
    global _first, _pending, _deferring, _handling
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _first, _pending, _deferring = None, None, 0
    previous = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    for signum in _SIGNALS:
        signal.signal(signum, _on_signal)
    _handling = True
    try:
        yield
    finally:
        _handling = False
        settled = keep_after and _first is not None
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_IGN if settled else handler)


def reclaim() -> None:
    """Handle SIGINT and SIGTERM here again, inside `handling`, after a library took them (Ray's
    `ray.init` makes SIGTERM exit at once, without the summary)."""
    if _handling and threading.current_thread() is threading.main_thread():
        for signum in _SIGNALS:
            signal.signal(signum, _on_signal)


@contextmanager
def deferred() -> Iterator[None]:
    """Inside, a first signal is noted and raised only on leaving: for what must not be cut in two
    (a message between processes, the merge of a report). Needs `handling` to have any effect."""
    global _deferring, _pending
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
    if not _deferring and _pending is not None:
        signum, _pending = _pending, None
        raise _interruption(signum)


# ------------------------------------------------------------------------------------------ workers


def as_worker() -> None:
    """In a new worker process: ignore SIGINT, and take SIGTERM as a request to stop (see `check`)."""
    global _first, _pending, _deferring, _stop_asked
    _first, _pending, _deferring, _stop_asked = None, None, 0, False
    _owners.clear()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _ask_to_stop)


def _ask_to_stop(signum: int, frame: object) -> None:
    global _stop_asked
    _stop_asked = True


def check() -> None:
    """Raise `Stopped` if this worker process was asked to stop; called between two records."""
    if _stop_asked:
        raise Stopped()
