"""Filter 15: spread the VMs of an anti-affinity group, like Nova server groups.

Scope host: no two VMs of the group on one host. Scope rack: none on a host whose non-null rack
already holds one; a host without a rack falls back to host scope.
"""

from __future__ import annotations

import numpy as np

from ..framework import RequestContext, codes
from ..models import Host
from ..names import ANTI_AFFINITY, ANTI_AFFINITY_CONFLICT
from ..table import HostTable, IntArray


class AntiAffinity:
    name = ANTI_AFFINITY
    reasons = (ANTI_AFFINITY_CONFLICT,)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        if host.name in ctx.group_hosts:
            return ANTI_AFFINITY_CONFLICT
        by_rack = ctx.request.anti_affinity_scope == "rack"
        if by_rack and host.rack is not None and host.rack in ctx.group_racks:
            return ANTI_AFFINITY_CONFLICT
        return None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> IntArray | None:
        if not ctx.group_hosts:
            return None
        mask = np.zeros(len(table), dtype=bool)
        for name in ctx.group_hosts:
            i = table.index.get(name)
            if i is not None:
                mask[i] = True
        if ctx.request.anti_affinity_scope == "rack" and ctx.group_racks:
            racks = [table.rack_codes[r] for r in ctx.group_racks]
            mask |= np.isin(table.rack, racks)
        return codes(mask)
