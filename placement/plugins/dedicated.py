"""Filters 5-7: dedicated requests want a whole dedicated host; shared ones stay off them."""

from __future__ import annotations

import numpy as np

from ..framework import FilterMasks, RequestContext
from ..models import Host
from ..names import DEDICATED, DEDICATED_HOST_OCCUPIED, DEDICATED_HOST_RESERVED, DEDICATED_REQUIRED
from ..table import HostTable, IntArray


class Dedicated:
    name = DEDICATED
    reasons = (DEDICATED_REQUIRED, DEDICATED_HOST_RESERVED, DEDICATED_HOST_OCCUPIED)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        if ctx.request.dedicated:
            if not host.dedicated:
                return DEDICATED_REQUIRED
            return DEDICATED_HOST_OCCUPIED if host.vm_count > 0 else None
        if host.dedicated and not ctx.policy.allow_shared_on_dedicated:
            return DEDICATED_HOST_RESERVED
        return None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> IntArray | FilterMasks | None:
        if ctx.request.dedicated:
            return np.where(~table.dedicated, 1, np.where(table.vm_count > 0, 3, 0))
        if ctx.policy.allow_shared_on_dedicated or not table.any_dedicated:
            return None
        # The dedicated hosts fail with the second reason: a mask, not a column of codes.
        return (None, table.dedicated, None)
