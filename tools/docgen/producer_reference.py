"""The docs' capability table of this package's producers, rendered from each producer's one declaration."""

from __future__ import annotations

from gym_contract import schemas
from gym_contract._vocabulary import CRITERIA
from gym_contract.producers import producer, producers

from .markdown import cell, link, prose


def render_producer_capability(page: str, harness: str = "") -> str:
    """One row per registered producer (or only ``harness``'s): its verdict on C1–C7, then the reason for each."""
    criteria = " | ".join(f"[{c}]({link(page, f'reference/criteria.md#{c}')})" for c in CRITERIA)
    lines = [f"| producer | {criteria} |", "|---|" + "---|" * len(CRITERIA)]
    reasons: list[str] = []
    for declared in producers():
        if harness and declared.name != harness:
            continue
        own = not declared.docs or declared.docs == page
        name = f"`{declared.source}`" if own else f"[`{declared.source}`]({link(page, declared.docs)})"
        verdicts = " | ".join(declared.capability[criterion].verdict for criterion in CRITERIA)
        lines.append(f"| {name} (`observe {declared.name}`) | {verdicts} |")
        reasons.append(f"- `{declared.source}`:")
        for criterion in CRITERIA:
            rating = declared.capability[criterion]
            reasons.append(f"    - {criterion} {rating.verdict}: {prose(cell(rating.reason))}")
    return "\n".join([*lines, "", "Why each rating, as the producer declares it:", "", *reasons])


def render_producer_gaps(page: str, harness: str) -> str:
    """The gap codes the registry lists for ``harness``'s producer (`emitted_by`), each with its meaning and detail."""
    source = producer(harness).source
    lines = ["| gap code | what it says | detail |", "|---|---|---|"]
    for code, entry in sorted(schemas.gap_codes().items()):
        if source in entry["emitted_by"]:
            detail = prose(cell(entry["detail"])) if entry["detail"] else "—"
            target = link(page, f"reference/gap-codes.md#{code}")
            lines.append(f"| [`{code}`]({target}) | {prose(cell(entry['meaning']))} | {detail} |")
    return "\n".join(lines)
