"""A refusal for lack of room never names another cluster's spares to a scoped caller.

`409 no_capacity` names the spares that hold the room (`held_by`, and its detail). Two clusters
may share an inventory: to a token of prod-a, a spare of prod-b holding a shared host's room is
"a spare of another cluster", so that whether prod-b's spares exist is not revealed (as their
status is 404 to it). Whose spare a name is comes from the spare's own search attribute.
"""

from __future__ import annotations

import asyncio

from temporalio.client import Client
from temporalio.service import RPCError

from contracts.common import CLUSTER

from .errors import NoCapacity
from .spare_runs import Scope

ANOTHER_CLUSTERS = "a spare of another cluster"


async def _cluster_of(client: Client, spare_id: str) -> str | None:
    try:
        description = await client.get_workflow_handle(spare_id).describe()
    except RPCError:
        return None  # not to be found: not the caller's to see either
    return description.typed_search_attributes.get(CLUSTER)


async def without_foreign_spares(refused: NoCapacity, client: Client, scope: Scope) -> NoCapacity:
    """`refused` as a caller scoped to `scope` may read it."""
    if scope is None or not refused.held_by:
        return refused
    clusters = await asyncio.gather(*(_cluster_of(client, s) for s in refused.held_by))
    foreign = {s for s, c in zip(refused.held_by, clusters, strict=True) if c not in scope}
    if not foreign:
        return refused
    detail = str(refused)
    # Longest first: no id is left half-replaced inside a longer one.
    for spare_id in sorted(foreign, key=len, reverse=True):
        detail = detail.replace(spare_id, ANOTHER_CLUSTERS)
    return NoCapacity(
        detail,
        refused.requested,
        refused.placeable,
        held_by=[s for s in refused.held_by if s not in foreign],
        free_until=refused.free_until,
        free_again_at=refused.free_again_at,
    )
