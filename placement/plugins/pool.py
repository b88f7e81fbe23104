"""Filter 4: a request for a pool only goes to hosts of that pool (no pool: any host)."""

from __future__ import annotations

from ..framework import RequestContext
from ..models import Host
from ..names import POOL, POOL_MISMATCH
from ..table import BoolArray, HostTable


class Pool:
    name = POOL
    reasons = (POOL_MISMATCH,)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        wanted = ctx.request.pool
        return POOL_MISMATCH if wanted is not None and host.pool != wanted else None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> BoolArray | None:
        wanted = ctx.request.pool
        if wanted is None:
            return None
        # -2 matches no host: the pool exists nowhere in this inventory.
        return table.pool != table.pool_codes.get(wanted, -2)
