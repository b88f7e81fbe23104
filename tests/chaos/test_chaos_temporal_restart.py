"""The Temporal server stops with spares in flight and starts again on the same SQLite file.

The test runs its own `temporal server start-dev --db-filename` (the one `virtflow dev` runs),
not the session's in-memory server, so the restart is real. The worker and the client stay
up through the outage and reconnect by themselves; every spare resumes where it was.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from cli.dev import TemporalDevServer, free_ports
from contracts.spare import Phase
from lab.hypervisor import load_inventory_file
from runtime.settings import Settings
from tests.chaos.conftest import FAST
from tests.chaos.evidence import CapacityCensus, duplicates, summary
from tests.helpers import assert_eventually
from tests.stack import LAB_INVENTORY, ledger_reservations, running_stack
from workflows.prepare_spare import PrepareSpare

SPARES = 4


async def test_spares_in_flight_resume_after_a_temporal_restart(tmp_path: Path) -> None:
    ports = free_ports()
    server = TemporalDevServer(ports, tmp_path)
    settings = Settings(temporal_address=f"127.0.0.1:{ports.temporal}")
    client = await server.start(settings)
    inventory_doc = load_inventory_file(LAB_INVENTORY)
    try:
        async with running_stack(client, f"tq-{uuid.uuid4()}", tmp_path, inventory_doc) as stack:
            census = CapacityCensus(stack)
            reqs = [stack.request(ttl_seconds=2, timeouts=FAST) for _ in range(SPARES)]
            async with census.running():
                handles = [await stack.start(r) for r in reqs]

                async def under_way() -> None:
                    phases = [(await h.query(PrepareSpare.status)).phase for h in handles]
                    assert any(p in (Phase.WAITING_READY, Phase.READY) for p in phases), phases

                await assert_eventually(under_way, timeout=60)
                phases_at_stop = [(await h.query(PrepareSpare.status)).phase for h in handles]
                await server.stop()
                await server.start(settings)
                results = await asyncio.gather(*(h.result() for h in handles))

            assert [r.phase for r in results] == [Phase.RELEASED] * SPARES
            # Resumed, not restarted: each spare's VM was created once, and its history holds
            # the steps taken before the stop.
            hypervisor = stack.lab.hypervisor
            assert sorted(hypervisor.created) == sorted(r.spare_id for r in reqs)
            assert hypervisor.vms == {}
            assert await ledger_reservations(stack) == []
            assert census.over_commits == []
            summary(
                "temporal-restart",
                faults=1,
                spares_in_flight=SPARES,
                phases_at_stop=len({p for p in phases_at_stop if p != Phase.RELEASED}),
                lost=sum(r.phase != Phase.RELEASED for r in results),
                duplicated=len(duplicates(hypervisor.created)),
                over_committed=len(census.over_commits),
            )
    finally:
        await server.stop()
