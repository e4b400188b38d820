"""Measure `gym-contract validate` as a whole process against the peer script, start-up, and invalid records.

    python tools/bench_process.py CLEAN.jsonl [--invalid DEFECTIVE.jsonl] [--passes 5]

Every figure is the median of several passes, taken in one run, so that ratios compare like with
like on a shared machine: the command against `tools/peer_validate.py` (orjson + jsonschema_rs,
line by line) on the same file; `--jobs 2` against one job, and against the most two processes
reach here (each half of the file checked by a command of its own, both started together); start-up
(`validate` on an empty file, `--version`) against `python -c "import orjson, msgspec"`; and, given a
file of the same records with some of them invalid, its rate against the clean file's.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

TOOLS = Path(__file__).resolve().parent


# As an installed package runs: from compiled bytecode, which a first, untimed pass writes if need be.
ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


Runs = dict[str, tuple[Callable[[], object], int]]
"""Measurements by name: what to run, and how many passes to time."""


def interleaved_medians(runs: Runs, *, warm_up: bool = False) -> dict[str, float]:
    """Median wall time of each run over its passes, taken round by round, after an untimed round with ``warm_up``.

    A round runs every measurement once, in turn, so that a change in the machine's load weighs on
    all of them alike and the ratios between them hold.
    """
    times: dict[str, list[float]] = {name: [] for name in runs}
    first = 1 if warm_up else 0
    for round_ in range(first + max(passes for _, passes in runs.values())):
        for name, (run, passes) in runs.items():
            if round_ >= first + passes:
                continue
            gc.collect()
            started = time.perf_counter()
            run()
            if round_ >= first:
                times[name].append(time.perf_counter() - started)
    return {name: statistics.median(taken) for name, taken in times.items()}


def median_seconds(commands: Mapping[str, list[str] | list[list[str]]], passes: int) -> dict[str, float]:
    """Median wall time of each command over ``passes`` rounds, after one untimed round; output thrown away.

    A list of commands is run side by side, all started at once, and timed until the last has ended.
    """
    runs: Runs = {}
    for name, command in commands.items():
        together = [word for word in command if isinstance(word, list)] or [[str(word) for word in command]]
        runs[name] = (partial(run_together, together), passes)
    return interleaved_medians(runs, warm_up=True)


def run_together(commands: list[list[str]]) -> None:
    """Start every command at once, their output thrown away, and wait for all of them."""
    started = [
        subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENVIRONMENT)
        for command in commands
    ]
    for process in started:
        process.wait()


def halves(corpus: Path, folder: Path) -> tuple[Path, Path]:
    """``corpus`` copied into two files, cut as `--jobs 2` cuts it: at the first line that starts after its middle."""
    size = corpus.stat().st_size
    with corpus.open("rb") as source:
        source.seek(size // 2)
        source.readline()
        cut = source.tell()
        source.seek(0)
        first, second = folder / "first-half.jsonl", folder / "second-half.jsonl"
        for target, length in ((first, cut), (second, size - cut)):
            with target.open("wb") as out:
                while length > 0 and (block := source.read(min(length, 16 * 1024 * 1024))):
                    out.write(block)
                    length -= len(block)
    return first, second


def peak_rss_mb(command: list[str]) -> float:
    """The largest resident set of a command's process while it runs, in MB (its workers not counted)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENVIRONMENT)
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0  # reaped here; Popen must not wait for it again
    return usage.ru_maxrss / 1024  # kilobytes on Linux


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a JSONL file of valid rollout records")
    parser.add_argument("--invalid", type=Path, help="the same records with some of them invalid")
    parser.add_argument("--rss", type=Path, help="a large file (1 GB or so) whose peak resident set is measured")
    parser.add_argument("--passes", type=int, default=5, help="passes per measurement; the median is reported")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument(
        "--one-job",
        action="store_true",
        help="leave out --jobs 2 (on a machine whose other cores are busy, its figure means nothing)",
    )
    args = parser.parse_args(argv)
    for given in (args.corpus, args.invalid, args.rss):
        if given is not None and not given.is_file():
            parser.error(f"{given}: no such file (tools/make_corpus.py makes one)")
    # The command installed beside this interpreter, as a virtual environment puts it, else the one on PATH.
    beside = Path(sys.executable).with_name("gym-contract")
    command = str(beside) if beside.is_file() else shutil.which("gym-contract") or "gym-contract"
    ours = [command, "validate", "--quiet"]
    megabytes = args.corpus.stat().st_size / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.jsonl"
        empty.write_bytes(b"")
        throughput: dict[str, list[str] | list[list[str]]] = {
            "peer (orjson + jsonschema_rs script)": [sys.executable, str(TOOLS / "peer_validate.py"), str(args.corpus)],
            "gym-contract validate": [*ours, str(args.corpus)],
        }
        if not args.one_job:
            throughput["gym-contract validate --jobs 2"] = [*ours, "--jobs", "2", str(args.corpus)]
            # What two processes can reach on this machine at best: no hand-over, no fork, each on its own half.
            throughput["two commands side by side, a half each"] = [
                [*ours, str(half)] for half in halves(args.corpus, Path(tmp))
            ]
        if args.invalid is not None:
            throughput["gym-contract validate (invalid records)"] = [*ours, str(args.invalid)]
        start_up = {
            "python -c 'import orjson, msgspec'": [sys.executable, "-c", "import orjson, msgspec"],
            "gym-contract validate (empty file)": [*ours, str(empty)],
            "gym-contract --version": [command, "--version"],
            "python -c 'import argparse'": [sys.executable, "-c", "import argparse"],
            "gym-contract --help": [command, "--help"],
        }
        seconds = median_seconds(throughput, args.passes) | median_seconds(start_up, args.passes * 2)
    memory = {} if args.rss is None else {"peak RSS of validate, MB": peak_rss_mb([*ours, str(args.rss)])}
    floor = seconds["python -c 'import orjson, msgspec'"]
    ratios = {
        "whole process vs peer": seconds["peer (orjson + jsonschema_rs script)"] / seconds["gym-contract validate"],
        "start-up, empty file vs import orjson, msgspec": seconds["gym-contract validate (empty file)"] / floor,
        "start-up, --version vs import orjson, msgspec": seconds["gym-contract --version"] / floor,
        "start-up, --help vs import argparse": seconds["gym-contract --help"] / seconds["python -c 'import argparse'"],
    }
    if not args.one_job:
        two = seconds["gym-contract validate --jobs 2"]
        side_by_side = seconds["two commands side by side, a half each"]
        ratios["jobs 2 vs jobs 1"] = seconds["gym-contract validate"] / two
        ratios["two commands on halves vs jobs 1"] = seconds["gym-contract validate"] / side_by_side
        ratios["jobs 2 vs two commands on halves"] = side_by_side / two
    if args.invalid is not None:
        rate = args.invalid.stat().st_size / seconds["gym-contract validate (invalid records)"]
        ratios["invalid-record rate vs clean rate"] = rate / (
            args.corpus.stat().st_size / seconds["gym-contract validate"]
        )
    conditions = (
        "each command in a process of its own, started afresh every pass, from compiled bytecode, its output "
        f"discarded; every command once a round after an untimed round, median of {args.passes} rounds "
        f"(start-up: {args.passes * 2}); {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"corpus: {args.corpus} ({megabytes:.1f} MB)")
    print(f"conditions: {conditions}")
    for name, value in seconds.items():
        print(f"  {name:<44} {value:8.3f} s")
    for name, ratio in ratios.items():
        print(f"  ratio {name:<50} {ratio:6.2f}×")
    for name, megabytes_used in memory.items():
        print(f"  {name:<44} {megabytes_used:8.1f} ({args.rss.stat().st_size / 1e6:,.0f} MB file)")
    if args.json:
        print(json.dumps({"conditions": conditions, "seconds": seconds, "ratios": ratios, "memory": memory}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
