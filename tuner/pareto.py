"""Pareto arithmetic for several objectives, every value in the sign where less is better.

Non-dominated sorting (which trials no other beats on every objective), crowding distance (how much room a
trial has on its front: the tie-break MO-ASHA and NSGA-II use), constraint-first ordering (a feasible trial
ahead of any infeasible one, infeasible ones by how far they break their bounds) and the hypervolume a front
dominates up to a reference point. Small and exact: a sweep has hundreds of trials, not millions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Point = Sequence[float]


def dominates(a: Point, b: Point) -> bool:
    """``a`` is no worse than ``b`` on every objective and better on one."""
    return all(x <= y for x, y in zip(a, b, strict=True)) and any(x < y for x, y in zip(a, b, strict=True))


def ranks(points: Sequence[Point]) -> list[int]:
    """Each point's front: 0 for the non-dominated, 1 for those only the first front dominates, ..."""
    n = len(points)
    beaten_by = [0] * n
    beats: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            if dominates(points[i], points[j]):
                beats[i].append(j)
                beaten_by[j] += 1
            elif dominates(points[j], points[i]):
                beats[j].append(i)
                beaten_by[i] += 1
    out = [0] * n
    current = [i for i in range(n) if beaten_by[i] == 0]
    level = 0
    while current:
        following = []
        for i in current:
            out[i] = level
            for j in beats[i]:
                beaten_by[j] -= 1
                if beaten_by[j] == 0:
                    following.append(j)
        current, level = following, level + 1
    return out


def crowding(points: Sequence[Point]) -> list[float]:
    """Each point's crowding distance among ``points`` (one front): infinite at either end of an objective,
    else the normalised size of the box its neighbours span."""
    n = len(points)
    if n <= 2:
        return [math.inf] * n
    out = [0.0] * n
    for k in range(len(points[0])):
        order = sorted(range(n), key=lambda i: points[i][k])
        low, high = points[order[0]][k], points[order[-1]][k]
        out[order[0]] = out[order[-1]] = math.inf
        if high == low:
            continue
        for before, here, after in zip(order, order[1:], order[2:], strict=False):
            out[here] += (points[after][k] - points[before][k]) / (high - low)
    return out


def order(points: Sequence[Point], violation: Sequence[float] | None = None) -> list[int]:
    """Indices best first: feasible points by front, then by crowding distance (more room first), then by the
    first objective; then the infeasible ones by how far they break their constraints."""
    n = len(points)
    violation = list(violation) if violation is not None else [0.0] * n
    feasible = [i for i in range(n) if violation[i] <= 0]
    level = ranks([points[i] for i in feasible])
    room: dict[int, float] = {}
    for front in set(level):
        members = [feasible[j] for j, r in enumerate(level) if r == front]
        for i, d in zip(members, crowding([points[i] for i in members]), strict=True):
            room[i] = d
    by_front = dict(zip(feasible, level, strict=True))
    ahead = sorted(feasible, key=lambda i: (by_front[i], -room[i], points[i][0], i))
    behind = sorted((i for i in range(n) if violation[i] > 0), key=lambda i: (violation[i], i))
    return ahead + behind


def front(points: Sequence[Point], violation: Sequence[float] | None = None) -> list[int]:
    """Indices of the feasible non-dominated points."""
    violation = list(violation) if violation is not None else [0.0] * len(points)
    feasible = [i for i in range(len(points)) if violation[i] <= 0]
    level = ranks([points[i] for i in feasible])
    return [i for i, r in zip(feasible, level, strict=True) if r == 0]


def dominated_by(i: int, points: Sequence[Point]) -> int:
    """How many of ``points`` dominate point ``i``."""
    return sum(1 for j, p in enumerate(points) if j != i and dominates(p, points[i]))


def hypervolume(points: Sequence[Point], reference: Point) -> float:
    """The volume the points dominate up to ``reference`` (points not better than it on every objective add
    nothing). Exact, by slicing along the last objective."""
    inside = [tuple(p) for p in points if all(x < r for x, r in zip(p, reference, strict=True))]
    if not inside:
        return 0.0
    if len(reference) == 1:
        return reference[0] - min(p[0] for p in inside)
    if len(reference) == 2:
        total, best_y = 0.0, reference[1]
        for x, y in sorted(inside):
            if y < best_y:
                total += (reference[0] - x) * (best_y - y)
                best_y = y
        return total
    inside.sort(key=lambda p: p[-1])
    total = 0.0
    for k, p in enumerate(inside):
        upper = inside[k + 1][-1] if k + 1 < len(inside) else reference[-1]
        if upper > p[-1]:
            total += (upper - p[-1]) * hypervolume([q[:-1] for q in inside[: k + 1]], reference[:-1])
    return total
