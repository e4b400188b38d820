"""Write a realistic, seeded rollout corpus for benchmarks and scale tests.

    python tools/make_corpus.py OUT.jsonl --records N --seed S [--record-kb 150] [--invalid-share 0.0]

Each line is one rollout record as the reference gym writes it, with `ng_agent_observations`,
`ng_model_call_capture` and `ng_trajectory`. A `.gz` or `.zst` OUT is compressed; same arguments, same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import orjson

# Run as a script, tools/ is on sys.path; loaded by its path (as the tests load it), it is not: its pieces live there.
TOOLS = str(Path(__file__).resolve().parent)
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)

from corpus.record import DEFECTS, PAYLOAD_KEYS, TOKEN_FIELDS, inject_defect, make_record  # noqa: E402
from corpus.rollout import SOURCES, TOOL_KINDS, TOOL_NAMES, RolloutBuilder  # noqa: E402
from corpus.text import TextSlot  # noqa: E402

# The generator's names, reached through this script by the tests and by anyone who loads it as a module.
__all__ = [
    "DEFECTS",
    "PAYLOAD_KEYS",
    "SOURCES",
    "TOKEN_FIELDS",
    "TOOL_KINDS",
    "TOOL_NAMES",
    "RolloutBuilder",
    "TextSlot",
    "inject_defect",
    "main",
    "make_record",
]

ROLLOUTS_PER_TASK = 4


@contextlib.contextmanager
def open_output(path: Path) -> Iterator[BinaryIO]:
    with contextlib.ExitStack() as stack:
        raw = stack.enter_context(path.open("wb"))
        if path.suffix == ".gz":
            # No file name and mtime 0 in the header: the same arguments must give the same bytes.
            yield stack.enter_context(gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0))
        elif path.suffix == ".zst":
            import zstandard

            yield stack.enter_context(zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=False))
        else:
            yield raw


def as_the_reference_writes(record: dict) -> dict:
    """Attachments dumped through the contract's models: every key, in schema order, as the reference does."""
    from gym_contract.models import AgentObservationBundle, ModelCallCapture, TrajectoryRecord

    for key, model in (("ng_trajectory", TrajectoryRecord), ("ng_agent_observations", AgentObservationBundle)):
        record[key] = model.model_validate(record[key]).model_dump(mode="json")
    capture = ModelCallCapture.model_validate(record["ng_model_call_capture"]).model_dump(mode="json")
    # The capture's gaps are written only when there are some, each without its null keys.
    gaps = [{k: v for k, v in gap.items() if v is not None} for gap in capture.pop("gaps")]
    record["ng_model_call_capture"] = capture | ({"gaps": gaps} if gaps else {})
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="output file; a .gz or .zst suffix compresses")
    parser.add_argument("--records", type=int, required=True, help="number of rollout records")
    parser.add_argument("--seed", type=int, required=True, help="the same seed and arguments give the same bytes")
    parser.add_argument("--record-kb", type=int, default=150, help="size of a record in KiB (20 or more)")
    parser.add_argument("--invalid-share", type=float, default=0.0, help="share of records given one defect")
    parser.add_argument(
        "--requests",
        choices=("full", "incremental"),
        default="full",
        help="requests resend the whole context (stateless servers, the default) or chain by previous_response_id",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.invalid_share <= 1:
        parser.error("--invalid-share must lie between 0 and 1")
    # An exact count rather than a coin per record: a benchmark gets the share it asked for.
    chooser = random.Random(f"{args.seed}:defects")
    defective = set(chooser.sample(range(args.records), round(args.records * args.invalid_share)))
    defects: Counter[str] = Counter()
    written, began = 0, time.perf_counter()
    with open_output(args.out) as out:
        for index in range(args.records):
            # A record depends only on (seed, index), so corpora of different lengths share their prefix.
            rng = random.Random(f"{args.seed}:{index}")
            record = make_record(rng, *divmod(index, ROLLOUTS_PER_TASK), args.record_kb, args.requests == "full")
            if index in defective:
                defects[inject_defect(rng, record)] += 1
            else:
                record = as_the_reference_writes(record)
            line = orjson.dumps(record) + b"\n"
            out.write(line)
            written += len(line)
    summary = ", ".join(f"{n} {name}" for name, n in sorted(defects.items())) or "no defects"
    elapsed = time.perf_counter() - began
    print(f"wrote {args.records} records, {written / 1e6:.1f} MB, {summary}, to {args.out} in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
