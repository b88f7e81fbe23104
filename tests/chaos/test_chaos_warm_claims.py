"""SIGKILL the worker while requests claim warm spares; a new worker finishes every claim.

No warm spare may be lost (each ends handed over to exactly one request, or stays warm in its
pool) or handed out twice (distinct warm spares among the hits), and the ledger holds one
reservation per VM: never the warm spare's and its claimant's both.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from contracts.spare import Phase
from tests.chaos.conftest import FAST, Chaos
from tests.helpers import assert_eventually
from tests.stack import ledger_reservations, wait_phase
from tests.warm_stack import SHAPE, new_pool_name, pool_view, wait_pool, warm_site
from workflows.prepare_spare import PrepareSpare

REQUESTS = 6
POOL_SIZE = 4


@pytest.fixture
def inventory_doc() -> dict[str, Any]:
    return warm_site()


async def test_a_worker_killed_during_claims_loses_no_warm_spare_and_hands_none_out_twice(
    chaos: Chaos,
) -> None:
    stack = chaos.stack
    chaos.use_http_provisioner()
    name = new_pool_name()
    pool = {
        "name": name,
        "cluster": "lab",
        "inventory": stack.inventory,
        "pool": "general",
        "size": POOL_SIZE,
        "timeouts": FAST.model_dump(),
        **SHAPE,
    }
    chaos.env["VIRTFLOW_WARM_POOLS"] = json.dumps([pool])
    worker = await chaos.start_worker()  # a worker start starts its configured pools
    warm_ids = {s.spare_id for s in (await wait_pool(stack, name, ready=POOL_SIZE)).spares}

    requests = [chaos.request(**SHAPE) for _ in range(REQUESTS)]
    handles = await asyncio.gather(*(stack.start(r) for r in requests))

    async def claiming() -> None:
        view = await pool_view(stack, name)
        assert any(s.phase == "claimed" for s in view.spares) or view.claimed > 0

    await assert_eventually(claiming, timeout=60, interval=0.05)
    await worker.kill()
    await chaos.start_worker()

    await asyncio.gather(*(wait_phase(h, Phase.READY, timeout=180) for h in handles))
    statuses = [await h.query(PrepareSpare.status) for h in handles]
    hits = {s.spare_id: s.warm.warm_spare_id for s in statuses if s.warm is not None}
    assert hits, "no request took a warm spare"
    assert len(set(hits.values())) == len(hits), f"a warm spare handed out twice: {hits}"
    assert len({s.vm.name for s in statuses if s.vm}) == REQUESTS

    # Every first warm spare is handed over to the one request that has it, or is still warm.
    view = await pool_view(stack, name)
    still_warm = {s.spare_id for s in view.spares if s.phase == "warm"}
    for warm_id in warm_ids:
        handle = stack.client.get_workflow_handle(warm_id)
        if warm_id in hits.values():
            ended = await handle.result()
            assert ended["phase"] == Phase.HANDED_OVER
            assert hits[ended["handed_to"]] == warm_id
        else:
            assert warm_id in still_warm, f"{warm_id} lost: {view}"

    reservations = await ledger_reservations(stack)
    vms = [r.vm_name for r in reservations]
    assert len(vms) == len(set(vms)), f"a VM reserved twice: {sorted(vms)}"
    assert not set(hits.values()) & {r.spare_id for r in reservations}
    for h in handles:
        await h.terminate("test over")
