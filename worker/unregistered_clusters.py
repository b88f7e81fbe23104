"""Spares of clusters a configuration does not register.

A cluster is removed only once it has no spares (docs/OPERATIONS.md, Many clusters): every
Kubernetes call of a spare whose cluster is not registered is refused as an unknown cluster,
so such a spare can be neither watched nor released. `virtflow config check --temporal` asks
the running Temporal before a rollout and refuses such a configuration, naming the spares; a
worker started with one anyway says at start which spares it orphans, and runs on.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from temporalio.client import Client
from temporalio.service import RPCError

from contracts.common import CLUSTER, PHASE
from contracts.spare import PREPARE_SPARE
from runtime.settings import Settings

log = logging.getLogger(__name__)

# At most this many spares are named per cluster; the count says how many there are.
NAMED_PER_CLUSTER = 20
# A Temporal that does not answer delays a worker's start by at most this much per page.
LOOK_TIMEOUT = timedelta(seconds=10)


async def unregistered_spares(
    client: Client, settings: Settings, task_queue: str | None = None
) -> dict[str, list[str]]:
    """Running spares of the task queue (default `settings`') whose cluster `settings` does
    not register: cluster -> `<spare id> (<phase>)`, sorted. Warm spares count: they are
    Nodes of their cluster too."""
    # Registered names are DNS labels (settings check them): safe to quote.
    registered = ", ".join(f"'{name}'" for name in settings.cluster_registry.names)
    query = (
        f"WorkflowType = '{PREPARE_SPARE}' AND ExecutionStatus = 'Running' "
        f"AND TaskQueue = '{task_queue or settings.task_queue}' "
        f"AND {CLUSTER.name} NOT IN ({registered})"
    )
    found: dict[str, list[str]] = {}
    async for run in client.list_workflows(query, rpc_timeout=LOOK_TIMEOUT):
        cluster = run.typed_search_attributes.get(CLUSTER) or "(none)"
        phase = run.typed_search_attributes.get(PHASE) or "starting"
        found.setdefault(cluster, []).append(f"{run.id} ({phase})")
    return {cluster: sorted(spares) for cluster, spares in sorted(found.items())}


def orphaned_lines(found: dict[str, list[str]]) -> list[str]:
    """One line per cluster: how many spares, and which (the first NAMED_PER_CLUSTER)."""
    lines = []
    for cluster, spares in found.items():
        named = ", ".join(spares[:NAMED_PER_CLUSTER])
        more = len(spares) - NAMED_PER_CLUSTER
        lines.append(
            f"cluster '{cluster}' is not registered but has {len(spares)} running spare(s): "
            f"{named}{f' and {more} more' if more > 0 else ''}"
        )
    return lines


async def warn_of_orphaned_spares(
    client: Client, settings: Settings, task_queue: str | None = None
) -> dict[str, list[str]]:
    """At a worker's start: say which spares this configuration orphans. Never fatal: the
    worker still serves every registered cluster (and a failed look is only a warning)."""
    try:
        found = await unregistered_spares(client, settings, task_queue)
    except RPCError as err:
        log.warning("could not look for spares of unregistered clusters: %s", err)
        return {}
    for line in orphaned_lines(found):
        log.warning(
            "%s; every Kubernetes call of theirs (health watch, cordon, drain, Node deletion) "
            "is refused until it is registered again (docs/OPERATIONS.md, Many clusters)",
            line,
        )
    return found
