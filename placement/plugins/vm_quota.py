"""Filter 8: a host with a VM quota takes no VM once `vm_count` reaches it."""

from __future__ import annotations

from ..framework import RequestContext
from ..models import Host
from ..names import VM_QUOTA, VM_QUOTA_EXCEEDED
from ..table import BoolArray, HostTable


class VmQuota:
    name = VM_QUOTA
    reasons = (VM_QUOTA_EXCEEDED,)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        full = host.vm_quota is not None and host.vm_count >= host.vm_quota
        return VM_QUOTA_EXCEEDED if full else None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> BoolArray | None:
        return table.quota_full if table.any_quota_full else None
