"""Score: NodeResourcesBalancedAllocation, hosts whose resources fill up evenly.

Per resource the fraction `f = min(r / cap, 1)` (a float; a zero capacity counts as full), over
CPU and memory, plus disk when its resource weight is positive. Score `int((1 - std) * 100)`
with `std` the population standard deviation of the fractions; for two resources that is
`abs(fC - fM) / 2`, computed so, exactly as kube-scheduler does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..framework import RequestContext
from ..models import Host
from ..names import BALANCED_ALLOCATION
from ..table import FloatArray, HostTable, IntArray
from ..usage import Scored, scored_resources


def _fraction(r: int, cap: int) -> float:
    return 1.0 if cap == 0 else min(r / cap, 1.0)


def _std(fractions: Sequence[float]) -> float:
    if len(fractions) == 2:
        return abs(fractions[0] - fractions[1]) / 2
    mean = sum(fractions) / len(fractions)
    return math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))


class BalancedAllocation:
    name = BALANCED_ALLOCATION

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        with_disk = ctx.policy.resource_weights.disk_gb > 0
        out = []
        for host in hosts:
            u = ctx.usage(host)
            fractions = [_fraction(u.cpu_req, u.cpu_cap), _fraction(u.mem_req, u.mem_cap)]
            if with_disk:
                fractions.append(_fraction(u.disk_req, u.disk_cap))
            out.append(int((1 - _std(fractions)) * 100))
        return out

    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        a = ctx.candidate_usage(table, idx).scored(scored_resources(ctx.policy))
        std = _std_v(_fractions_v(a))
        # int((1 - std) * 100), in place.
        np.subtract(1.0, std, out=std)
        std *= 100
        return std.astype(np.int64)


def _fractions_v(a: Scored) -> FloatArray:
    """`min(r / cap, 1)` per resource (a row each), 1 where cap is 0: there the requested
    amount read against a divisor of 1 is at least 1 (`requested_or_full`)."""
    fractions = a.requested_or_full()
    fractions /= a.cap_or_1  # the same division as r / cap where cap > 0
    np.minimum(fractions, 1.0, out=fractions)
    return fractions


def _std_v(fractions: FloatArray) -> FloatArray:
    """`_std` per host (a column of `fractions`), with the same operations in the same order
    (the same floats)."""
    if len(fractions) == 2:
        diff = fractions[0] - fractions[1]
        np.abs(diff, out=diff)
        diff /= 2
        return diff
    total = fractions[0].copy()
    for f in fractions[1:]:
        total += f
    mean = total / len(fractions)
    squares = np.zeros(len(mean))
    for f in fractions:
        d = f - mean
        squares += d * d
    return np.sqrt(squares / len(fractions))
