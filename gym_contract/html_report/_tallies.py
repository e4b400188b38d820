"""What the page shows beyond a validation report, gathered in the same single pass over the inputs.

Per producer, a `Report` of the engine counts gaps and tokens (the report's own walk over the
record, so both agree); its token tallies also bin every known count by powers of two. A reservoir
keeps a uniform sample of the rollouts, whatever the input's length. Memory is bounded by the
number of producers and the sample's size, never by the number of records.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gym_contract._vocabulary import TOKEN_FIELDS, token_count
from gym_contract.coverage import NO_OBSERVATIONS, observation_source
from gym_contract.diagnostics import Diagnostic
from gym_contract.validation._report import Report, TokenTally

UNKNOWN_BIN = -1
"""The bin of a call that left the count unknown (null or absent): never counted as 0."""
SAMPLED_KINDS = ("rollout", "trajectory")


def token_bin(count: int) -> int:
    """0 for a count of 0, else k for a count in [2**(k-1), 2**k)."""
    return count.bit_length()


def bin_label(number: int) -> str:
    """How a bin reads on an axis: `0`, `1`, `2–4`, `4–8`, … `1k–2k` (from the first bound up to the second,
    which belongs to the next bin), or `unknown`."""
    if number == UNKNOWN_BIN:
        return "unknown"
    if number <= 1:
        return str(number)
    return f"{_short(1 << (number - 1))}–{_short(1 << number)}"


def _short(value: int) -> str:
    for size, suffix in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "k")):
        if value >= size:
            return f"{value // size}{suffix}"
    return str(value)


@dataclass
class TokenDistribution(TokenTally):
    """A token tally that also counts calls by the power-of-two bin of their count."""

    bins: Counter[int] = field(default_factory=Counter)

    def add(self, value: Any) -> None:
        super().add(value)
        count = token_count(value)
        self.bins[UNKNOWN_BIN if count is None else token_bin(count)] += 1

    def add_all(self, values: list[Any]) -> None:
        for value in values:  # each value lands in its own bin: no sum stands for them
            self.add(value)

    def add_counts(self, counts: list[int]) -> None:
        self.add_all(counts)


@dataclass(frozen=True)
class SampledRollout:
    """A rollout kept for the drill-down, located in its input, with its diagnostics."""

    number: int
    """Its place among the rollouts read, from 1: the page lists the sample in input order."""
    source: str | None
    line: int | None
    kind: str
    record: dict[str, Any]
    diagnostics: list[Diagnostic]


def producer_of(kind: str | None, record: dict[str, Any]) -> str:
    """The observation source that produced a record, grouped as the coverage matrix groups rollouts."""
    return observation_source(record, kind) or NO_OBSERVATIONS


def _producer_report() -> Report:
    report = Report(max_diagnostics=0)
    report.tokens = {name: TokenDistribution() for name in TOKEN_FIELDS}
    return report


@dataclass
class Tallies:
    """Gaps and token distributions per producer, and a sample of rollouts; fed one record at a time."""

    sample_size: int = 20
    seed: int = 0
    by_producer: dict[str, Report] = field(default_factory=dict)
    rollouts_seen: int = 0
    sample: list[SampledRollout] = field(default_factory=list)
    _random: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def see(
        self,
        kind: str | None,
        record: dict[str, Any],
        diagnostics: list[Diagnostic],
        source: str | None,
        line: int | None,
    ) -> None:
        """One checked record (the engine's `RecordSeen`)."""
        producer = producer_of(kind, record)
        report = self.by_producer.get(producer)
        if report is None:
            report = self.by_producer[producer] = _producer_report()
        report.add_evidence(kind, record)
        if kind in SAMPLED_KINDS:
            self.rollouts_seen += 1
            self._offer(SampledRollout(self.rollouts_seen, source, line, kind, record, diagnostics))

    def _offer(self, rollout: SampledRollout) -> None:
        """Reservoir sampling: after n rollouts, each of them is in the sample with the same chance."""
        if len(self.sample) < self.sample_size:
            self.sample.append(rollout)
            return
        slot = self._random.randrange(self.rollouts_seen)
        if slot < self.sample_size:
            self.sample[slot] = rollout

    @property
    def sampled(self) -> bool:
        """Whether some rollouts were left out of the drill-down."""
        return self.rollouts_seen > len(self.sample)

    def in_input_order(self) -> list[SampledRollout]:
        return sorted(self.sample, key=lambda rollout: rollout.number)

    def producers(self) -> list[str]:
        return sorted(self.by_producer)

    def gaps(self) -> Counter[tuple[str, str]]:
        """(gap code, producer) -> gaps reported."""
        found: Counter[tuple[str, str]] = Counter()
        for producer, report in self.by_producer.items():
            for code, number in report.gaps.items():
                found[(code, producer)] += number
        return found

    def token_bins(self, name: str, producer: str) -> Counter[int]:
        tally = self.by_producer[producer].tokens[name]
        return tally.bins if isinstance(tally, TokenDistribution) else Counter()
