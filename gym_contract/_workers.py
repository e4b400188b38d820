"""Worker processes this process owns: tasks handed out in order, stopped on request, never left behind.

Each worker has a socket of its own to the parent, so that a worker that dies or is killed cannot
leave a lock held that the others need. A worker ignores SIGINT and takes SIGTERM as a request to
stop (`gym_contract._interrupts`): when the parent is interrupted, `Workers.stop` asks the busy
ones to hand back what they had done, waits a bounded time for it, and kills them all. A worker
whose parent goes away (its socket reaches its end) ends at once, so none outlives the parent even
when the parent is killed.
"""

from __future__ import annotations

import os
import pickle
import queue
import select
import signal
import socket
import struct
import sys
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from gym_contract import _interrupts

__all__ = ["WorkerLost", "Workers"]

# Tasks sent to a worker ahead of its results: the second is there when the first is done.
_AHEAD = 2
# How long a worker that was asked to end (its socket closed, or killed) is waited for.
_REAP_SECONDS = 1.0


class WorkerLost(RuntimeError):  # noqa: N818 - names what happened, as InputUnreadable does
    """A worker process ended with work outstanding (killed from outside, or out of memory)."""


@dataclass
class _Worker:
    process: Any
    connection: socket.socket
    tickets: deque[int] = field(default_factory=deque)
    broken: bool = False
    """A message to or from it was cut: nothing more is read from it."""


class Workers:
    """``count`` worker processes running ``function(argument)`` tasks; use as a context manager."""

    def __init__(self, count: int) -> None:
        self._workers: list[_Worker] = []
        self._queued: deque[tuple[int, bytes]] = deque()
        self._done: dict[int, tuple[bool, Any]] = {}
        self._next_ticket = 0
        self._stopped = False
        _interrupts.own(self)
        try:
            with _interrupts.deferred(), _signals_blocked():
                for _ in range(count):
                    ours, theirs = socket.socketpair()
                    # Under fork a worker inherits the parent's ends of the earlier workers' sockets: it closes
                    # them, or a worker would not see the parent go away while a later one lives.
                    inherited = [worker.connection for worker in self._workers] + [ours]
                    with theirs:  # the worker's end, its own once it is started
                        try:
                            process = _start(_serve, (theirs, inherited))
                        except BaseException:
                            ours.close()
                            raise
                    self._workers.append(_Worker(process, ours))
        except BaseException:
            self.kill()
            self._reap()
            raise

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if kind is None and not self._queued and not any(worker.tickets for worker in self._workers):
            self._close()
        else:
            self.kill()
            self._reap()

    # ------------------------------------------------------------------ tasks

    def submit(self, function: Callable[[Any], Any], argument: Any) -> int:
        """Hand ``function(argument)`` to a worker; the ticket to claim its result with."""
        ticket = self._next_ticket
        self._next_ticket += 1
        self._queued.append((ticket, pickle.dumps((ticket, function, argument), pickle.HIGHEST_PROTOCOL)))
        self._receive(0)  # the results already there make room for more work
        self._send_queued()
        return ticket

    def result(self, ticket: int) -> Any:
        """The result of a task, waited for; the task's exception is raised here.

        After `stop`, what the worker handed back in time, or None for a task it never finished.
        A result is kept, and given again when asked again, until it is `release`d: an interruption
        that lands after it is returned and before the caller keeps it loses nothing.
        """
        while ticket not in self._done:
            if self._stopped:
                return None
            self._send_queued()
            if not any(worker.tickets and not worker.broken for worker in self._workers):
                raise WorkerLost("no worker process is left to finish the task")
            self._receive(None)
        finished, value = self._done[ticket]
        if not finished:
            raise value
        return value

    def release(self, ticket: int) -> None:
        """Let go of a task's result, taken with `result`; it is not asked for again."""
        self._done.pop(ticket, None)

    def stop(self, grace: float = 0.5) -> None:
        """Ask the busy workers to hand back what they have done, take it for up to ``grace`` seconds,
        then kill every worker. `result` gives what came back."""
        self._stopped = True
        self._queued.clear()
        for worker in self._workers:
            if worker.tickets and not worker.broken and worker.process.is_alive():
                _signal(worker.process, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while any(worker.tickets and not worker.broken for worker in self._workers):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._receive(left)
        self.kill()
        self._reap()

    def kill(self) -> None:
        """End every worker now, whatever it is doing."""
        for worker in self._workers:
            _signal(worker.process, signal.SIGKILL)

    # ------------------------------------------------------------------ inside

    def _send_queued(self) -> None:
        while self._queued and not self._stopped:
            ready = [w for w in self._workers if not w.broken and len(w.tickets) < _AHEAD]
            if not ready:
                return
            worker = min(ready, key=lambda w: len(w.tickets))
            ticket, message = self._queued.popleft()
            worker.tickets.append(ticket)
            try:
                with _interrupts.deferred(), _cut_marks_broken(worker):
                    _send(worker.connection, message)
            except OSError:  # the worker is gone (its socket is broken)
                self._lost(worker)

    def _receive(self, timeout: float | None) -> None:
        """Take the results that are ready, waiting up to ``timeout`` for one."""
        busy = [worker for worker in self._workers if worker.tickets and not worker.broken]
        if not busy:
            return
        waited = [worker.connection for worker in busy] + [worker.process.sentinel for worker in busy]
        ready = set(_wait(waited, timeout))
        for worker in busy:
            if worker.connection in ready:
                try:
                    # A result taken in is kept before a signal that came meanwhile is raised.
                    with _interrupts.deferred(), _cut_marks_broken(worker):
                        ticket, finished, value = pickle.loads(_receive(worker.connection))
                        worker.tickets.remove(ticket)
                        self._done[ticket] = (finished, value)
                except (EOFError, OSError):
                    self._lost(worker)
            elif worker.process.sentinel in ready:
                self._lost(worker)

    def _lost(self, worker: _Worker) -> None:
        worker.broken = True
        if not self._stopped:
            worker.process.join(_REAP_SECONDS)  # its socket ends a moment before it can be reaped
            code = worker.process.exitcode
            raise WorkerLost(f"a worker process ended with work outstanding (exit status {code})")

    def _close(self) -> None:
        """Every task done: close the sockets, which ends the workers, and wait for them."""
        for worker in self._workers:
            worker.connection.close()
        self._reap()

    def _reap(self) -> None:
        deadline = time.monotonic() + _REAP_SECONDS
        for worker in self._workers:
            worker.process.join(max(deadline - time.monotonic(), 0))
            if worker.process.exitcode is None:
                _signal(worker.process, signal.SIGKILL)
                worker.process.join(_REAP_SECONDS)
            if isinstance(worker.process, _Forked):
                with suppress(ValueError):  # still running, against all odds: its sentinel is kept
                    worker.process.close()
            worker.connection.close()
        _interrupts.disown(self)


# Forked by hand on Linux, where fork is safe; elsewhere (macOS, Windows) `multiprocessing` starts workers its
# platform's safe way.
_FORKED = sys.platform == "linux"


def _start(target: Callable[..., None], args: tuple[Any, ...]) -> Any:
    """A worker process running ``target(*args)``, started."""
    if _FORKED:
        return _Forked(target, args)
    import multiprocessing

    process = multiprocessing.get_context().Process(target=target, args=args, daemon=True)
    with _forking_beside_the_watcher():  # where the platform's way is to fork (the BSDs)
        process.start()
    return process


@contextmanager
def _forking_beside_the_watcher() -> Iterator[None]:
    """Fork without Python's warning of a fork beside threads when the only other thread is the signal
    watcher, which holds no lock a child could wait on (`_interrupts.only_the_watcher_beside`)."""
    with warnings.catch_warnings():
        if _interrupts.only_the_watcher_beside():
            warnings.filterwarnings("ignore", r"This process .* is multi-threaded", DeprecationWarning)
        yield


def _wait(waited: Sequence[Any], timeout: float | None) -> list[Any]:
    """Those of ``waited`` (sockets, and worker processes' sentinels) that are ready, waiting up to ``timeout``."""
    if not _FORKED:
        from multiprocessing.connection import wait

        return list(wait(waited, timeout))
    poller = select.poll()
    by_descriptor = {}
    for item in waited:
        descriptor = item if isinstance(item, int) else item.fileno()
        by_descriptor[descriptor] = item
        poller.register(descriptor, select.POLLIN)
    events = poller.poll(None if timeout is None else max(timeout, 0) * 1000)
    return [by_descriptor[descriptor] for descriptor, _ in events]


class _Forked:
    """A worker process forked without `multiprocessing`, which costs more to import than workers take to start.

    It offers what `Workers` asks of a process: ``pid``, ``sentinel`` (a descriptor that becomes
    readable when the process ends), ``exitcode`` once it is reaped, `is_alive` and `join`.
    """

    def __init__(self, target: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.sentinel, ending = os.pipe()  # the worker holds the writing end until it ends
        self.exitcode: int | None = None
        for stream in (sys.stdout, sys.stderr):
            with suppress(Exception):
                stream.flush()  # what is buffered here is not written again by the worker
        try:
            with _forking_beside_the_watcher():
                self.pid = os.fork()
        except BaseException:  # not started (too many processes, too little memory): nothing is held
            os.close(self.sentinel)
            os.close(ending)
            raise
        if self.pid == 0:
            status = 1
            try:
                os.close(self.sentinel)
                target(*args)
                status = 0
            except BaseException:
                with suppress(BaseException):
                    import traceback

                    traceback.print_exc()
            finally:
                os._exit(status)  # never back into the parent's code
        os.close(ending)

    def is_alive(self) -> bool:
        return self._reaped(os.WNOHANG) is None

    def join(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` seconds for the process to end, and reap it."""
        if self.exitcode is None and (timeout is None or _wait([self.sentinel], timeout)):
            self._reaped(0)

    def _reaped(self, options: int) -> int | None:
        if self.exitcode is None:
            with suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, options)
                if pid == self.pid:
                    self.exitcode = os.waitstatus_to_exitcode(status)
        return self.exitcode

    def close(self) -> None:
        """Release the sentinel of a process that was reaped; it can still be asked about, and closed again."""
        if self.exitcode is None:
            raise ValueError("the worker process is still running")
        if self.sentinel >= 0:
            os.close(self.sentinel)
            self.sentinel = -1


def _signal(process: Any, signum: int) -> None:
    if process.pid is None or process.exitcode is not None:
        return
    with suppress(ProcessLookupError, PermissionError):
        os.kill(process.pid, signum)


@contextmanager
def _signals_blocked() -> Any:
    """SIGINT and SIGTERM held back while workers start: a new worker sets its own handling first."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


@contextmanager
def _cut_marks_broken(worker: _Worker) -> Any:
    try:
        yield
    except BaseException:
        worker.broken = True
        raise


# ------------------------------------------------------------------------------------------ worker side


# ------------------------------------------------------------------------------------------ messages

_HEADER = struct.Struct("!Q")


def _send(connection: socket.socket, message: bytes) -> None:
    connection.sendall(_HEADER.pack(len(message)))
    connection.sendall(message)


def _receive(connection: socket.socket) -> bytearray:
    """One message, read whole; `EOFError` when the other end has closed."""
    size = _HEADER.unpack(_exactly(connection, _HEADER.size))[0]
    return _exactly(connection, size)


def _exactly(connection: socket.socket, size: int) -> bytearray:
    # MSG_WAITALL: one call for the whole message, so that a worker's thread that reads the next task
    # takes the interpreter's lock once per task, not once per buffer of the socket.
    data = bytearray(size)
    view = memoryview(data)
    got = 0
    while got < size:
        count = connection.recv_into(view[got:], size - got, socket.MSG_WAITALL)
        if count == 0:
            raise EOFError("the other end closed")
        got += count
    return data


def _serve(connection: socket.socket, inherited: list[socket.socket]) -> None:
    """In a worker: run the tasks that come down the socket, in order, and send each result back."""
    _interrupts.as_worker()
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    for other in inherited:
        other.close()
    tasks: queue.SimpleQueue[bytearray] = queue.SimpleQueue()
    threading.Thread(target=_take_tasks, args=(connection, tasks), daemon=True).start()
    while True:
        ticket, function, argument = pickle.loads(tasks.get())
        try:
            outcome = (ticket, True, function(argument))
        except BaseException as error:  # handed to the parent, which raises it
            outcome = (ticket, False, error)
        try:
            message = pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # a result or exception that cannot be pickled
            message = pickle.dumps((ticket, False, RuntimeError(f"a worker's result cannot be sent: {error}")))
        _send(connection, message)


def _take_tasks(connection: socket.socket, tasks: queue.SimpleQueue[bytearray]) -> None:
    """Read tasks as they come, so that the parent never waits on a worker busy sending a result;
    end the process when the parent closes its end or goes away."""
    while True:
        try:
            tasks.put(_receive(connection))
        except (EOFError, OSError):
            os._exit(0)
