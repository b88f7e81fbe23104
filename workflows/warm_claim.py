"""A spare's part in warm pools: claiming a warm spare instead of making one, or being one.

A request some warm pool's spares would satisfy whole first asks those pools for one
(`WarmClaim`): a hit hands the warm spare's VM and Node over to this spare, which then only
relabels the Node; a miss (the common case costs no round trip: no pool matches) goes the
usual way through the ledger. A warm pool's own spare marks its Node warm once Ready and
reports to its pool (`become_warm`, `report_to_pool`).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import FailureError

with workflow.unsafe.imports_passed_through():
    from activities.warm_pools import WarmActivities
    from contracts.common import HOST
    from contracts.ledger import LEDGER_RETRY, Reservation
    from contracts.spare import Phase, SpareRequest, SpareStatus
    from contracts.vm import VmFacts
    from contracts.warm import (
        WARM_SPARE_REPORT_SIGNAL,
        ClaimInput,
        ClaimResult,
        ClaimWarmInput,
        WarmCandidatesInput,
        WarmCandidatesResult,
        WarmNodeInput,
        WarmSpareReport,
        warm_pool_workflow_id,
    )
    from webhooks.events import EventType

from .event_shapes import topology_info
from .notifier import Notifier
from .progress import Progress
from .side_effects import STOP_FIRST, until_stopped

# A Node's warm mark: a few tries (the API may blink), then the spare fails and is cleaned up.
NODE_RETRY = RetryPolicy(maximum_attempts=10, maximum_interval=timedelta(seconds=10))


class WarmClaim:
    """A request's claim on a warm spare. `claimed` is the spare it took over (its VM and
    Node are this spare's to release from then on, whatever happens next), or None."""

    def __init__(
        self, spare_id: str, req: SpareRequest, progress: Progress, notifier: Notifier
    ) -> None:
        self.spare_id = spare_id
        self.req = req
        self.progress = progress
        self.notifier = notifier
        self.claimed: ClaimResult | None = None

    def vm_name(self) -> str:
        """The VM's and Node's name: the spare's id, or the warm spare's it took over."""
        if self.claimed is not None and self.claimed.vm is not None:
            return self.claimed.vm.name
        return self.spare_id

    async def candidates(self) -> list[str]:
        """The warm pools whose spares would satisfy the whole request (usually none)."""
        req = self.req
        if req.warm_pool is not None:
            return []  # a warm spare itself never claims one
        candidates: WarmCandidatesResult = await workflow.execute_local_activity_method(
            WarmActivities.warm_candidates,
            WarmCandidatesInput(
                request=req.vm_request(self.spare_id),
                cluster=req.cluster,
                inventory=req.inventory,
                template=req.template,
            ),
            start_to_close_timeout=req.timeouts.call,
        )
        return candidates.pools

    async def claim(self, pools: list[str]) -> ClaimResult | None:
        """A warm spare of `pools` the whole request is satisfied by, claimed; None: the usual
        path (no matching pool, the common case, costs no round trip)."""
        if not pools:
            return None
        req = self.req
        self.progress.enter(Phase.RESERVING, f"asking warm pool {', '.join(pools)}")
        claim = ClaimInput(
            spare_id=self.spare_id,
            request=req.vm_request(self.spare_id),
            inventory=req.inventory,
            timeouts=req.timeouts,
        )
        claiming = workflow.start_activity_method(
            WarmActivities.claim_warm_spare,
            ClaimWarmInput(pools=pools, claim=claim),
            start_to_close_timeout=req.timeouts.ledger,
            heartbeat_timeout=req.timeouts.heartbeat,
            retry_policy=LEDGER_RETRY,
            cancellation_type=STOP_FIRST,
        )
        try:
            result: ClaimResult = await until_stopped(claiming)
        except asyncio.CancelledError:
            # A claim the pool answered despite the cancel is this spare's to give back:
            # compensation releases the VM it took.
            if claiming.done() and not claiming.cancelled() and claiming.exception() is None:
                answered = claiming.result()
                if answered.hit:
                    self.claimed = answered
            raise
        if not result.hit:
            self.progress.show(f"no warm spare: {result.reason}")
            return None
        self.claimed = result
        return result

    async def take(self, claim: ClaimResult) -> tuple[Reservation, VmFacts]:
        """The claimed spare's VM and Node are this spare's: its labels on, the warm mark off."""
        status = self.progress.status
        assert claim.reservation and claim.vm and claim.warm
        reservation, vm = claim.reservation, claim.vm
        status.warm = claim.warm
        status.host, status.vmid, status.vm = vm.host, vm.vmid, vm
        status.topology = reservation.topology
        self.progress.set_attributes(HOST.value_set(vm.host))
        self.notifier.send(EventType.RESERVED, host=vm.host, topology=topology_info(reservation))
        # One patch of the Node, answered within this workflow task.
        await workflow.execute_local_activity_method(
            WarmActivities.claim_warm_node,
            WarmNodeInput(
                node_name=vm.name,
                labels=self.req.spare_labels(self.spare_id),
                cluster=self.req.cluster,
            ),
            start_to_close_timeout=self.req.timeouts.call,
            retry_policy=NODE_RETRY,
        )
        return reservation, vm


async def become_warm(pool: str, progress: Progress, reservation: Reservation, vm: VmFacts) -> None:
    """Tainted first, then announced: nothing lands on a warm spare before its claim."""
    await workflow.execute_activity_method(
        WarmActivities.mark_warm_node,
        WarmNodeInput(node_name=vm.name, pool=pool, cluster=progress.status.cluster),
        start_to_close_timeout=timedelta(seconds=30),
        retry_policy=NODE_RETRY,
    )
    progress.enter(Phase.WARM, f"warm in pool {pool}; waiting to be claimed")
    await report_to_pool(pool, progress.status, "warm", reservation, vm)


async def report_to_pool(
    pool: str,
    status: SpareStatus,
    phase: str,
    reservation: Reservation | None = None,
    vm: VmFacts | None = None,
) -> None:
    """Tell the warm pool its spare is warm (with what it holds) or has ended."""
    report = WarmSpareReport(
        spare_id=status.spare_id,
        phase="warm" if phase == "warm" else "ended",
        at=workflow.now(),
        reservation=reservation,
        vm=vm,
        error=status.error,
    )
    try:
        await workflow.get_external_workflow_handle(warm_pool_workflow_id(pool)).signal(
            WARM_SPARE_REPORT_SIGNAL, report
        )
    except FailureError as err:
        # No pool any more: a warm spare then lives until its TTL or a release.
        workflow.logger.info("warm pool %s not told: %s", pool, err)
