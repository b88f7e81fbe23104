"""Releases whose drain waits for pods to terminate, or meets a disruption budget it cannot
get past in time: each drain policy, with the budget named in the events and the status."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from contracts.spare import Phase, ReleaseRequest
from lab.kube_api import block_budget_name
from lab.kube_pods import SHUTDOWN_ANNOTATION
from tests.helpers import assert_eventually
from tests.stack import Provisioner, Stack, ledger_reservations, wait_phase
from workflows.prepare_spare import PrepareSpare


@pytest.fixture
def provisioner() -> Provisioner:
    """The lab hypervisor's API: making the VM is not the point here (the playbook's own
    tests cover it)."""
    return "http"


async def event(stack: Stack, spare_id: str, event_type: str) -> dict[str, Any]:
    async def arrived() -> dict[str, Any]:
        found = [e for e in await stack.events(spare_id) if e["type"] == event_type]
        assert found, f"no {event_type} yet"
        return found[0]

    return await assert_eventually(arrived)


def data(stored: dict[str, Any]) -> dict[str, Any]:
    """The event's `data`, as the reference receiver stored it."""
    found: dict[str, Any] = stored["event"]["data"]
    return found


async def ready_spare(stack: Stack, **fields: Any) -> tuple[Any, Any]:
    req = stack.request(**fields)
    stack.lab.kubelet.set_behaviour(req.spare_id, ready_delay=0)
    handle = await stack.start(req)
    await wait_phase(handle, Phase.READY)
    return req, handle


async def test_a_release_waits_for_a_pod_with_a_3_s_grace_period(stack: Stack) -> None:
    req, handle = await ready_spare(stack)
    slow = {
        "metadata": {"name": "slow", "annotations": {SHUTDOWN_ANNOTATION: "600"}},
        "spec": {
            "nodeName": req.spare_id,
            "terminationGracePeriodSeconds": 3,
            "containers": [{"name": "c", "image": "lab/c"}],
        },
        "status": {"phase": "Running"},
    }
    stack.lab.kube.store.create("pods", "default", slow)  # the lab runs in this loop
    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
    result = await handle.result()
    assert result.phase == Phase.RELEASED
    status = await handle.query(PrepareSpare.status)
    assert status.drain is not None and status.drain.outcome == "drained"
    assert "default/slow" in status.drain.evicted
    released = data(await event(stack, req.spare_id, "spare.released"))
    assert released["drain"]["outcome"] == "drained"
    assert "default/slow" in released["drain"]["evicted"]
    # The Node was deleted only after the pod had gone: its Drained event says so.
    drained = [
        e
        for e in stack.lab.kube.store.list("events", "default")
        if e["reason"] == "Drained" and e["involvedObject"]["name"] == req.spare_id
    ]
    assert len(drained) == 1


def blocked_by(drain: dict[str, Any]) -> list[tuple[str, int]]:
    return [(b["name"], b["disruptions_allowed"]) for b in drain["blocked_by"]]


@pytest.mark.parametrize("policy", ["fail", "force", "leave"])
async def test_a_drain_blocked_by_a_budget_names_it_and_follows_the_policy(
    stack: Stack, policy: str
) -> None:
    req, handle = await ready_spare(stack, drain_timeout_seconds=2, drain_policy=policy)
    pod = f"workload-{req.spare_id}"
    stack.lab.kube.block_eviction("default", pod)
    budget = block_budget_name(pod)
    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))

    def node() -> dict[str, Any]:
        found = stack.lab.kube.store.get("nodes", "", req.spare_id)
        return found or {}

    if policy == "fail":
        with pytest.raises(WorkflowFailureError) as caught:
            await handle.result()
        assert isinstance(caught.value.cause, ApplicationError)
        assert caught.value.cause.type == "DrainBlocked"
        assert f"default/{budget} (disruptionsAllowed=0)" in str(caught.value.cause)
        failed = data(await event(stack, req.spare_id, "spare.failed"))
        assert (failed["drain"]["outcome"], failed["drain"]["policy"]) == ("blocked", "fail")
        assert blocked_by(failed["drain"]) == [(budget, 0)]
        assert failed["drain"]["not_evicted"] == [f"default/{pod}"]
        # Nothing the budget protects was killed: the VM and its cordoned Node stay.
        assert req.spare_id in stack.lab.hypervisor.vms
        assert node()["spec"]["unschedulable"] is True
        status = await handle.query(PrepareSpare.status)
        assert status.phase == Phase.FAILED and budget in (status.error or "")
        return

    result = await handle.result()
    assert result.phase == Phase.RELEASED
    released = data(await event(stack, req.spare_id, "spare.released"))
    drain = released["drain"]
    assert blocked_by(drain) == [(budget, 0)]
    if policy == "force":
        assert (drain["outcome"], drain["deleted"], drain["left_cordoned"]) == (
            "forced",
            [f"default/{pod}"],
            False,
        )
        assert req.spare_id not in stack.lab.hypervisor.vms and node() == {}
        assert req.spare_id not in [r.spare_id for r in await ledger_reservations(stack)]
    else:
        assert (drain["outcome"], drain["not_evicted"], drain["left_cordoned"]) == (
            "blocked",
            [f"default/{pod}"],
            True,
        )
        assert req.spare_id in stack.lab.hypervisor.vms
        assert node()["spec"]["unschedulable"] is True
        status = await handle.query(PrepareSpare.status)
        assert "left cordoned" in status.steps[-1].detail
