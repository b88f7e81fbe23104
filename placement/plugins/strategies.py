"""Per-resource score arithmetic of NodeResourcesFit, in scalar and numpy form.

All integer, `//` floors. `cap` is the effective capacity (capacity times allocation ratio,
floored) and `r` the amount requested including the new VM.
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
from ..table import IntArray


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


def _safe(cap: IntArray) -> IntArray:
    return np.where(cap == 0, 1, cap)


def least_allocated_v(r: IntArray, cap: IntArray) -> IntArray:
    # Free room, 0 when over-full; where cap is 0 the room is 0 too and stays the answer.
    free = cap - r
    np.maximum(free, 0, out=free)
    free *= 100
    return np.floor_divide(free, cap, out=free, where=cap > 0)


def most_allocated_v(r: IntArray, cap: IntArray) -> IntArray:
    return np.where(cap == 0, 0, (np.minimum(r, cap) * 100) // _safe(cap))


def shape_score_v(utilization: IntArray, shape: Sequence[ShapePoint]) -> IntArray:
    out = np.full(utilization.shape, shape[-1].score, dtype=np.int64)
    # Walk the segments from the last so the first matching segment wins, as in the scalar form.
    for before, after in reversed(list(itertools.pairwise(shape))):
        inside = utilization <= after.utilization
        rise = (after.score - before.score) * (utilization - before.utilization)
        seg = before.score + rise // (after.utilization - before.utilization)
        out = np.where(inside, seg, out)
    return np.where(utilization <= shape[0].utilization, shape[0].score, out)


def requested_to_capacity_v(r: IntArray, cap: IntArray, shape: Sequence[ShapePoint]) -> IntArray:
    utilization = np.where((cap == 0) | (r > cap), 100, (r * 100) // _safe(cap))
    return shape_score_v(utilization, shape)
