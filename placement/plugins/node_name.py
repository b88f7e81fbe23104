"""Filters 2-3: an exact host name, then a name pattern (unanchored, like Go's MatchString)."""

from __future__ import annotations

import numpy as np

from ..framework import RequestContext
from ..models import Host
from ..names import NODE_NAME, NODE_NAME_MISMATCH, NODE_NAME_REGEX_MISMATCH
from ..table import HostTable, IntArray


class NodeName:
    name = NODE_NAME
    reasons = (NODE_NAME_MISMATCH, NODE_NAME_REGEX_MISMATCH)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        wanted = ctx.request.node_name
        if wanted is not None and host.name != wanted:
            return NODE_NAME_MISMATCH
        if ctx.name_regex is not None and ctx.name_regex.search(host.name) is None:
            return NODE_NAME_REGEX_MISMATCH
        return None

    def filter_table(self, ctx: RequestContext, table: HostTable) -> IntArray | None:
        if ctx.request.node_name is None and ctx.request.node_name_regex is None:
            return None
        out = np.zeros(len(table), dtype=np.int64)
        if ctx.request.node_name_regex is not None:
            out[~table.name_matches(ctx.request.node_name_regex)] = 2
        wanted = ctx.request.node_name
        if wanted is not None:
            keep = table.index.get(wanted)
            kept = out[keep] if keep is not None else 0
            out[:] = 1
            if keep is not None:
                out[keep] = kept
        return out
