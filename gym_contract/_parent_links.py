"""Parent links between invocations: cycles and chains told in time linear in their number, whatever the depth."""

from __future__ import annotations

from collections.abc import Mapping


def cycles(parent_of: Mapping[str, str | None]) -> dict[str, tuple[list[str], int]]:
    """Each id that lies on a cycle of parent links: its cycle, in parent order, and its place in it.

    ``parent_of`` gives each id's parent, or None; a parent that is not a key ends its chain. Every
    id is walked through once (a walk stops where an earlier one went), so a chain or a tree of any
    depth costs time linear in its size.
    """
    on_cycle: dict[str, tuple[list[str], int]] = {}
    walked: set[str] = set()
    for start in parent_of:
        place: dict[str, int] = {}  # the ids of this walk, in the order it reached them
        walk: list[str] = []
        current: str | None = start
        while current is not None and current in parent_of and current not in walked:
            walked.add(current)
            place[current] = len(walk)
            walk.append(current)
            current = parent_of[current]
        if current is not None and current in place:  # this walk came back to itself: a cycle
            members = walk[place[current] :]
            for at, member in enumerate(members):
                on_cycle[member] = (members, at)
    return on_cycle


def caught_in_cycles(parent_of: Mapping[str, str | None]) -> set[str]:
    """The ids whose chain of parent links never ends: those on a cycle and those below one."""
    ends: dict[str, bool] = {}  # id -> whether its chain ends
    for start in parent_of:
        walk: list[str] = []
        on_walk: set[str] = set()
        current: str | None = start
        while current is not None and current in parent_of and current not in ends and current not in on_walk:
            on_walk.add(current)
            walk.append(current)
            current = parent_of[current]
        if current is None or current not in parent_of:
            ending = True
        elif current in on_walk:
            ending = False
        else:
            ending = ends[current]
        for walked in walk:
            ends[walked] = ending
    return {invocation_id for invocation_id, ending in ends.items() if not ending}


class LinkForest:
    """Parent links added one at a time, each refused when it would close a cycle.

    Each id's top (where following its accepted links ends) is found by union-find with path
    halving, so n links cost about n log n steps, not the n² of walking every chain again.
    """

    def __init__(self) -> None:
        self._up: dict[str, str] = {}  # a linked id -> an id higher up its chain (its parent, or beyond)

    def top(self, invocation_id: str) -> str:
        """The id where following accepted parent links from ``invocation_id`` ends."""
        current = invocation_id
        up = self._up
        while current in up:
            higher = up[current]
            if higher in up:
                up[current] = up[higher]  # halve the path for the next time
            current = higher
        return current

    def closes_cycle(self, child: str, parent: str) -> bool:
        """Whether a link from ``child`` (which has none yet) to ``parent`` would close a cycle."""
        return self.top(parent) == child

    def link(self, child: str, parent: str) -> bool:
        """Accept the link from ``child`` to ``parent``, unless ``child`` has one or it would close a cycle."""
        if child in self._up or self.closes_cycle(child, parent):
            return False
        self._up[child] = parent
        return True
