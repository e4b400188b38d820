"""Show that the join grows linearly: time to join 10k, 100k and 1M captured calls, and the growth per step."""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time

from gym_contract.join import join
from gym_contract.models import AgentObservationBundle, ModelCallRecord, ModelCallRef, ModelServerRef

POLICY = ModelServerRef(type="responses_api_models", name="policy")


def evidence(calls: int) -> tuple[AgentObservationBundle, list[ModelCallRecord]]:
    """One invocation per 100 calls; refs name nine in ten calls, by id or by response id, so gaps arise too."""
    records = [
        ModelCallRecord.model_construct(
            model_call_id=f"{index:032x}", response_id=f"resp_{index}", call_index=index, model_ref=POLICY
        )
        for index in range(calls)
    ]
    invocations = []
    for start in range(0, calls, 100):
        refs = [
            ModelCallRef.model_construct(model_call_id=f"{i:032x}", model_ref=None, response_id=None)
            if i % 2
            else ModelCallRef.model_construct(model_call_id=None, model_ref=POLICY, response_id=f"resp_{i}")
            for i in range(start, min(start + 100, calls))
            if i % 10
        ]
        invocations.append({"kind": "agent_invocation", "invocation_id": f"inv{start}", "model_calls": refs})
    bundle = AgentObservationBundle.model_construct(source="pi", records=[], gaps=[])
    from gym_contract.models import AgentInvocation

    bundle.records = [AgentInvocation.model_construct(**fields) for fields in invocations]  # type: ignore[misc]
    return bundle, records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args(argv)
    previous: tuple[int, float] | None = None
    for size in args.sizes:
        bundle, calls = evidence(size)
        times = []
        for _ in range(args.passes):
            # As timeit does, the cyclic collector is paused while timing: its full passes scan every
            # live object, so with it on the figures would measure the heap, not the join.
            gc.collect()
            gc.disable()
            started = time.perf_counter()
            join(bundle, calls)
            times.append(time.perf_counter() - started)
            gc.enable()
        seconds = statistics.median(times)
        line = f"{size:>9,} calls  {seconds:8.3f} s  {seconds / size * 1e6:6.2f} µs per call"
        if previous is not None:
            growth = (seconds / previous[1]) / (size / previous[0])
            line += f"  time grew {growth:.2f}× per 1× of input"
        print(line)
        previous = (size, seconds)
        del bundle, calls
    return 0


if __name__ == "__main__":
    sys.exit(main())
