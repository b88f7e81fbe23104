"""Filter 15: spread the VMs of an anti-affinity group, like Nova server groups.

`anti_affinity_scope` is any topology key (`host`, `rack`, a label key): no VM on a host whose
domain under that key already holds one of the group. A host that lacks the key falls back to
host scope: it conflicts only when it holds a VM of the group itself.
"""

from __future__ import annotations

import numpy as np

from ..framework import RequestContext
from ..models import Host
from ..names import ANTI_AFFINITY, ANTI_AFFINITY_CONFLICT, TOPOLOGY_HOST
from ..table import BoolArray, HostTable
from ..topology import domain_of


class AntiAffinity:
    name = ANTI_AFFINITY
    reasons = (ANTI_AFFINITY_CONFLICT,)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        if host.name in ctx.group_hosts:
            return ANTI_AFFINITY_CONFLICT
        domain = domain_of(host, ctx.request.anti_affinity_scope)
        if domain is not None and domain in ctx.group_domains:
            return ANTI_AFFINITY_CONFLICT
        return None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> BoolArray | None:
        if not ctx.group_hosts:
            return None
        mask = np.zeros(len(table), dtype=bool)
        for name in ctx.group_hosts:
            i = table.index.get(name)
            if i is not None:
                mask[i] = True
        if ctx.group_domains and ctx.request.anti_affinity_scope != TOPOLOGY_HOST:
            domains = table.domains(ctx.request.anti_affinity_scope)
            taken = [domains.lookup[d] for d in ctx.group_domains]
            mask |= np.isin(domains.code, taken)
        return mask
