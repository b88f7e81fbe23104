"""Filter 1: a cordoned host (maintenance) takes no new VM.

Unless the request tolerates the taint `node.kubernetes.io/unschedulable:NoSchedule`, an
operator's deliberate choice to place onto a cordoned host, as kube-scheduler's
NodeUnschedulable lets a Pod with that toleration onto a cordoned Node.
"""

from __future__ import annotations

from ..framework import RequestContext
from ..models import Host, Taint, VmRequest
from ..names import NODE_UNSCHEDULABLE, UNSCHEDULABLE
from ..table import BoolArray, HostTable

CORDON_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


def tolerates_cordon(request: VmRequest) -> bool:
    return any(t.tolerates(CORDON_TAINT) for t in request.tolerations)


class NodeUnschedulable:
    name = NODE_UNSCHEDULABLE
    reasons = (UNSCHEDULABLE,)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        if host.unschedulable and not tolerates_cordon(ctx.request):
            return UNSCHEDULABLE
        return None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> BoolArray | None:
        if not table.any_unschedulable or tolerates_cordon(ctx.request):
            return None
        return table.unschedulable
