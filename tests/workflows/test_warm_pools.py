"""Warm pools on the lab: a pool fills, a matching request takes a warm spare at once, one
that does not match takes the usual path, the pool refills, and `size: 0` drains it."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from contracts.reconcile import ReconcileInput
from contracts.spare import SPARE_ID_LABEL, Phase, ReleaseRequest
from contracts.warm import WARM_LABEL
from contracts.warm import warm_pool_workflow_id as pool_id
from runtime.clusters import ClusterConfig
from runtime.settings import Settings
from tests.helpers import assert_ended_quietly, assert_eventually
from tests.kubectl import json_stream, kubectl_command, kubectl_env, needs_kubectl
from tests.stack import Stack, ledger_reservations, running_stack, wait_phase
from tests.warm_stack import (
    SHAPE,
    new_pool_name,
    pool_view,
    resize,
    wait_pool,
    warm_site,
    warm_stack,
    with_warm_pool,
)
from tests.workflows.test_replay import recording_only, replay_and_keep
from worker.schedules import apply_warm_pools
from workflows.prepare_spare import PrepareSpare
from workflows.reconcile_spares import ReconcileSpares


@pytest.fixture
def pool_name() -> str:
    return new_pool_name()


@pytest.fixture
async def stack(
    client: Client, task_queue: str, tmp_path: Path, pool_name: str
) -> AsyncIterator[Stack]:
    async with warm_stack(client, task_queue, tmp_path, pool_name) as running:
        yield running


def node(stack: Stack, name: str) -> dict[str, Any]:
    found = stack.lab.kube.store.get("nodes", "", name)
    assert found is not None, f"no Node {name}"
    return dict(found)


def warm_taints(n: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in n.get("spec", {}).get("taints") or [] if t["key"] == WARM_LABEL]


async def test_a_pool_fills_hands_a_spare_over_refills_and_drains(
    stack: Stack,
    pool_name: str,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.INFO)
    await apply_warm_pools(stack.client, stack.settings, stack.task_queue)
    view = await wait_pool(stack, pool_name, ready=3)
    warm_ids = {s.spare_id for s in view.spares}

    async def watched() -> None:
        for spare_id in warm_ids:
            described = await stack.client.get_workflow_handle(spare_id).describe()
            pending = described.raw_description.pending_activities
            assert [a.activity_type.name for a in pending] == ["watch_node_health"], spare_id
            assert pending[0].state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED

    await assert_eventually(watched)
    for spare_id in warm_ids:
        n = node(stack, spare_id)
        assert n["metadata"]["labels"][WARM_LABEL] == pool_name
        assert warm_taints(n) == [{"key": WARM_LABEL, "value": pool_name, "effect": "NoSchedule"}]
        assert spare_id in [r.spare_id for r in await ledger_reservations(stack)]

    # A matching request is Ready in one step, on a warm spare's VM and Node.
    req = stack.request(**SHAPE)
    handle = await stack.start(req)
    await wait_phase(handle, Phase.READY)
    status = await handle.query(PrepareSpare.status)
    assert status.warm is not None and status.warm.pool == pool_name
    taken = status.warm.warm_spare_id
    assert taken in warm_ids and status.vm is not None and status.vm.name == taken
    assert [s.phase for s in status.steps] == [Phase.VALIDATING, Phase.RESERVING, Phase.READY]
    n = node(stack, taken)
    assert WARM_LABEL not in n["metadata"]["labels"] and warm_taints(n) == []
    assert n["metadata"]["labels"][SPARE_ID_LABEL] == req.spare_id
    reservations = {r.spare_id: r for r in await ledger_reservations(stack)}
    assert taken not in reservations and reservations[req.spare_id].vm_name == taken

    async def ready_delivered() -> None:
        assert "spare.ready" in await stack.event_types(req.spare_id)

    await assert_eventually(ready_delivered)
    warm_handle = stack.client.get_workflow_handle(taken)
    handed = await warm_handle.result()
    assert handed["phase"] == Phase.HANDED_OVER and handed["handed_to"] == req.spare_id
    # Its Node's watch ended before it did, and the hand-over logged nothing.
    await assert_ended_quietly(warm_handle, caplog, capfd)

    # The orphan sweep sees who looks after the handed-over VM: the spare that claimed it.
    swept = await stack.client.execute_workflow(
        ReconcileSpares.run,
        ReconcileInput(grace_seconds=1),
        id=f"reconcile-{uuid.uuid4().hex[:8]}",
        task_queue=stack.task_queue,
    )
    assert taken not in swept.suspects

    # The pool refills behind the claim.
    view = await wait_pool(stack, pool_name, ready=3)
    assert view.claimed == 1 and taken not in {s.spare_id for s in view.spares}

    # Another shape, or a selector no warm spare's host has: the usual path.
    for other in (
        stack.request(cpu=2, memory_mb=512),
        stack.request(node_selector={"special": "yes"}, **SHAPE),
    ):
        cold = await stack.start(other)
        await wait_phase(cold, Phase.READY)
        cold_status = await cold.query(PrepareSpare.status)
        assert cold_status.warm is None and cold_status.vm is not None
        assert cold_status.vm.name == other.spare_id
    assert (await pool_view(stack, pool_name)).ready == 3

    # The claimed spare releases its VM and Node under the warm spare's name.
    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
    released = await handle.result()
    assert released.phase == Phase.RELEASED
    assert stack.lab.kube.store.get("nodes", "", taken) is None
    assert taken not in stack.lab.hypervisor.vms
    assert req.spare_id not in [r.spare_id for r in await ledger_reservations(stack)]

    # size 0 drains the pool: its spares are released, their room given back.
    await resize(stack, 0)

    async def drained() -> None:
        assert (await pool_view(stack, pool_name)).spares == []
        held = {r.spare_id for r in await ledger_reservations(stack)}
        assert not any(pool_name in spare_id for spare_id in held), held

    await assert_eventually(drained)
    assert not any(pool_name in name for name in stack.lab.hypervisor.vms)


@needs_kubectl
async def test_a_warm_node_is_never_schedulable_not_even_as_it_becomes_ready(
    stack: Stack, pool_name: str
) -> None:
    """Every state of every warm Node the API ever showed, as `kubectl get --watch` saw it:
    from its registration on, it carries the warm taint."""
    kubeconfig = stack.settings.kubeconfig
    assert kubeconfig is not None
    store = stack.lab.kube.store
    watches = store.watch_count
    watch = await asyncio.create_subprocess_exec(
        *kubectl_command(kubeconfig, "get", "nodes", "--watch", "-o", "json"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=kubectl_env(kubeconfig),
    )
    try:

        async def watching() -> None:
            assert store.watch_count > watches, "kubectl does not watch yet"

        await assert_eventually(watching)  # from here on it sees every change
        await apply_warm_pools(stack.client, stack.settings, stack.task_queue)
        view = await wait_pool(stack, pool_name, ready=3)
    finally:
        watch.terminate()
        out, err = await watch.communicate()
    seen = [n for n in json_stream(out.decode()) if pool_name in n["metadata"]["name"]]
    assert {n["metadata"]["name"] for n in seen} == {s.spare_id for s in view.spares}, err
    for state in seen:
        assert warm_taints(state), f"a warm Node without its taint: {state}"
        assert warm_taints(state)[0] == {
            "key": WARM_LABEL,
            "value": pool_name,
            "effect": "NoSchedule",
        }


async def test_concurrent_requests_never_share_a_warm_spare(stack: Stack, pool_name: str) -> None:
    await resize(stack, 5)
    view = await wait_pool(stack, pool_name, ready=5)
    warm_ids = {s.spare_id for s in view.spares}
    requests = [stack.request(**SHAPE) for _ in range(20)]
    handles = await asyncio.gather(*(stack.start(r) for r in requests))
    await asyncio.gather(*(wait_phase(h, Phase.READY, timeout=120) for h in handles))
    statuses = [await h.query(PrepareSpare.status) for h in handles]
    warm = [s for s in statuses if s.warm is not None]
    assert len(warm) == 5
    assert {s.warm.warm_spare_id for s in warm if s.warm} == warm_ids
    assert len({s.vm.name for s in statuses if s.vm}) == 20
    assert all(s.vm and s.vm.name == s.spare_id for s in statuses if s.warm is None)


@recording_only
async def test_record_a_warm_claim(stack: Stack, pool_name: str) -> None:
    """Saved for the replay tests: a pool, a spare that claimed from it, the handed-over one."""
    await resize(stack, 1)
    await wait_pool(stack, pool_name, ready=1)
    handle = await stack.start(stack.request(**SHAPE))
    await wait_phase(handle, Phase.READY)
    taken = (await handle.query(PrepareSpare.status)).warm
    assert taken is not None
    await wait_pool(stack, pool_name, ready=1)
    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="recorded"))
    await handle.result()
    await resize(stack, 0)

    async def drained() -> None:
        assert (await pool_view(stack, pool_name)).spares == []

    await assert_eventually(drained)
    pool = stack.client.get_workflow_handle(pool_id(pool_name))
    warm = stack.client.get_workflow_handle(taken.warm_spare_id)
    await replay_and_keep(
        await handle.fetch_history(), await warm.fetch_history(), await pool.fetch_history()
    )


async def test_a_request_that_does_not_fit_takes_warm_spares_back(
    client: Client, task_queue: str, tmp_path: Path, pool_name: str
) -> None:
    # One general host of 4 CPUs, filled by 4 warm spares of 1 CPU.
    site = warm_site(hosts=1, cpu_each=4)
    async with warm_stack(client, task_queue, tmp_path, pool_name, size=4, site=site) as stack:
        await apply_warm_pools(stack.client, stack.settings, stack.task_queue)
        warm_ids = {s.spare_id for s in (await wait_pool(stack, pool_name, ready=4)).spares}

        # 2 CPUs in pool general: only the room of two warm spares makes it fit.
        req = stack.request(cpu=2, memory_mb=512, pool="general")
        handle = await stack.start(req)
        await wait_phase(handle, Phase.READY)
        status = await handle.query(PrepareSpare.status)
        assert status.warm is None and status.host == "bm-00"
        waited = [s.detail for s in status.steps if s.phase == Phase.WAITING_CAPACITY]
        assert len(waited) == 1 and "taking back warm spares" in waited[0]

        taken = []
        for spare_id in warm_ids:
            result = await stack.client.get_workflow_handle(spare_id).describe()
            if result.status and result.status.name == "COMPLETED":
                ended = await stack.client.get_workflow_handle(spare_id).result()
                assert (
                    ended["reason"] == f"taken back from warm pool {pool_name} for {req.spare_id}"
                )
                taken.append(spare_id)
        assert len(taken) == 2

        # The pool cannot refill the room it gave up, and says why.
        async def short() -> None:
            view = await pool_view(stack, pool_name)
            assert view.short_reason is not None and "no_capacity" in view.short_reason, view
            warm = {s.spare_id for s in view.spares if s.phase == "warm"}
            assert warm == warm_ids - set(taken)

        await assert_eventually(short)

        async def told() -> None:
            events = await stack.events(pool_id(pool_name))
            assert [e["type"] for e in events] == ["warm_pool.short"], events
            assert events[0]["event"]["data"]["pool"] == pool_name
            assert "no_capacity" in events[0]["event"]["data"]["reason"]

        await assert_eventually(told)
        await handle.terminate("test over")


async def test_a_spare_cancelled_while_it_claims_gives_back_what_it_took(
    stack: Stack, pool_name: str
) -> None:
    await resize(stack, 1)
    [warm] = (await wait_pool(stack, pool_name, ready=1)).spares
    req = stack.request(**SHAPE)
    handle = await stack.start(req)
    await handle.cancel()
    with pytest.raises(WorkflowFailureError):
        await handle.result()

    # Either the claim never happened and the spare is still warm, or it did and the
    # cancelled spare released the VM, Node and room it took: never lost, never both.
    warm_handle = stack.client.get_workflow_handle(warm.spare_id)
    description = await warm_handle.describe()
    if description.status is not None and description.status.name == "COMPLETED":
        ended = await warm_handle.result()
        assert ended["phase"] == Phase.HANDED_OVER and ended["handed_to"] == req.spare_id
        assert warm.spare_id not in stack.lab.hypervisor.vms
        assert stack.lab.kube.store.get("nodes", "", warm.spare_id) is None
    else:
        assert warm.spare_id in {s.spare_id for s in (await pool_view(stack, pool_name)).spares}
    held = {r.spare_id for r in await ledger_reservations(stack)}
    assert req.spare_id not in held
    await wait_pool(stack, pool_name, ready=1)


async def test_warm_spares_are_outside_the_budget_until_claimed(
    client: Client, task_queue: str, tmp_path: Path, pool_name: str
) -> None:
    """A cluster's surge budget counts its spares in use: not the warm ones its pools keep,
    but a claimed one from the claim on."""
    warm = with_warm_pool(pool_name, 1)

    def budget_of_one(settings: Settings) -> Settings:
        lab = ClusterConfig(kubeconfig=settings.kubeconfig, max_spares=1)
        return warm(settings).model_copy(update={"kubeconfig": None, "clusters": {"lab": lab}})

    async with running_stack(
        client, task_queue, tmp_path, warm_site(), configure=budget_of_one
    ) as stack:
        await apply_warm_pools(stack.client, stack.settings, stack.task_queue)
        await wait_pool(stack, pool_name, ready=1)
        # The warm spare takes none of the budget: a spare of another shape fits it.
        cold = await stack.start(stack.request(cpu=2, memory_mb=512))
        await wait_phase(cold, Phase.READY)
        await cold.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
        await cold.result()

        claiming = await stack.start(stack.request(**SHAPE))
        await wait_phase(claiming, Phase.READY)
        assert (await claiming.query(PrepareSpare.status)).warm is not None
        # The claimed spare is the cluster's one spare in use now.
        over = await stack.start(stack.request(cpu=2, memory_mb=512))
        await wait_phase(over, Phase.FAILED)
        with pytest.raises(WorkflowFailureError) as caught:
            await over.result()
        assert isinstance(caught.value.cause, ApplicationError)
        assert caught.value.cause.message == (
            "no_capacity: cluster 'lab' is at its surge budget: 1 of max_spares 1 spares in "
            "use, 1 more asked for"
        )
        await claiming.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
        await claiming.result()
        await resize(stack, 0)
