"""Score (policy thresholds.prefer_below_percent): prefer hosts that stay under a use threshold.

For each configured resource, a host satisfies it when its use after placement is at most the
percentage of its effective capacity (`r * 100 <= pct * cap`, exact in integers). Score:
`100 * satisfied // configured`. Its plugin weight (default 1) sets how much that matters.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..framework import RequestContext
from ..models import Host
from ..names import RESOURCE_THRESHOLD
from ..table import HostTable, IntArray


class ResourceThreshold:
    name = RESOURCE_THRESHOLD

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        limits = ctx.policy.thresholds.prefer_below_percent
        if not limits:
            return None
        out = []
        for host in hosts:
            u = ctx.usage(host)
            pairs = {"cpu": (u.cpu_req, u.cpu_cap), "memory_mb": (u.mem_req, u.mem_cap)}
            pairs["gpu"] = (u.gpu_req, u.gpu_cap)
            ok = sum(1 for k, pct in limits.items() if pairs[k][0] * 100 <= pct * pairs[k][1])
            out.append(100 * ok // len(limits))
        return out

    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        limits = ctx.policy.thresholds.prefer_below_percent
        if not limits:
            return None
        u = ctx.table_usage(table)
        pairs = {
            "cpu": (u.cpu_req, u.cpu_cap),
            "memory_mb": (u.mem_req, u.mem_cap),
            "gpu": (u.gpu_req, u.gpu_cap),
        }
        ok = np.zeros(len(idx), dtype=np.int64)
        for key, pct in limits.items():
            r, cap = pairs[key]
            ok += r[idx] * 100 <= pct * cap[idx]
        return 100 * ok // len(limits)
