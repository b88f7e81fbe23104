"""Per-resource score arithmetic of NodeResourcesFit, in scalar and numpy form.

All integer, `//` floors. `cap` is the effective capacity (capacity times allocation ratio,
floored) and `r` the amount requested including the new VM. The numpy forms take every
scored resource at once (`usage.Scored`, one row each) and give one row of scores each.
- LeastAllocated: `((cap - r) * 100) // cap`, 0 when cap is 0 or r > cap.
- MostAllocated: `(min(r, cap) * 100) // cap`, 0 when cap is 0.
- RequestedToCapacityRatio: utilisation `r * 100 // cap` (100 when cap is 0 or r > cap), mapped
  through the piecewise-linear shape (kube-scheduler's broken linear function, scores 0..100).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ..models import ShapePoint
from ..table import FloatArray, IntArray
from ..usage import Scored


def least_allocated(r: int, cap: int) -> int:
    return 0 if cap == 0 or r > cap else ((cap - r) * 100) // cap


def most_allocated(r: int, cap: int) -> int:
    return 0 if cap == 0 else (min(r, cap) * 100) // cap


def shape_score(utilization: int, shape: Sequence[ShapePoint]) -> int:
    if utilization <= shape[0].utilization:
        return shape[0].score
    for before, after in itertools.pairwise(shape):
        if utilization <= after.utilization:
            rise = (after.score - before.score) * (utilization - before.utilization)
            return before.score + rise // (after.utilization - before.utilization)
    return shape[-1].score


def requested_to_capacity(r: int, cap: int, shape: Sequence[ShapePoint]) -> int:
    utilization = 100 if cap == 0 or r > cap else (r * 100) // cap
    return shape_score(utilization, shape)


# Below 2**46, a quotient of at most 100 computed in float64 floors to the integer quotient:
# a / b is then either an integer or at least 1/b below the next one, more than the rounding
# error of the division (100 * 2**-53 relative). Integer division is several times slower.
_FLOAT_EXACT = 2**46


def _percent(part: FloatArray, a: Scored) -> IntArray:
    """`(part * 100) // cap` for whole numbers 0 <= part <= cap, and 0 where cap is 0; `part`
    is a scratch array (scaled in place)."""
    if a.largest_cap >= _FLOAT_EXACT:
        p, cap = part.astype(np.int64) * 100, a.cap.astype(np.int64)
        return np.floor_divide(p, cap, out=np.zeros_like(p), where=cap > 0)
    part *= 100.0
    part /= a.cap_or_1
    return part.astype(np.int64)


def least_allocated_v(a: Scored) -> IntArray:
    # Free room, 0 when over-full; where cap is 0 the room is 0 or less, so 0 is the answer.
    return _percent(np.maximum(a.free, 0.0), a)


def most_allocated_v(a: Scored) -> IntArray:
    used = a.requested()
    np.minimum(used, a.cap, out=used)
    return _percent(used, a)


def shape_score_v(utilization: IntArray, shape: Sequence[ShapePoint]) -> IntArray:
    out = np.full(utilization.shape, shape[-1].score, dtype=np.int64)
    # Walk the segments from the last so the first matching segment wins, as in the scalar form.
    for before, after in reversed(list(itertools.pairwise(shape))):
        inside = utilization <= after.utilization
        rise = (after.score - before.score) * (utilization - before.utilization)
        seg = before.score + rise // (after.utilization - before.utilization)
        out = np.where(inside, seg, out)
    return np.where(utilization <= shape[0].utilization, shape[0].score, out)


def requested_to_capacity_v(a: Scored, shape: Sequence[ShapePoint]) -> IntArray:
    # Over capacity, min(r, cap) makes it 100 %.
    used = a.requested()
    np.minimum(used, a.cap, out=used)
    utilization = np.where(a.cap == 0, 100, _percent(used, a))
    return shape_score_v(utilization, shape)
