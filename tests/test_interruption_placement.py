"""An interruption is raised where the ``except`` around the running loop catches it, on every Python.

Python 3.13 takes a pending signal at a loop's back edge before the jump, and its compiler leaves
some back edges out of the exception table of the ``try`` around the loop (python/cpython#130279):
raised there, Ctrl-C passed the handler that keeps a partial report, and `validate` printed an empty
summary. The loops below have the shape that showed it: a body ending in a condition, after work
in C that looks for no signal (an operator, not a call: a call looks for them as it returns), so
that a signal that comes meanwhile is taken at the back edge.
"""

from __future__ import annotations

import contextlib
import dis
import itertools
import os
import signal
import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterator

import pytest

from gym_contract import Report, _interrupts, check_files
from tests.support import REPO

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="signals sent by os.kill")

BLOCK = bytes(range(256)) * 8192
TWIN = bytes(bytearray(BLOCK))  # comparing the two is about 0.15 ms of C code that looks for no signal


def _nothing() -> None:
    return None


def _python_part() -> None:
    """About as long as comparing `BLOCK` and `TWIN`, spent starting Python calls: places where a
    signal is taken safely."""
    for _ in range(8000):
        _nothing()


def _checked_until_interrupted(progress: object) -> tuple[bool, int]:
    """Work as `validate` does, in a loop inside a ``try``; whether the ``except`` caught the
    interruption, and how many rounds were done."""
    rounds = 0
    try:
        for index in itertools.count():
            _python_part()
            rounds += BLOCK == TWIN  # a signal that comes meanwhile is taken at the back edge, below
            if progress and index % 64 == 0:
                _nothing()
    except KeyboardInterrupt:
        return True, rounds
    return False, rounds


def _in_c_only_until_interrupted(progress: object) -> bool:
    """A loop that calls no Python function: the back edge is the only place a signal is taken."""
    try:
        for index in itertools.count():
            same = BLOCK == TWIN
            if progress and index % 64 == 0:
                same = not same
    except KeyboardInterrupt:
        return True
    return False


def _signal_soon(signum: int, after: float) -> subprocess.Popen[bytes]:
    """Send ``signum`` to this process from another one: a thread of this one would need the
    interpreter's lock to send it, and so would send it only where the main thread lets go of it."""
    return subprocess.Popen(["/bin/sh", "-c", f"sleep {after:.4f}; kill -{int(signum)} {os.getpid()}"])


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interruption_in_a_loop_reaches_the_except_around_it(signum):
    escaped = 0
    for attempt in range(20):
        with _interrupts.handling():
            timer = _signal_soon(signum, 0.01 + attempt * 0.0007)  # at every phase of a round
            try:
                caught, rounds = _checked_until_interrupted(progress=None)
            except KeyboardInterrupt:
                escaped += 1
            else:
                assert caught
                assert rounds >= 0
            timer.wait()
    assert escaped == 0, f"{escaped} of 20 interruptions passed the except around the loop"


def test_an_interruption_in_a_loop_with_no_safe_place_still_comes_within_a_bound():
    with _interrupts.handling():
        sender = _signal_soon(signal.SIGINT, 0.01)
        started = time.monotonic()
        # Where Python leaves the back edge out of the try, the interruption passes the except: late, not never.
        with contextlib.suppress(KeyboardInterrupt):
            _in_c_only_until_interrupted(progress=None)
        waited = time.monotonic() - started
        sender.wait()
    assert waited < 0.01 + _interrupts._PATIENCE + 1.0


def _signalled_in_a_deferred_block() -> None:
    with _interrupts.deferred():
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100):  # still inside: nothing is raised until the block ends
            _python_part()


def test_an_interruption_in_a_deferred_block_is_still_raised_on_leaving_it():
    with _interrupts.handling():
        with pytest.raises(KeyboardInterrupt):
            _signalled_in_a_deferred_block()
        assert _interrupts.received() == signal.SIGINT


def _checked_under_pythons_own_handler(check: Callable[[], Report], senders: list[subprocess.Popen[bytes]]) -> Report:
    """``check()`` run as a library caller runs it, with Python's own SIGINT handler, while ``senders``
    signal it; the test fails if Ctrl-C passes the check."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        report = check()
        senders[0].wait()
        time.sleep(0.05)  # a signal that came after the check ended is raised here, not in the next test
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C passed check_files")
    finally:
        signal.signal(signal.SIGINT, previous)
    return report


def test_check_files_interrupted_under_pythons_own_handler_keeps_what_it_checked(tmp_path):
    """A library caller installs no handler of ours: Ctrl-C is Python's `KeyboardInterrupt`, taken
    wherever the interpreter looks for signals, and the report still holds the lines checked."""
    rollouts = (REPO / "examples" / "rollouts.jsonl").read_bytes()
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes(rollouts * (30_000_000 // len(rollouts)))
    senders: list[subprocess.Popen[bytes]] = []

    def signal_once_at_work(done: int, total: int | None) -> None:
        if not senders and done >= 2_000_000:
            senders.append(_signal_soon(signal.SIGINT, 0.01))

    report = _checked_under_pythons_own_handler(lambda: check_files([str(path)], progress=signal_once_at_work), senders)
    assert report.interrupted
    assert report.inputs == [str(path)]
    assert 0 < report.records < rollouts.count(b"\n") * (30_000_000 // len(rollouts))
    assert report.lines == report.records + report.blank_lines + report.damaged_lines


def test_check_files_with_workers_interrupted_under_pythons_own_handler_ends_them_and_keeps_a_report(tmp_path):
    """With two jobs the parent waits on its workers: Ctrl-C there stops them, takes back what they
    had checked, and leaves no worker process behind."""
    rollouts = (REPO / "examples" / "rollouts.jsonl").read_bytes()
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_bytes(rollouts)
    large.write_bytes(rollouts * (30_000_000 // len(rollouts)))
    senders: list[subprocess.Popen[bytes]] = []

    def signal_after_the_first_input(done: int, total: int | None) -> None:
        # The workers are checking the large input meanwhile, on the precise path, for a good part of a second.
        if not senders:
            senders.append(_signal_soon(signal.SIGINT, 0.01))

    report = _checked_under_pythons_own_handler(
        lambda: check_files([str(small), str(large)], jobs=2, fast=False, progress=signal_after_the_first_input),
        senders,
    )
    assert report.interrupted, "the check ended before the signal came"
    assert report.inputs[0] == str(small)
    assert rollouts.count(b"\n") <= report.records < rollouts.count(b"\n") * (1 + 30_000_000 // len(rollouts))
    assert report.lines == report.records + report.blank_lines + report.damaged_lines
    with pytest.raises(ChildProcessError):  # every worker was ended and reaped
        os.waitpid(-1, os.WNOHANG)


def _interrupted_once_a_result_is_returned(monkeypatch: pytest.MonkeyPatch) -> list[Report]:
    """`Workers.result` raising Ctrl-C just after it returns its first report: the gap between a
    result handed over and the caller keeping it. The report handed over is listed."""
    from gym_contract._workers import Workers

    handed: list[Report] = []
    result = Workers.result

    def interrupted_on_return(self: Workers, ticket: int) -> Report | None:
        part = result(self, ticket)
        if part is not None and not handed:
            handed.append(part)
            raise KeyboardInterrupt
        return part

    monkeypatch.setattr(Workers, "result", interrupted_on_return)
    return handed


@pytest.mark.parametrize("compressed", [False, True], ids=["shares of a plain file", "batches of a gzip file"])
def test_an_interruption_as_a_workers_result_is_returned_loses_nothing_of_it(tmp_path, monkeypatch, compressed):
    import gzip

    from gym_contract.validation import _streamed

    rollouts = (REPO / "examples" / "rollouts.jsonl").read_bytes()
    data = rollouts * (3_000_000 // len(rollouts))
    path = tmp_path / ("rollouts.jsonl.gz" if compressed else "rollouts.jsonl")
    path.write_bytes(gzip.compress(data) if compressed else data)
    monkeypatch.setattr(_streamed, "_BATCH_BYTES", 100_000)
    handed = _interrupted_once_a_result_is_returned(monkeypatch)
    report = check_files([str(path)], jobs=2)
    assert report.interrupted
    assert 0 < handed[0].records <= report.records  # the result handed over is in the report
    assert report.lines == report.records + report.blank_lines + report.damaged_lines


def test_a_library_callers_ctrl_c_during_a_merge_waits_for_the_merge_to_end(tmp_path, monkeypatch):
    """Under Python's own handler too, a report is merged whole: Ctrl-C is raised once it is."""
    rollouts = (REPO / "examples" / "rollouts.jsonl").read_bytes()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(rollouts)
    second.write_bytes(rollouts)
    merge = Report.merge

    def signalled_while_merging(self: Report, part: Report) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # taken at the next call, the merge's own
        merge(self, part)

    monkeypatch.setattr(Report, "merge", signalled_while_merging)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        report = check_files([str(first), str(second)])
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the caller's handler is back
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C passed check_files")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert report.interrupted
    assert report.inputs == [str(first)]  # the first input merged whole, the second never read
    assert report.records == rollouts.count(b"\n")


def test_a_handler_the_caller_installed_is_left_in_place(tmp_path):
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes((REPO / "examples" / "rollouts.jsonl").read_bytes())

    def callers_own(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, callers_own)
    seen: list[object] = []
    try:
        check_files([str(path)], progress=lambda done, total: seen.append(signal.getsignal(signal.SIGINT)))
        assert signal.getsignal(signal.SIGINT) is callers_own
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen
    assert all(handler is callers_own for handler in seen)


# ------------------------------------------------------------------------------------------ the law


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_objects(constant)


def _catches_an_interruption(instructions: dict[int, dis.Instruction], target: int, offsets: list[int]) -> bool:
    """Whether the handler at ``target`` runs for an interruption: a ``with``, a ``finally``, a bare
    ``except``, or an ``except`` naming KeyboardInterrupt or a class above or below it in this package."""
    after = offsets[offsets.index(target) + 1 :]
    names = []
    for offset in after[:4]:
        instruction = instructions[offset]
        if instruction.opname == "CHECK_EXC_MATCH":
            return bool({"KeyboardInterrupt", "BaseException", "Terminated", "Stopped"} & set(names))
        if instruction.opname in {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR"}:
            names.append(str(instruction.argval))
    return True


# A handler skipped with nothing lost: the frame's end releases the view or closes the file as its exit would.
_SKIPPED_AS_HARMLESS = {
    "reading/_records.py:iter_lines",  # a memoryview of the bytes read
    "reading/_sources.py:_line_start_after",  # a file of its own, closed in its finally
    "producers/codex/_read.py:_read_file",  # a file read
}


def _unguarded_back_edges(code: types.CodeType) -> Iterator[int]:
    """The lines of the back edges in ``code`` that a handler around their loop's head does not cover."""
    bytecode = dis.Bytecode(code)
    instructions = {instruction.offset: instruction for instruction in bytecode}
    offsets = sorted(instructions)
    guards = [
        entry
        for entry in bytecode.exception_entries  # type: ignore[attr-defined]  # there from 3.11, not in the stubs
        if instructions[entry.target].opname == "PUSH_EXC_INFO"  # not the interpreter's own cleanup
        and _catches_an_interruption(instructions, entry.target, offsets)
    ]

    def guarding(at: int) -> set[int]:
        return {entry.target for entry in guards if entry.start <= at < entry.end}

    for instruction in bytecode:
        if instruction.opname == "JUMP_BACKWARD" and guarding(instruction.argval) - guarding(instruction.offset):
            yield instruction.positions.lineno if instruction.positions else 0


@pytest.mark.skipif(sys.version_info < (3, 13), reason="earlier Pythons take signals at the loop's head")
def test_no_loop_can_be_interrupted_past_the_handler_around_it():
    """Where Python 3.13 leaves a loop's back edge out of a ``try`` or ``with`` around the loop, a
    signal taken there passes its handler: the loops that such a handler guards run in functions of
    their own, which the handler covers as a call."""
    package = REPO / "gym_contract"
    skipping = {
        f"{where} line {line}"
        for path in sorted(package.rglob("*.py"))
        for code in _code_objects(compile(path.read_text(encoding="utf-8"), str(path), "exec"))
        if (where := f"{path.relative_to(package).as_posix()}:{code.co_name}") not in _SKIPPED_AS_HARMLESS
        for line in _unguarded_back_edges(code)
    }
    assert not skipping, "loops whose back edge a handler around them does not cover: " + ", ".join(sorted(skipping))
