"""Each registered cluster's API server, probed by the worker: the gauge
`virtflow_cluster_reachable` (1 or 0 per cluster) that the VirtflowClusterUnreachable alert
watches. One cluster's silence holds up no other's probe."""

from __future__ import annotations

import asyncio
import logging

from temporalio.common import MetricMeter

from activities.kube_clusters import ClusterClients
from contracts import metrics

log = logging.getLogger(__name__)


async def probe_clusters(clusters: ClusterClients, meter: MetricMeter) -> dict[str, bool]:
    """One probe of every cluster at once; the gauge set for each."""
    names = clusters.names
    seen = await asyncio.gather(*(clusters.probe(name) for name in names))
    for name, reach in zip(names, seen, strict=True):
        metrics.cluster_reachable(meter, name, reach.reachable)
        if not reach.reachable:
            log.warning("cluster %s: %s", name, reach.describe(name))
    return {name: reach.reachable for name, reach in zip(names, seen, strict=True)}


async def cluster_probe_loop(clusters: ClusterClients, meter: MetricMeter, every: float) -> None:
    """Until cancelled; then the probes' clients close."""
    try:
        while True:
            await probe_clusters(clusters, meter)
            await asyncio.sleep(every)
    finally:
        await clusters.close()
