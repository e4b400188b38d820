"""The docs' capability table of this package's producers, rendered from each producer's one declaration."""

from __future__ import annotations

from gym_contract._vocabulary import CRITERIA
from gym_contract.producers import producers

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
