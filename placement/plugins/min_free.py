"""Filter (policy thresholds.min_free): keep at least this much free on a host after placement.

For example `min_free: {gpu: 1}` keeps one GPU free on every host for urgent work. Free is the
effective capacity minus the requested amount including the new VM. Checked CPU, memory, GPU.
"""

from __future__ import annotations

import numpy as np

from ..framework import RequestContext
from ..models import Host
from ..names import (
    BELOW_MIN_FREE_CPU,
    BELOW_MIN_FREE_GPU,
    BELOW_MIN_FREE_MEMORY,
    MIN_FREE_RESOURCES,
)
from ..table import HostTable, IntArray


class MinFreeResources:
    name = MIN_FREE_RESOURCES
    reasons = (BELOW_MIN_FREE_CPU, BELOW_MIN_FREE_MEMORY, BELOW_MIN_FREE_GPU)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        need = ctx.policy.thresholds.min_free
        u = ctx.usage(host)
        free = (u.cpu_cap - u.cpu_req, u.mem_cap - u.mem_req, u.gpu_cap - u.gpu_req)
        for reason, key, left in zip(self.reasons, ("cpu", "memory_mb", "gpu"), free, strict=True):
            if key in need and left < need[key]:
                return reason
        return None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> IntArray | None:
        need = ctx.policy.thresholds.min_free
        u = ctx.table_usage(table)
        out = np.zeros(len(table), dtype=np.int64)
        checks = (
            (3, "gpu", u.gpu_cap - u.gpu_req),
            (2, "memory_mb", u.mem_cap - u.mem_req),
            (1, "cpu", u.cpu_cap - u.cpu_req),
        )
        for code, key, left in checks:  # last written wins: CPU is reported first
            if key in need:
                out = np.where(left < need[key], code, out)
        return out
