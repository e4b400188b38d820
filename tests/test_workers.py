"""Worker processes as the package starts them: results in order, nothing held once ended, nothing heavy imported."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys

import pytest

from gym_contract import _interrupts, _workers
from gym_contract._workers import WorkerLost, Workers

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="workers are forked by hand on Linux only")


def _square(value: int) -> int:
    return value * value


def _exit_now(status: int) -> None:
    os._exit(status)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@linux_only
def test_workers_started_and_ended_again_and_again_hold_no_descriptor():
    before = _open_descriptors()
    for _ in range(10):
        with Workers(2) as workers:
            tickets = [workers.submit(_square, value) for value in range(7)]
            assert [workers.result(ticket) for ticket in tickets] == [value * value for value in range(7)]
    assert _open_descriptors() == before


@linux_only
def test_a_worker_that_ends_with_work_outstanding_is_told_with_its_exit_status():
    before = _open_descriptors()
    with pytest.raises(WorkerLost, match=r"exit status 3\)"), Workers(1) as workers:
        workers.result(workers.submit(_exit_now, 3))
    assert _open_descriptors() == before


@linux_only
def test_starting_workers_imports_no_multiprocessing():
    # Importing it costs a run with workers more than starting them does.
    script = (
        "import sys\n"
        "from gym_contract._workers import Workers\n"
        "with Workers(2) as workers:\n"
        "    assert workers.result(workers.submit(abs, -4)) == 4\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'multiprocessing'))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _slow(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


@pytest.mark.parametrize("forked", [True, False], ids=["forked by hand", "multiprocessing"])
def test_workers_stopped_with_work_outstanding_end_and_can_be_left_again(monkeypatch, forked):
    # Started the way other platforms start them too: `multiprocessing`'s processes, reaped twice.
    monkeypatch.setattr(_workers, "_FORKED", forked and sys.platform == "linux")
    with Workers(2) as workers:
        assert workers.result(workers.submit(_square, 3)) == 9
        tickets = [workers.submit(_slow, 5.0) for _ in range(2)]
        workers.stop(grace=0.1)
        assert [workers.result(ticket) for ticket in tickets] == [None, None]
    assert all(worker.process.exitcode is not None for worker in workers._workers)


def test_a_result_is_given_again_until_it_is_released():
    with Workers(1) as workers:
        ticket = workers.submit(_square, 4)
        assert workers.result(ticket) == 16
        assert workers.result(ticket) == 16  # an interruption after the first is given loses nothing
        workers.release(ticket)
        workers.stop()
        assert workers.result(ticket) is None


def test_workers_are_owned_until_they_are_reaped():
    """A process that must end at once kills the workers it owns; those reaped are let go at once,
    without a weak reference's callback, where Python's own handler would lose a Ctrl-C."""
    with Workers(1) as workers:
        assert workers in _interrupts._owners
    assert workers not in _interrupts._owners


@linux_only
def test_a_result_taken_in_as_a_signal_comes_is_handed_back_after_the_stop(monkeypatch):
    taken_in = _workers._receive

    def signalled_meanwhile(connection):
        message = taken_in(connection)
        os.kill(os.getpid(), signal.SIGINT)  # noted while the message is taken in, raised after
        return message

    # The worker is forked before `handling` starts its thread: Python 3.12 on warns of a fork beside one.
    with Workers(1) as workers, _interrupts.handling():
        ticket = workers.submit(_square, 3)
        monkeypatch.setattr(_workers, "_receive", signalled_meanwhile)
        with pytest.raises(KeyboardInterrupt):
            workers.result(ticket)
        workers.stop()
        assert workers.result(ticket) == 9


@linux_only
def test_workers_that_cannot_all_be_started_leave_no_descriptor_and_no_process(monkeypatch):
    forked: list[int] = []
    fork = os.fork

    def fork_once() -> int:
        if forked:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
        forked.append(fork())
        return forked[-1]

    monkeypatch.setattr(os, "fork", fork_once)
    before = _open_descriptors()
    with pytest.raises(BlockingIOError):
        Workers(2)
    assert _open_descriptors() == before
    with pytest.raises(ChildProcessError):  # the worker that started was ended and reaped
        os.waitpid(forked[0], os.WNOHANG)


@linux_only
@pytest.mark.parametrize("callers_thread", [False, True], ids=["the signal watcher alone", "a thread of the caller's"])
def test_a_fork_beside_threads_is_warned_of_only_where_a_thread_may_hold_a_lock(callers_thread):
    # Python 3.12 on warns of a fork beside threads; the signal watcher holds no lock, a thread of the caller's may.
    script = (
        "import sys, threading, warnings\n"
        "from gym_contract import _interrupts\n"
        "from gym_contract._workers import Workers\n"
        "warnings.simplefilter('always')\n"
        "stop = threading.Event()\n"
        "if sys.argv[1] == 'True':\n"
        "    threading.Thread(target=stop.wait, daemon=True).start()\n"
        "with _interrupts.handling(), warnings.catch_warnings(record=True) as seen, Workers(2) as workers:\n"
        "    assert workers.result(workers.submit(abs, -4)) == 4\n"
        "stop.set()\n"
        "print(sum('multi-threaded' in str(warning.message) for warning in seen))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(callers_thread)], capture_output=True, text=True, check=True
    )
    warned = int(done.stdout.strip())
    assert warned == (2 if callers_thread and sys.version_info >= (3, 12) else 0)  # one per worker
