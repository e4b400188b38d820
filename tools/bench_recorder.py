"""Measure what recording costs a harness: time per tool-call event against an empty call, and memory per record.

Each figure is the median of several passes over a fresh recorder. A tool call is two events (its
start and its end); the ratio compares one event with one call of an empty Python function taking
the same arguments, timed in the same run. Memory is traced while recording growing numbers of
tool calls: the bytes held per recorded call stay the same whatever their number.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable

from gym_contract.recorder import Recorder


def _empty(tool_call_id: str, name: str) -> None:
    """The baseline: a Python call that does nothing with what it is given."""


def _timed(setup: Callable[[], Callable[[list[str]], None]], ids: list[str], passes: int) -> float:
    """Median seconds of one pass over ``ids``; the cyclic collector paused while timing, as timeit does."""
    seconds = []
    for _ in range(passes):
        work = setup()
        gc.collect()
        gc.disable()
        started = time.perf_counter()
        work(ids)
        seconds.append(time.perf_counter() - started)
        gc.enable()
    return statistics.median(seconds)


def _baseline() -> Callable[[list[str]], None]:
    def work(ids: list[str]) -> None:
        for tool_call_id in ids:
            _empty(tool_call_id, "bash")
            _empty(tool_call_id, "bash")

    return work


def _plain() -> Callable[[list[str]], None]:
    root = Recorder(model_ref="policy").invocation()

    def work(ids: list[str]) -> None:
        for tool_call_id in ids:
            root.tool(tool_call_id, "bash").end()

    return work


def _with_block() -> Callable[[list[str]], None]:
    recorder = Recorder(model_ref="policy")
    root = recorder.invocation()

    def work(ids: list[str]) -> None:
        with root:
            for tool_call_id in ids:
                with recorder.tool(tool_call_id, "bash"):
                    pass

    return work


def _hooks() -> Callable[[list[str]], None]:
    recorder = Recorder(model_ref="policy")
    root = recorder.invocation()

    def work(ids: list[str]) -> None:
        with root:
            for tool_call_id in ids:
                recorder.tool(tool_call_id, "bash", timing_source="harness")
                recorder.end_tool(tool_call_id)

    return work


def _model_calls() -> Callable[[list[str]], None]:
    root = Recorder(model_ref="policy").invocation()

    def work(ids: list[str]) -> None:
        for response_id in ids:
            root.model_call(response_id)
            root.model_call(response_id)

    return work


def _bytes_per_call(calls: int) -> float:
    """Bytes the recorder holds per tool call after recording ``calls`` of them."""
    ids = [f"call_{index}" for index in range(calls)]
    gc.collect()
    tracemalloc.start()
    recorder = Recorder(model_ref="policy")
    root = recorder.invocation()
    before = tracemalloc.get_traced_memory()[0]
    for tool_call_id in ids:
        root.tool(tool_call_id, "bash").end()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return held / calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100_000, help="tool calls per pass")
    parser.add_argument("--passes", type=int, default=7)
    parser.add_argument("--memory-sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    ids = [f"call_{index}" for index in range(args.calls)]
    events = 2 * args.calls
    empty = _timed(_baseline, ids, args.passes) / events
    figures: dict[str, dict[str, float]] = {"microseconds_per_event": {}, "ratio_to_empty_call": {}}
    for name, setup in (
        ("tool call, start and end", _plain),
        ("tool call in a with block", _with_block),
        ("tool call by id from hooks", _hooks),
        ("model call", _model_calls),
    ):
        per_event = _timed(setup, ids, args.passes) / events
        figures["microseconds_per_event"][name] = round(per_event * 1e6, 3)
        figures["ratio_to_empty_call"][name] = round(per_event / empty, 1)
    figures["empty_call_microseconds"] = {"empty function call": round(empty * 1e6, 4)}
    figures["bytes_per_tool_call"] = {str(size): round(_bytes_per_call(size), 1) for size in args.memory_sizes}
    print(f"python {sys.version.split()[0]}; {args.calls} tool calls per pass, median of {args.passes} passes")
    print(f"empty function call: {empty * 1e6:.4f} µs")
    for name, micros in figures["microseconds_per_event"].items():
        print(f"{name}: {micros:.3f} µs per event ({figures['ratio_to_empty_call'][name]}× an empty call)")
    for size, held in figures["bytes_per_tool_call"].items():
        print(f"memory after {size} tool calls: {held:.0f} bytes per call")
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
