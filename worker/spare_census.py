"""How many spares are in each phase now, counted in Temporal visibility.

Counters kept by each worker reset when it restarts and split across replicas; the search
attribute `VirtflowPhase` of the running `PrepareSpare` workflows is the truth. Every
`census_every_seconds` the worker counts them per phase of each registered cluster and sets
the gauge `virtflow_spares` (every replica reports the same numbers: dashboards take
`max by (phase, cluster)`), and counts the releases running past their bound
(`virtflow_releases_overdue`). A spare of a cluster no longer registered is not counted
(the worker warns of those at its start).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from temporalio.client import Client
from temporalio.common import MetricMeter
from temporalio.service import RPCError

from contracts import metrics
from contracts.common import CLUSTER, PHASE
from contracts.release import RELEASE_SPARE
from contracts.spare import Phase

log = logging.getLogger(__name__)

# Phases a running spare can be in (ended ones are counted by their close status).
# The drain's 10 minutes, the Node delete and the VM destroy, with room to spare.
RELEASE_BOUND = timedelta(minutes=30)
RUNNING_PHASES = [p for p in Phase if p not in (Phase.RELEASED, Phase.FAILED, Phase.CANCELLED)]


async def count_spares(
    client: Client, task_queue: str, clusters: list[str]
) -> dict[tuple[str, str], int]:
    """Running PrepareSpare workflows of this task queue per (phase, cluster)."""
    counts: dict[tuple[str, str], int] = {}
    for cluster in clusters:
        for phase in RUNNING_PHASES:
            query = (
                f"WorkflowType = 'PrepareSpare' AND ExecutionStatus = 'Running' AND "
                f"TaskQueue = '{task_queue}' AND {PHASE.name} = '{phase.value}' AND "
                f"{CLUSTER.name} = '{cluster}'"
            )
            counts[phase.value, cluster] = (await client.count_workflows(query)).count
    return counts


async def count_overdue_releases(
    client: Client, task_queue: str, older_than: timedelta = RELEASE_BOUND
) -> int:
    """Running ReleaseSpare workflows started more than `older_than` ago. A release starts
    when its spare enters `releasing`, so its start time is that phase's entry time."""
    started_before = (datetime.now(UTC) - older_than).strftime("%Y-%m-%dT%H:%M:%SZ")
    query = (
        f"WorkflowType = '{RELEASE_SPARE}' AND ExecutionStatus = 'Running' AND "
        f"TaskQueue = '{task_queue}' AND StartTime < '{started_before}'"
    )
    return (await client.count_workflows(query)).count


async def record_census(
    client: Client, meter: MetricMeter, task_queue: str, clusters: list[str]
) -> dict[tuple[str, str], int]:
    counts = await count_spares(client, task_queue, clusters)
    for (phase, cluster), count in counts.items():
        metrics.spares_in_phase(meter, phase, cluster, count)
    metrics.releases_overdue(meter, await count_overdue_releases(client, task_queue))
    return counts


async def census_loop(
    client: Client, meter: MetricMeter, task_queue: str, clusters: list[str], every: float
) -> None:
    """Until cancelled; a failed count is logged and tried again next time."""
    while True:
        try:
            await record_census(client, meter, task_queue, clusters)
        except RPCError as err:
            log.warning("spare census: Temporal visibility did not answer: %s", err)
        await asyncio.sleep(every)
