"""Ctrl-C and SIGTERM as a terminal, a shell or a CI runner sends them: to the command or to its whole
process group, once or again while it stops. Every command ends within a bound, with 130 or 143, says
what it did before the signal, and leaves no process behind.

The commands run as real processes in a session of their own, so that the group can be signalled and
every process they started found in /proc. A command is signalled once it is demonstrably at work (its
workers started and reading, or its input open and partly read); it is paused (SIGSTOP) between that
observation and the signal, so that a fast machine cannot finish the work first.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import REPO

pytestmark = pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="follows processes through /proc (Linux)")

COMMAND = [sys.executable, "-m", "gym_contract"]
CLEAN = REPO / "examples" / "rollouts.jsonl"
INT, TERM = signal.SIGINT, signal.SIGTERM
# Generous, for a loaded machine; the times measured are printed (pytest -s) and are well under a second.
BOUND_SECONDS = 5.0
PARTIAL_TEXT = "interrupted: this summary covers only the lines read before the interruption"
PARTIAL_SAID = "gym-contract: interrupted: the summary covers only the lines read before it"


# ------------------------------------------------------------------------------------------ inputs


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two plain JSONL files of about 60 MB of clean rollouts: a large plain file is cut into shares.

    Every run here is interrupted, so their size costs only their writing; it is what keeps a command
    at work between the moment a test sees it reading and its signal (one job checks about 300 MB a
    second here), whatever else a busy machine runs meanwhile."""
    folder = tmp_path_factory.mktemp("interrupts")
    lines = CLEAN.read_bytes()
    paths = (folder / "a.jsonl", folder / "b.jsonl")
    for path in paths:
        path.write_bytes(lines * (60_000_000 // len(lines) + 1))
    return paths


def _lines(path: Path) -> int:
    with path.open("rb") as file:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: file.read(1 << 20), b""))


# ------------------------------------------------------------------------------------------ processes


def _session(leader: int) -> dict[int, str]:
    """The live processes (zombies are not) of the session ``leader`` started: pid and state."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, _, _, session = stat[stat.rindex(")") + 2 :].split()[:4]
        if int(session) == leader and state != "Z":
            found[int(entry)] = state
    return found


def _bytes_read(pid: int) -> int:
    """What a process read since it started, by its I/O counters (a forked worker starts at 0)."""
    try:
        text = Path(f"/proc/{pid}/io").read_text()
    except OSError:
        return 0
    return int(text.split("rchar:")[1].split()[0])


def _offset_in(pid: int, inputs: tuple[Path, ...]) -> int:
    """How far a process has read into the inputs it holds open (its file positions)."""
    names = {str(path.resolve()) for path in inputs}
    furthest = 0
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{descriptor}") in names:
                position = Path(f"/proc/{pid}/fdinfo/{descriptor}").read_text().split()[1]
                furthest = max(furthest, int(position))
        except (OSError, IndexError, ValueError):
            continue
    return furthest


@dataclass
class Run:
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path
    seconds: float = 0.0
    """From the moment the signal could act (the command resumed) to its end."""

    @property
    def output(self) -> str:
        return self.stdout.read_text()

    @property
    def said(self) -> list[str]:
        return self.stderr.read_text().splitlines()


def _start(arguments: list[str], tmp_path: Path, stdin: int | None = None, program: list[str] = COMMAND) -> Run:
    stdout, stderr = tmp_path / "stdout", tmp_path / "stderr"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(
            [*program, *arguments], stdin=stdin, stdout=out, stderr=err, cwd=REPO, start_new_session=True
        )
    return Run(process, stdout, stderr)


def _until(run: Run, ready: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert run.process.poll() is None, f"the command ended before {what}: {run.stderr.read_text()}"
        assert time.monotonic() < deadline, f"the command did not get to {what} in {timeout} s"
        time.sleep(0.01)


def _workers_at_work(run: Run, workers: int, working: Callable[[int], bool] | None = None) -> list[int]:
    """Wait until the command has ``workers`` worker processes, each of which is ``working`` (by
    default: has read 2 MB of its input)."""
    found: list[int] = []
    working = working or (lambda pid: _bytes_read(pid) >= 2_000_000)

    def at_work() -> bool:
        found[:] = [pid for pid in _session(run.process.pid) if pid != run.process.pid]
        return len(found) >= workers and all(working(pid) for pid in found)

    _until(run, at_work, f"{workers} workers at work")
    return found


def _reading(run: Run, inputs: tuple[Path, ...], at_least: int = 2_000_000) -> None:
    """Wait until the command itself has read ``at_least`` bytes into its inputs."""
    _until(run, lambda: _offset_in(run.process.pid, inputs) >= at_least, "reading its input")


def _interrupt(
    run: Run,
    signals: list[int],
    *,
    group: bool,
    gap: float = 0.01,
    pause: bool = True,
    acting: Callable[[], bool] | None = None,
) -> Run:
    """Pause the session, send the first signal, resume; once the command has taken it (and, given
    ``acting``, shows that it acts on it), send the others ``gap`` seconds apart; wait for its end."""
    pid = run.process.pid
    if pause:
        os.killpg(pid, signal.SIGSTOP)
    send = os.killpg if group else os.kill
    send(pid, signals[0])
    started = time.monotonic()
    if pause:
        os.killpg(pid, signal.SIGCONT)
    if signals[1:]:
        # Signals pending together are taken lowest number first: the next waits until this one is taken.
        deadline = time.monotonic() + 10
        while run.process.poll() is None and time.monotonic() < deadline:
            if _taken(pid, signals[0]) and (acting is None or acting()):
                break
            time.sleep(0.002)
    for again in signals[1:]:
        time.sleep(gap)
        try:
            send(pid, again)
        except ProcessLookupError:  # already gone: the first signal was enough
            break
    try:
        run.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the command did not end: {_describe(pid)}; it said {run.stderr.read_text()!r}")
    finally:
        run.seconds = time.monotonic() - started
        _end_session(pid)
    print(f"\n  exit {run.process.returncode} {run.seconds:.2f} s after the signal")
    return run


def _taken(pid: int, signum: int) -> bool:
    """Whether a signal is no longer pending for a process: delivered, or the process gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return True
    pending = [int(line.split()[1], 16) for line in status if line.startswith(("SigPnd", "ShdPnd"))]
    return not any(mask >> (signum - 1) & 1 for mask in pending)


def _workers_ended(leader: int, workers: list[int]) -> Callable[[], bool]:
    """Whether one of the workers has ended: the command has acted on the signal it was sent."""
    return lambda: any(pid not in _session(leader) for pid in workers)


def _idle(pid: int) -> bool:
    """Whether a worker has done its work and waits: every thread of it asleep, and still so a moment later."""
    for _ in range(3):
        try:
            threads = os.listdir(f"/proc/{pid}/task")
            states = [Path(f"/proc/{pid}/task/{thread}/stat").read_text() for thread in threads]
        except OSError:
            return False
        if any(stat[stat.rindex(")") + 2] != "S" for stat in states):
            return False
        time.sleep(0.02)
    return True


def _describe(pid: int) -> str:
    """What a process that does not end is doing: its state, signals and threads, and where it waits."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        waiting = Path(f"/proc/{pid}/wchan").read_text()
    except OSError as error:
        return str(error)
    wanted = ("State", "Threads", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt")
    return "; ".join(line for line in status if line.startswith(wanted)) + f"; waits in {waiting}"


def _end_session(leader: int) -> None:
    """Whatever a failing command left is killed, so that one failure does not load the next tests."""
    for pid in _session(leader):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _nothing_left(leader: int) -> None:
    deadline = time.monotonic() + 1.0  # a process killed a moment ago may still be on its way out
    while (left := _session(leader)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not left, f"processes outlived the command: {left}"


def _ended_well(run: Run, status: int) -> None:
    assert run.process.returncode == status, run.stderr.read_text()
    assert run.seconds < BOUND_SECONDS
    assert "Traceback" not in run.stderr.read_text()
    _nothing_left(run.process.pid)


def _partial(report: dict[str, object], whole: int) -> None:
    assert report["interrupted"] is True
    assert report["verdict"] == "interrupted"  # the clean lines read are no pass for the lines not read
    records = report["records"]
    assert isinstance(records, int)
    assert 0 < records < whole
    assert report["lines"] == report["blank_lines"] + report["damaged_lines"] + records  # type: ignore[operator]


# ------------------------------------------------------------------------------------------ validate --jobs


@pytest.mark.parametrize(
    ("signals", "group", "status"),
    [
        ([INT], False, 130),
        ([INT], True, 130),
        ([INT, INT, INT], True, 130),
        ([TERM], False, 143),
        ([TERM], True, 143),
        ([TERM, INT], True, 143),
    ],
    ids=["int", "int-group", "int-thrice-group", "term", "term-group", "term-then-int-group"],
)
def test_a_run_with_workers_ends_every_worker_and_prints_the_partial_summary(corpus, tmp_path, signals, group, status):
    run = _start(["validate", "--jobs", "2", "--format", "json", *map(str, corpus)], tmp_path)
    workers = _workers_at_work(run, 2)
    # The same signal again comes while the command acts on the first; another one, once it shows it does.
    acting = _workers_ended(run.process.pid, workers) if len(set(signals)) > 1 else None
    _interrupt(run, signals, group=group, acting=acting)
    _ended_well(run, status)
    report = json.loads(run.output)
    _partial(report, 2 * _lines(corpus[0]))
    assert report["inputs"][0] == str(corpus[0])
    assert run.said == [PARTIAL_SAID]


def test_a_second_ctrl_c_half_a_second_later_changes_nothing(corpus, tmp_path):
    run = _start(["validate", "--jobs", "2", "--format", "json", *map(str, corpus)], tmp_path)
    _workers_at_work(run, 2)
    _interrupt(run, [INT, INT], group=True, gap=0.5)
    _ended_well(run, 130)
    _partial(json.loads(run.output), 2 * _lines(corpus[0]))


def test_a_stream_checked_in_batches_by_workers_gives_the_batches_checked(corpus, tmp_path):
    """stdin with --jobs 2, from a producer that pauses: the parent reads, the workers check in batches;
    Ctrl-C while the parent waits for more gives the summary of the batches checked."""
    data = corpus[0].read_bytes()[:10_000_000]
    data = data[: data.rindex(b"\n") + 1]  # two batches of 4 MB go to the workers; the rest waits for more
    reader, writer = os.pipe()
    run = _start(["validate", "--jobs", "2", "--format", "json", "-"], tmp_path, stdin=reader)
    os.close(reader)
    producer = threading.Thread(target=os.write, args=(writer, data), daemon=True)
    producer.start()
    try:
        # Once the producer's write returns, the parent has read all but what the pipe holds (64 KB at
        # most), so it has handed out both batches; which worker took which is the scheduler's choice
        # (on a busy machine one worker may take both). They are checked once every worker waits again.
        producer.join(120)
        workers = [pid for pid in _session(run.process.pid) if pid != run.process.pid]
        _until(run, lambda: all(_idle(pid) for pid in workers), "checking the two batches")
        _interrupt(run, [INT], group=True)
    finally:
        os.close(writer)
    _ended_well(run, 130)
    report = json.loads(run.output)
    _partial(report, data.count(b"\n"))
    assert report["records"] >= 2 * 4_000_000 // max(map(len, data.splitlines()))  # both batches whole
    assert report["lines"] == report["records"]  # the corpus has no blank line: every line counted is checked


def test_one_job_prints_the_partial_summary_on_sigterm(corpus, tmp_path):
    run = _start(["validate", "--format", "json", str(corpus[0])], tmp_path)
    _reading(run, corpus)
    _interrupt(run, [TERM], group=True)
    _ended_well(run, 143)
    _partial(json.loads(run.output), _lines(corpus[0]))


@pytest.mark.parametrize(
    ("form", "jobs"), [("text", "1"), ("text", "2"), ("sarif", "2"), ("junit", "2"), ("github", "2")]
)
def test_every_format_says_the_run_was_cut_short(corpus, tmp_path, form, jobs):
    run = _start(["validate", "--jobs", jobs, "--format", form, *map(str, corpus)], tmp_path)
    if jobs == "1":
        _reading(run, corpus)
    else:
        _workers_at_work(run, 2)
    _interrupt(run, [INT], group=True)
    _ended_well(run, 130)
    output = run.output
    if form == "text":
        assert "INTERRUPTED (fail on error)\n" in output
        assert PARTIAL_TEXT in output
        assert "PASS" not in output
    elif form == "sarif":
        invocation = json.loads(output)["runs"][0]["invocations"][0]
        assert invocation == {"executionSuccessful": False, "exitCode": 130}
        assert json.loads(output)["runs"][0]["properties"]["summary"]["verdict"] == "interrupted"
    elif form == "junit":
        assert '<testsuite name="interrupted" tests="1" failures="0" errors="1">' in output
        assert '<error type="interrupted"' in output
    else:
        assert "::error title=interrupted::" in output
        assert output.splitlines()[-1].startswith("gym-contract: INTERRUPTED (fail on error): ")


# ------------------------------------------------------------------------------------------ the other commands


def test_report_of_an_interrupted_run_is_no_pass_on_the_page_or_the_terminal(corpus, tmp_path):
    pytest.importorskip("jinja2")
    page = tmp_path / "report.html"
    run = _start(["report", str(corpus[0]), "-o", str(page)], tmp_path)
    _reading(run, corpus)
    _interrupt(run, [INT], group=True)
    _ended_well(run, 130)
    assert ", INTERRUPTED, " in run.output
    assert "PASS" not in run.output
    assert run.said == ["gym-contract: interrupted: the page covers only the lines read before it"]
    html = page.read_text()
    assert 'class="verdict interrupted"' in html
    assert "interrupted: the counts cover only the lines read before it" in html


@pytest.mark.parametrize("form", ["json", "markdown"])
def test_coverage_rates_the_rollouts_read_and_says_so(corpus, tmp_path, form):
    run = _start(["coverage", "--format", form, str(corpus[0])], tmp_path)
    _reading(run, corpus)
    _interrupt(run, [TERM], group=True)
    _ended_well(run, 143)
    assert run.said == ["gym-contract: interrupted: the matrix rates only the rollouts read before it"]
    if form == "json":
        document = json.loads(run.output)
        assert document["interrupted"] is True
        assert 0 < document["rollouts"] < _lines(corpus[0])
    else:
        assert "interrupted: this matrix rates only the rollouts read before the interruption" in run.output


def test_project_writes_whole_records_and_a_summary_that_says_it_stopped(corpus, tmp_path):
    out = tmp_path / "projected.jsonl"
    run = _start(["project", str(corpus[0]), "-o", str(out)], tmp_path)
    _reading(run, corpus)
    _interrupt(run, [INT, INT], group=True)
    _ended_well(run, 130)
    summary = json.loads(run.output)
    assert summary["interrupted"] is True
    written = out.read_bytes().splitlines()
    assert 0 < summary["rollouts"] == len(written) < _lines(corpus[0])
    for line in written:
        json.loads(line)  # no record cut in two


def test_export_atif_leaves_only_whole_trajectories(corpus, tmp_path):
    folder = tmp_path / "atif"
    run = _start(["export", "atif", str(corpus[0]), "-o", str(folder)], tmp_path)
    _reading(run, corpus)
    _interrupt(run, [TERM], group=True)
    _ended_well(run, 143)
    assert run.said[-1] == "gym-contract: interrupted"
    written = list(folder.iterdir())
    assert written
    assert sorted(run.output.split()) == sorted(map(str, written))
    for path in written:
        json.loads(path.read_bytes())


# Every command that reads a file, given one that never ends: each is stopped while it waits for more.
READERS = [
    ["validate", "{jsonl}"],
    ["validate", "{json}"],
    ["coverage", "{jsonl}"],
    ["project", "{jsonl}"],
    ["report", "{jsonl}", "-o", "{out}/report.html"],
    ["export", "atif", "{jsonl}", "-o", "{out}/atif"],
    ["export", "otel", "{jsonl}", "-o", "{out}/spans.json"],
    ["lineage", "{jsonl}"],
    ["join", "{json}", "--capture", "examples/capture", "--rollout-id", "7-0"],
    ["observe", "atif", "{json}"],
    ["observe", "claude-code", "examples/claude-code", "--stream", "{jsonl}"],
    ["outcome", "opencode", "{json}"],
    ["outcome", "claude-code", "{jsonl}"],
    ["decide", "{json}"],
]


@pytest.fixture
def endless(tmp_path: Path) -> tuple[Path, Path]:
    """Two named pipes, `.jsonl` and `.json`: what is written to them comes, and then nothing more."""
    # Named as a capture file, which `lineage` asks of its input.
    pipes = (tmp_path / "7-0.capture.jsonl", tmp_path / "endless.json")
    for pipe in pipes:
        os.mkfifo(pipe)
    return pipes


# Each command gets one of the two signals, in turn: both are met by commands of every kind.
@pytest.mark.parametrize(
    ("arguments", "signum", "status"),
    [(arguments, *((INT, 130), (TERM, 143))[index % 2]) for index, arguments in enumerate(READERS)],
    ids=[" ".join(a[:2]).replace("{", "").replace("}", "") for a in READERS],
)
def test_every_command_that_reads_files_stops_on_a_signal_while_it_reads(endless, tmp_path, arguments, signum, status):
    jsonl, json_document = endless
    places = {"jsonl": str(jsonl), "json": str(json_document), "out": str(tmp_path)}
    command = [argument.format(**places) for argument in arguments]
    run = _start(command, tmp_path)
    pipe = json_document if "{json}" in arguments else jsonl
    writer = -1

    def opened() -> bool:  # the pipe opens for writing once the command has opened it for reading
        nonlocal writer
        try:
            writer = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return False
        return True

    _until(run, opened, "opening its input")
    try:
        os.write(writer, CLEAN.read_bytes().splitlines(keepends=True)[0][:1000])
        _interrupt(run, [signum], group=True)
    finally:
        os.close(writer)
    _ended_well(run, status)
    assert any(line.startswith("gym-contract: interrupted") for line in run.said), run.said


def test_a_worker_killed_from_outside_is_one_line_and_exit_2(corpus, tmp_path):
    """Not a signal to the command: a worker taken by the kernel's out-of-memory killer, say."""
    # Each input three times, twelve shares in all: the worker killed, the one that has read the
    # least, still has shares to check, however the two were scheduled until then.
    run = _start(["validate", "--jobs", "2", *map(str, corpus * 3)], tmp_path)
    workers = _workers_at_work(run, 2)
    os.kill(min(workers, key=_bytes_read), signal.SIGKILL)
    run.process.wait(timeout=60)
    _end_session(run.process.pid)
    assert run.process.returncode == 2
    assert run.said == ["gym-contract: a worker process ended with work outstanding (exit status -9)"]
    _nothing_left(run.process.pid)


# ------------------------------------------------------------------------------------------ a stuck way out


STUCK = """
import sys, time
from gym_contract import _interrupts
from gym_contract._workers import Workers

with _interrupts.handling():
    pool = Workers(2)
    print(" ".join(str(worker.process.pid) for worker in pool._workers), flush=True)
    with _interrupts.deferred():  # the way out never comes: signals are only noted
        time.sleep(600)
"""


def test_a_signal_that_comes_long_after_the_first_kills_the_workers_and_ends_the_process(tmp_path):
    """When the way out is stuck, Ctrl-C pressed again ends it at once, with no worker left."""
    run = _start(["-c", STUCK], tmp_path, program=[sys.executable])
    _until(run, lambda: len(run.output.split()) == 2, "starting its workers")
    workers = [int(pid) for pid in run.output.split()]
    os.killpg(run.process.pid, INT)  # noted, and the process goes on
    time.sleep(0.5)
    assert run.process.poll() is None
    time.sleep(2.0)  # past FORCE_AFTER
    started = time.monotonic()
    os.killpg(run.process.pid, INT)
    run.process.wait(timeout=30)
    run.seconds = time.monotonic() - started
    _end_session(run.process.pid)
    assert run.process.returncode == 130
    assert run.seconds < BOUND_SECONDS
    _nothing_left(run.process.pid)
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]


# ------------------------------------------------------------------------------------------ --engine ray


def _ray_task_running(leader: int) -> bool:
    for pid in _session(leader):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::Map("):
                return True
        except OSError:
            continue
    return False


@pytest.mark.ray
def test_a_ray_run_gives_the_partial_summary_and_takes_its_cluster_with_it(corpus, tmp_path):
    """SIGTERM to the command: Ray's own SIGTERM handler, which would end the driver at once, does not
    skip the summary, and the cluster the command started here ends with it. (Ctrl-C to the group
    takes the same way; Ray's processes hold SIGINT back.)"""
    pytest.importorskip("ray")
    run = _start(["validate", "--engine", "ray", "--format", "json", str(corpus[0])], tmp_path)
    _until(run, lambda: _ray_task_running(run.process.pid), "running a Ray task")
    _interrupt(run, [TERM], group=False, pause=False)  # a Ray cluster is not paused: its heartbeats would lapse
    assert run.process.returncode == 143, run.stderr.read_text()
    assert run.seconds < 3 * BOUND_SECONDS  # the most of it is Ray's own shutdown of the cluster
    assert "Traceback" not in run.stderr.read_text()
    _nothing_left(run.process.pid)
    report = json.loads(run.output)
    assert report["interrupted"] is True
    assert report["verdict"] == "interrupted"
    assert report["lines"] == report["blank_lines"] + report["damaged_lines"] + report["records"]
    assert PARTIAL_SAID in run.said
