"""The docs' capability table of this package's producers, rendered from each producer's one declaration."""

from __future__ import annotations

from gym_contract._vocabulary import CRITERIA
from gym_contract.producers import producers

from .markdown import cell, link, prose


def render_producer_capability(page: str) -> str:
    """One row per registered producer: the verdict it declares on C1–C7, then the reason for each."""
    lines = ["| producer | " + " | ".join(f"[{c}](#{c})" for c in CRITERIA) + " |", "|---|" + "---|" * len(CRITERIA)]
    reasons: list[str] = []
    for declared in producers():
        name = f"[`{declared.source}`]({link(page, declared.docs)})" if declared.docs else f"`{declared.source}`"
        verdicts = " | ".join(declared.capability[criterion].verdict for criterion in CRITERIA)
        lines.append(f"| {name} (`observe {declared.name}`) | {verdicts} |")
        reasons.append(f"- `{declared.source}`:")
        for criterion in CRITERIA:
            rating = declared.capability[criterion]
            reasons.append(f"    - {criterion} {rating.verdict}: {prose(cell(rating.reason))}")
    return "\n".join([*lines, "", "Why each rating, as the producer declares it:", "", *reasons])
