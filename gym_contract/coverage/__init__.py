"""Evidence coverage: each rollout rated V, O or X on the capability criteria C1–C7, and the matrix by producer.

The rules are in the docs (Reference → Capability criteria → Computed coverage); in short, a
criterion is X when its evidence is absent, V when every item it needs is there and no gap that
the registry lists under it was reported, and O otherwise. Verdicts come with reasons naming the
fields or gap codes that decided.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from msgspec import Struct

from gym_contract._objects import OBJECT_CLASSES, DictObject, parsed, readable
from gym_contract._values import nonempty
from gym_contract._vocabulary import CRITERIA, detect_kind
from gym_contract.coverage._rules import (
    FULL,
    RULES,
    Verdict,
    evidence_of,
    gapped_criteria,
    gaps_against,
    quickly_complete,
    rate,
)

__all__ = [
    "CRITERIA",
    "VERDICTS",
    "CoverageMatrix",
    "CriterionVerdict",
    "GroupBy",
    "RolloutCoverage",
    "Verdict",
    "coverage_matrix",
    "observation_source",
    "rollout_coverage",
]

VERDICTS: tuple[Verdict, ...] = ("V", "O", "X")
GroupBy = Literal["source", "agent"]
COVERED_KINDS = ("rollout", "trajectory")
UNKNOWN_PRODUCER = "(unknown)"
NO_OBSERVATIONS = "(no observations)"


@dataclass(frozen=True, slots=True)
class CriterionVerdict:
    """One criterion's rating of one rollout, with the fields or gap codes that decided it."""

    criterion: str
    verdict: Verdict
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RolloutCoverage:
    """A rollout's verdicts on C1–C7 and who produced it."""

    source: str | None
    """`ng_agent_observations.source`, when the rollout carries observations."""
    agent: str | None
    """The agent name on the rollout record (`agent_ref.name`), when there is one."""
    verdicts: tuple[CriterionVerdict, ...]

    def verdict(self, criterion: str) -> CriterionVerdict:
        """The verdict on one criterion, `C1` … `C7`."""
        for verdict in self.verdicts:
            if verdict.criterion == criterion:
                return verdict
        raise KeyError(f"unknown criterion {criterion!r}; expected one of {', '.join(CRITERIA)}")

    def producer(self, by: GroupBy = "source") -> str:
        """The group this rollout counts in: its observation source, else its agent name (``by="source"``)."""
        if by == "source" and self.source:
            return self.source
        return self.agent or UNKNOWN_PRODUCER


def rollout_coverage(record: Any, kind: str | None = None) -> RolloutCoverage | None:
    """Rate one rollout record (or a bare `ng_trajectory`) on C1–C7; None for records of any other kind.

    ``kind`` is told from the record's shape when not given. Records that break the contract are
    rated too, from whatever evidence they hold; the rules never raise on odd shapes. The record is
    a parsed dict, or read by attribute as `gym_contract._objects` says.
    """
    if not isinstance(record, (dict, DictObject, Struct)):  # a record's Structs, or its parsed dict
        return None
    record = readable(record)
    kind = kind or detect_kind(parsed(record))
    if kind not in COVERED_KINDS:
        return None
    evidence = evidence_of(record, kind)
    gapped = gapped_criteria(evidence.gap_codes)
    complete = quickly_complete(CRITERIA, evidence)
    verdicts = []
    for criterion in CRITERIA:
        if criterion not in complete:
            verdict, reasons = RULES[criterion](evidence)
        elif criterion not in gapped:
            verdicts.append(_FULL_VERDICTS[criterion])
            continue
        else:
            # Complete evidence leaves the rule no field problem to report: only its gaps keep it from V.
            verdict, reasons = rate(FULL[criterion], (), gaps_against(criterion, evidence.gap_codes))
        verdicts.append(CriterionVerdict(criterion, verdict, reasons))
    return RolloutCoverage(observation_source(record, kind), _agent(record, kind), tuple(verdicts))


_FULL_VERDICTS = {criterion: CriterionVerdict(criterion, "V", (FULL[criterion],)) for criterion in CRITERIA}


def observation_source(record: Any, kind: str | None) -> str | None:
    """The harness that observed a rollout (its bundle's `source`), or a bundle's own; None when none says."""
    record = readable(record)
    bundle: Any = record.ng_agent_observations if kind == "rollout" else record if kind == "bundle" else None
    return nonempty(bundle.source) if type(bundle) in OBJECT_CLASSES else None


def _agent(record: Any, kind: str) -> str | None:
    # A key outside the contract: on the fast path it stays raw bytes, and no agent is read.
    agent_ref: Any = getattr(record, "agent_ref", None) if kind == "rollout" else None
    return nonempty(agent_ref.name) if type(agent_ref) in OBJECT_CLASSES else None


@dataclass
class CoverageMatrix:
    """Verdict counts per producer and criterion, and the reasons that kept rollouts from V.

    Plain counters only, so a matrix pickles across worker processes and merges by addition.
    """

    rollouts: Counter[str] = field(default_factory=Counter)
    verdicts: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    """(producer, criterion, verdict) -> rollouts."""
    reasons: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(criterion, reason) -> rollouts rated O or X on the criterion that gave that reason."""

    def add(self, coverage: RolloutCoverage, producer: str) -> None:
        self.rollouts[producer] += 1
        for verdict in coverage.verdicts:
            self.verdicts[(producer, verdict.criterion, verdict.verdict)] += 1
            if verdict.verdict != "V":
                for reason in verdict.reasons:
                    self.reasons[(verdict.criterion, reason)] += 1

    def merge(self, other: CoverageMatrix) -> None:
        self.rollouts.update(other.rollouts)
        self.verdicts.update(other.verdicts)
        self.reasons.update(other.reasons)

    @property
    def total(self) -> int:
        return sum(self.rollouts.values())

    def producers(self) -> list[str]:
        return sorted(self.rollouts)

    def count(self, criterion: str, verdict: str, producer: str | None = None) -> int:
        """Rollouts at ``verdict`` on ``criterion``, of one producer or (None) of all."""
        producers = self.producers() if producer is None else [producer]
        return sum(self.verdicts[(name, criterion, verdict)] for name in producers)

    def cell(self, criterion: str, producer: str | None = None) -> str:
        """`V`, `O` or `X` when every rollout agrees, else each verdict's share: `V 67% O 33%`."""
        counts = {verdict: self.count(criterion, verdict, producer) for verdict in VERDICTS}
        rated = sum(counts.values())
        present = [verdict for verdict in VERDICTS if counts[verdict]]
        if len(present) == 1:
            return present[0]
        return " ".join(f"{verdict} {_share(counts[verdict], rated)}" for verdict in present) or "-"

    def below(self, criterion: str, verdict: str, producer: str) -> int:
        """Rollouts of ``producer`` rated lower than ``verdict`` on ``criterion`` (X below O below V)."""
        lower = VERDICTS[VERDICTS.index(verdict) + 1 :] if verdict in VERDICTS else ()
        return sum(self.verdicts[(producer, criterion, rated)] for rated in lower)

    def shortfalls(self, declared: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, int]]:
        """Per producer with a declared capability, the criteria on which rollouts were rated below it, and how many.

        ``declared`` maps a producer to the verdict it says it can reach on each criterion (the
        producer registry's declaration); producers it does not name are not compared.
        """
        found: dict[str, dict[str, int]] = {}
        for producer in self.producers():
            ratings = declared.get(producer, {})
            short = {c: n for c in CRITERIA if c in ratings and (n := self.below(c, ratings[c], producer))}
            if short:
                found[producer] = short
        return found

    def why_not_v(self, criterion: str) -> list[tuple[str, int]]:
        """Reasons that kept rollouts from V on ``criterion``, most frequent first."""
        found = [(reason, count) for (name, reason), count in self.reasons.items() if name == criterion]
        return sorted(found, key=lambda item: (-item[1], item[0]))

    def to_dict(self) -> dict[str, Any]:
        """Per producer and over all rollouts, the rollouts at each verdict by criterion; and the reasons for O and X.

        A share is a count over the row's ``rollouts``; counts keep the JSON short and exact.
        """
        return {
            "rollouts": self.total,
            "producers": {name: self._row(name) for name in self.producers()},
            "all": self._row(None),
            "why_not_v": {
                criterion: dict(self.why_not_v(criterion)) for criterion in CRITERIA if self.why_not_v(criterion)
            },
        }

    def _row(self, producer: str | None) -> dict[str, Any]:
        row: dict[str, Any] = {"rollouts": self.total if producer is None else self.rollouts[producer]}
        for verdict in VERDICTS:
            row[verdict] = {criterion: self.count(criterion, verdict, producer) for criterion in CRITERIA}
        return row


def _share(count: int, total: int) -> str:
    """A verdict's share of a mixed cell, never shown as 0 % or 100 %, which would read as none or all."""
    percent = 100 * count / total
    if percent < 1:
        return "<1%"
    if percent > 99:
        return ">99%"
    return f"{round(percent)}%"


def coverage_matrix(records: Iterable[Any], by: GroupBy = "source") -> CoverageMatrix:
    """The matrix over records (rollout records or bare trajectories; others are skipped), grouped ``by``."""
    matrix = CoverageMatrix()
    for record in records:
        coverage = rollout_coverage(record) if isinstance(record, dict) else None
        if coverage is not None:
            matrix.add(coverage, coverage.producer(by))
    return matrix
