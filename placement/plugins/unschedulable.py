"""Filter 1: a cordoned host (maintenance) takes no new VM."""

from __future__ import annotations

from ..framework import RequestContext, codes
from ..models import Host
from ..names import NODE_UNSCHEDULABLE, UNSCHEDULABLE
from ..table import HostTable, IntArray


class NodeUnschedulable:
    name = NODE_UNSCHEDULABLE
    reasons = (UNSCHEDULABLE,)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        return UNSCHEDULABLE if host.unschedulable else None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> IntArray | None:
        return codes(table.unschedulable) if table.any_unschedulable else None
