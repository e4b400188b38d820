"""The docs' capability table of this package's producers, rendered from each producer's one declaration."""

from __future__ import annotations

from gym_contract import schemas
from gym_contract._vocabulary import CRITERIA
from gym_contract.producers import producer, producers

from .markdown import cell, link, prose

CRITERIA_PAGE = "reference/criteria.md"
GAP_PAGE = "reference/gap-codes.md"


def render_producer_capability(page: str, name: str = "") -> str:
    """One row per registered producer (or only producer ``name``): its verdict on C1–C7, then the reason for each."""
    chosen = [producer(name)] if name else list(producers())
    lines = [
        "| producer | " + " | ".join(f"[{c}]({link(page, f'{CRITERIA_PAGE}#{c}')})" for c in CRITERIA) + " |",
        "|---|" + "---|" * len(CRITERIA),
    ]
    reasons: list[str] = []
    for declared in chosen:
        shown = (
            f"[`{declared.source}`]({link(page, declared.docs)})"
            if declared.docs and not name
            else f"`{declared.source}`"
        )
        verdicts = " | ".join(declared.capability[criterion].verdict for criterion in CRITERIA)
        lines.append(f"| {shown} (`observe {declared.name}`) | {verdicts} |")
        reasons.append(f"- `{declared.source}`:")
        for criterion in CRITERIA:
            rating = declared.capability[criterion]
            reasons.append(f"    - {criterion} {rating.verdict}: {prose(cell(rating.reason))}")
    return "\n".join([*lines, "", "Why each rating, as the producer declares it:", "", *reasons])


def render_producer_gaps(page: str, name: str) -> str:
    """The gap codes the registry lists for producer ``name`` (`emitted_by`), each with its meaning and detail."""
    source = producer(name).source
    lines = ["| gap code | what it says | detail |", "|---|---|---|"]
    for code, entry in sorted(schemas.gap_codes().items()):
        if source in entry["emitted_by"]:
            detail = prose(cell(entry["detail"])) if entry["detail"] else "—"
            lines.append(
                f"| [`{code}`]({link(page, f'{GAP_PAGE}#{code}')}) | {prose(cell(entry['meaning']))} | {detail} |"
            )
    return "\n".join(lines)
