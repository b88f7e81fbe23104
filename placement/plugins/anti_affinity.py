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
        group = ctx.request.anti_affinity_group
        if group is None:
            return None
        rows = ctx.group_rows(group)
        if len(rows) == 0:
            return None
        mask = np.zeros(len(table), dtype=bool)
        mask[rows] = True
        if ctx.request.anti_affinity_scope != TOPOLOGY_HOST:
            domains = table.domains(ctx.request.anti_affinity_scope)
            # One extra slot, never taken, for the hosts lacking the key (code -1).
            taken = np.zeros(len(domains) + 1, dtype=bool)
            taken[domains.code[rows]] = True
            taken[-1] = False
            mask |= taken[domains.code]
        return mask
