"""Run one task per share of the inputs as a Ray Data job, and hand the results back on the driver in input order."""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from gym_contract import _interrupts
from gym_contract.distributed._inputs import Share

EXTRA_MISSING = 'Ray is not installed: python -m pip install ".[ray]" in a checkout of gym-contract'


class RayUnavailable(ImportError):  # noqa: N818 - names what is missing, as InputUnreadable does
    """Ray (the `ray` extra) is not installed, or the cluster at the address given cannot be reached."""


def connect(address: str | None = None, *, verbose: bool = False) -> None:
    """Join the Ray cluster at ``address`` (`auto`: this node's; `ray://head:10001`), or start one here.

    Ray's own messages (its warnings on token authentication, Ray Data's notes on progress bars) reach
    stderr only when ``verbose``; otherwise only its errors do: this package reports what it needs.

    Without ``address``, `RAY_ADDRESS` decides, as for any Ray program (a job submitted to a
    cluster has it set); without either, a new cluster is started on this machine, never one that
    a stale record of an earlier cluster points to. A cluster this process already joined is kept.
    """
    ray = require_ray()
    if ray.is_initialized():
        return
    address = address or os.environ.get("RAY_ADDRESS") or "local"
    try:
        level = logging.INFO if verbose else logging.ERROR
        ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=level)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise RayUnavailable(f"cannot join the Ray cluster at {address!r}: {error}") from None
    finally:
        _interrupts.reclaim()  # Ray's own SIGTERM handler would end the command without its summary


def require_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise RayUnavailable(EXTRA_MISSING) from None
    return ray


@contextmanager
def data_context(show_progress: bool, *, ordered: bool = False, verbose: bool = False) -> Iterator[Any]:
    """Ray Data's settings for one job, put back as they were after it; its log only with ``verbose``."""
    from ray.data import DataContext

    context = DataContext.get_current()
    saved = (
        context.execution_options.preserve_order,
        context.enable_progress_bars,
        context.op_resource_reservation_enabled,
    )
    # Results come back as they finish and are put in order here: keeping Ray Data's order holds
    # finished shares back behind a slow one. The job has one operator, so reserving resources for
    # the others leaves cores idle: on 2 cores the two settings together took the job from 1.2x to
    # 1.7x one process (tools/bench_validate.py --engine ray).
    context.execution_options.preserve_order = ordered
    context.op_resource_reservation_enabled = False
    context.enable_progress_bars = show_progress
    data_logger = logging.getLogger("ray.data")
    level = data_logger.level
    if not verbose:
        data_logger.setLevel(logging.ERROR)
    try:
        yield context
    finally:
        (
            context.execution_options.preserve_order,
            context.enable_progress_bars,
            context.op_resource_reservation_enabled,
        ) = saved
        data_logger.setLevel(level)


def run_shares(
    shares: list[Share],
    task: Callable[[Share], Any],
    *,
    show_progress: bool = False,
    verbose: bool = False,
) -> Iterator[tuple[Share, Any]]:
    """``task`` applied to every share in Ray tasks (one CPU each), each result yielded in the shares' order.

    A result that comes back before those of earlier shares waits here until they do; since Ray
    Data starts the tasks in order, few wait. A task lost with its worker or node is run again by
    Ray, so the results are the same.
    """
    if not shares:
        return
    ray = require_ray()
    with data_context(show_progress, verbose=verbose):
        rows = [{"number": number, "share": pickle.dumps(share)} for number, share in enumerate(shares)]
        dataset = ray.data.from_items(rows, override_num_blocks=len(rows))
        # In a generator of its own, so that an interruption taken at the loop's back edge still
        # leaves the context: Python 3.13 may leave that jump out of the ``with`` around the loop.
        yield from _in_share_order(shares, dataset.map(partial(_apply, task), num_cpus=1).iter_rows())


def _in_share_order(shares: list[Share], rows: Iterable[dict[str, Any]]) -> Iterator[tuple[Share, Any]]:
    """Each result with its share, in the shares' order, whatever order the rows come in."""
    waiting: dict[int, Any] = {}
    following = 0
    for row in rows:
        waiting[row["number"]] = pickle.loads(row["result"])
        while following in waiting:
            yield shares[following], waiting.pop(following)
            following += 1
    if following != len(shares):
        raise RuntimeError(f"the Ray job returned {following} of {len(shares)} shares")


def _apply(task: Callable[[Share], Any], row: dict[str, Any]) -> dict[str, Any]:
    """In a Ray task: one share, unpickled, through ``task``; its result pickled for the trip back."""
    share = pickle.loads(row["share"])
    return {"number": row["number"], "result": pickle.dumps(task(share))}
