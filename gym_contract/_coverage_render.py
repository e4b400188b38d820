"""Render a `CoverageMatrix` as an aligned text table, a Markdown table like the reference docs', or reasons."""

from __future__ import annotations

from gym_contract.coverage import CRITERIA, CoverageMatrix

ALL_ROLLOUTS = "all rollouts"
LEGEND = "V complete, O partial, X unavailable; a mixed cell gives each verdict's share of the rollouts"


def text_table(matrix: CoverageMatrix, producer_heading: str) -> list[str]:
    """One row per producer and one over all rollouts, columns aligned, without trailing spaces."""
    rows = [[producer_heading, "rollouts", *CRITERIA]]
    for producer in matrix.producers():
        rows.append([producer, f"{matrix.rollouts[producer]:,}", *(matrix.cell(c, producer) for c in CRITERIA)])
    if len(matrix.producers()) > 1:
        rows.append([ALL_ROLLOUTS, f"{matrix.total:,}", *(matrix.cell(c) for c in CRITERIA)])
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0]), row[1].rjust(widths[1])]
        cells += [cell.ljust(width) for cell, width in zip(row[2:], widths[2:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return lines


def markdown_table(matrix: CoverageMatrix) -> list[str]:
    """The layout of the reference documentation's capability matrix, then how many rollouts each row rates."""
    lines = ["| harness | " + " | ".join(CRITERIA) + " |", "|---|" + "---|" * len(CRITERIA)]
    for producer in matrix.producers():
        cells = " | ".join(matrix.cell(criterion, producer) for criterion in CRITERIA)
        lines.append(f"| `{producer}` | {cells} |")
    counts = ", ".join(f"`{producer}` {matrix.rollouts[producer]:,}" for producer in matrix.producers())
    lines += ["", f"Rollouts rated: {matrix.total:,} ({counts}). {LEGEND}."]
    return lines


def explanation(matrix: CoverageMatrix, criterion: str) -> list[str]:
    """What kept rollouts from V on one criterion, each reason with the number of rollouts it held back."""
    held_back = matrix.count(criterion, "O") + matrix.count(criterion, "X")
    lines = [
        f"{criterion}: {matrix.count(criterion, 'V'):,} of {matrix.total:,} rollouts at V, "
        f"{matrix.count(criterion, 'O'):,} at O, {matrix.count(criterion, 'X'):,} at X"
    ]
    if held_back:
        lines.append("kept from V by (rollouts; a rollout counts once under each of its reasons):")
        lines += [f"  {count:>8,}  {reason}" for reason, count in matrix.why_not_v(criterion)]
    return lines
