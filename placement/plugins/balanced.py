"""Score: NodeResourcesBalancedAllocation, hosts whose CPU and memory fill up evenly.

`fC = min(rC / capC, 1)`, `fM = min(rM / capM, 1)` (floats; a zero capacity counts as full),
score `int((1 - abs(fC - fM) / 2) * 100)`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..framework import RequestContext
from ..models import Host
from ..names import BALANCED_ALLOCATION
from ..table import HostTable, IntArray


def _fraction(r: int, cap: int) -> float:
    return 1.0 if cap == 0 else min(r / cap, 1.0)


class BalancedAllocation:
    name = BALANCED_ALLOCATION

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        out = []
        for host in hosts:
            u = ctx.usage(host)
            f_cpu, f_mem = _fraction(u.cpu_req, u.cpu_cap), _fraction(u.mem_req, u.mem_cap)
            out.append(int((1 - abs(f_cpu - f_mem) / 2) * 100))
        return out

    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        u = ctx.candidate_usage(table, idx)
        f_cpu = _fraction_v(u.cpu_req, u.cpu_cap)
        f_mem = _fraction_v(u.mem_req, u.mem_cap)
        return ((1 - np.abs(f_cpu - f_mem) / 2) * 100).astype(np.int64)


def _fraction_v(r: IntArray, cap: IntArray) -> np.ndarray:
    fraction = np.ones(len(cap))  # a zero capacity counts as full
    np.divide(r, cap, out=fraction, where=cap > 0)
    return np.minimum(fraction, 1.0, out=fraction)
