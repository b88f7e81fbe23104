"""Stand-ins for the activities a spare runs, registered under the real activities' names.

The fast workflow tier (test_spare_logic.py) runs PrepareSpare and ReleaseSpare on them: the
workflow logic (timers, compensation, messages) without the lab, Ansible or Kubernetes, which
the full-stack tests exercise. Each stand-in records what it was asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.kubernetes import KubernetesActivities
from activities.ledger import LedgerActivities
from activities.notify import NotifyActivities
from activities.placement import PlacementActivities
from activities.provisioning import ProvisioningActivities
from activities.spare_ids import SpareIdActivities
from activities.warm_pools import WarmActivities
from contracts.booking import (
    BookingLeadInput,
    BookingLeadResult,
    CheckBookedHostsInput,
    CheckBookedHostsResult,
    UnfitBooking,
)
from contracts.drain import DrainNodeInput, DrainNodeResult
from contracts.kubernetes import (
    CheckNodeReadyInput,
    NodeNameInput,
    NodeReadyResult,
    WaitNodeReadyInput,
)
from contracts.ledger import (
    ChangeHoldInput,
    ChangeHoldResult,
    FreeInput,
    FreeResult,
    Hold,
    Reservation,
    ReserveInput,
    ReserveResult,
)
from contracts.notify import (
    DeliverWebhookInput,
    DeliveryResult,
    PlanNotificationsInput,
    PlanNotificationsResult,
    ReceiverRoute,
    RetryPolicySpec,
)
from contracts.spare_ids import EarlierRunInput, EarlierRunResult
from contracts.vm import CreateVmInput, DestroyVmInput, VmFacts
from contracts.warm import WarmCandidatesInput, WarmCandidatesResult
from placement.models import VmRequest
from webhooks.events import SpareEvent

NOT_READY = ["Ready=False (KubeletNotReady)"]


def real_name(method: Callable[..., Any]) -> str:
    """The name the worker registers a real activity under."""
    definition = activity._Definition.must_from_callable(method)
    assert definition.name is not None
    return definition.name


@dataclass
class StandIns:
    """What the stand-ins answer, and what they were asked (activity name, subject)."""

    host: str = "bm-1"
    reserve: Literal["reserved", "queued", "no_capacity", "never_fits"] = "reserved"
    node_ready: bool = True
    # The create runs (heartbeating) until cancelled, then stops once `create_may_stop` is
    # set: by raising the cancel, or by finishing all the same (`create_finishes_anyway`).
    create_runs_until_cancelled: bool = False
    create_finishes_anyway: bool = False
    create_may_stop: asyncio.Event = field(default_factory=asyncio.Event)
    # The destroy's refusals, one per call, first to last ("!" first: for good), then success.
    destroy_refusals: list[str] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    # A booking's lead, and the hold each reservation was asked for.
    lead_seconds: int = 600
    window_ending_seconds: int = 1800
    holds: dict[str, Hold | None] = field(default_factory=dict)
    # The ledger's answer to a longer hold (None: room for it); a shorter one is always taken.
    extension_refused: ChangeHoldResult | None = None
    reservations: dict[str, Reservation] = field(default_factory=dict)
    # With a receiver, every event is delivered to it (in place of the HTTP call) and kept.
    receiver: str | None = None
    events: list[tuple[str, SpareEvent]] = field(default_factory=list)
    # Where a booking leaving its host goes, in order (the first not cordoned); the ledger's
    # look finds a booked host cordoned when it is in `cordoned`.
    other_hosts: list[str] = field(default_factory=list)
    cordoned: set[str] = field(default_factory=set)
    # A window starting more than this far ahead is rehearsed unless its request says not.
    rehearsal_ahead_seconds: int = 3600
    # The create of these VMs fails for good with this message (a broken template).
    create_refusals: dict[str, str] = field(default_factory=dict)
    # What each reservation asked placement for.
    requests: dict[str, VmRequest] = field(default_factory=dict)

    def asked(self, name: str) -> list[str]:
        return [subject for called, subject in self.calls if called == name]

    def activities(self) -> Sequence[Callable[..., Any]]:
        def standin(real: Callable[..., Any]) -> Callable[[Callable[..., Any]], Any]:
            return activity.defn(name=real_name(real))

        @standin(NotifyActivities.plan_notifications)
        async def plan_notifications(inp: PlanNotificationsInput) -> PlanNotificationsResult:
            if self.receiver is None or inp.receivers == []:
                return PlanNotificationsResult(routes=[])
            route = ReceiverRoute(name=self.receiver, retry=RetryPolicySpec.from_schedule([1.0]))
            return PlanNotificationsResult(routes=[route])

        @standin(NotifyActivities.deliver_webhook)
        async def deliver_webhook(inp: DeliverWebhookInput) -> DeliveryResult:
            self.events.append((inp.webhook_id, inp.event))
            return DeliveryResult(
                receiver=inp.receiver,
                webhook_id=inp.webhook_id,
                status_code=204,
                outcome="delivered",
            )

        @standin(SpareIdActivities.earlier_run)
        async def earlier_run(inp: EarlierRunInput) -> EarlierRunResult:
            return EarlierRunResult()  # the first run of its id

        @standin(WarmActivities.warm_candidates)
        async def warm_candidates(inp: WarmCandidatesInput) -> WarmCandidatesResult:
            return WarmCandidatesResult()  # no warm pool configured

        @standin(LedgerActivities.reserve_capacity)
        async def reserve_capacity(inp: ReserveInput) -> ReserveResult:
            self.calls.append(("reserve_capacity", inp.spare_id))
            if self.reserve != "reserved":
                return ReserveResult(status=self.reserve, reason="no room on any host")
            self.holds[inp.spare_id] = inp.hold
            self.requests[inp.spare_id] = inp.request
            host = self.host
            if inp.leaving is not None:
                self.calls.append(("leaving", inp.leaving.host))
                free = [h for h in self.other_hosts if h not in self.cordoned]
                if not free:
                    return ReserveResult(status="no_capacity", reason="no host fits")
                host = free[0]
            reservation = Reservation.of(
                inp.request, host, 101, spare_id=inp.spare_id, hold=inp.hold
            )
            self.reservations[inp.spare_id] = reservation
            return ReserveResult(status="reserved", reservation=reservation)

        @standin(PlacementActivities.check_booked_hosts)
        async def check_booked_hosts(inp: CheckBookedHostsInput) -> CheckBookedHostsResult:
            self.calls.append(("check_booked_hosts", inp.inventory))
            unfit = [
                UnfitBooking(spare_id=r.spare_id, host=r.host, reason=f"host {r.host} is cordoned")
                for r in inp.reservations
                if r.spare_id in inp.booked and r.host in self.cordoned
            ]
            return CheckBookedHostsResult(unfit=unfit, next_check_seconds=600)

        @standin(LedgerActivities.booking_lead)
        async def booking_lead(inp: BookingLeadInput) -> BookingLeadResult:
            self.calls.append(("booking_lead", inp.inventory))
            return BookingLeadResult(
                lead_seconds=self.lead_seconds,
                window_ending_seconds=self.window_ending_seconds,
                rehearsal_ahead_seconds=self.rehearsal_ahead_seconds,
            )

        @standin(LedgerActivities.change_hold)
        async def change_hold(inp: ChangeHoldInput) -> ChangeHoldResult:
            self.calls.append(("change_hold", inp.end.isoformat()))
            held = self.reservations[inp.spare_id]
            assert held.hold.end is not None
            if inp.end > held.hold.end and self.extension_refused is not None:
                return self.extension_refused.model_copy(update={"reservation": held})
            changed = held.model_copy(update={"hold": Hold(start=held.hold.start, end=inp.end)})
            self.reservations[inp.spare_id] = changed
            self.holds[inp.spare_id] = changed.hold
            return ChangeHoldResult(status="changed", reservation=changed)

        @standin(LedgerActivities.free_capacity)
        async def free_capacity(inp: FreeInput) -> FreeResult:
            self.calls.append(("free_capacity", inp.spare_id))
            return FreeResult(freed=True)

        async def running_until_cancelled(name: str) -> None:
            try:
                while True:  # a cancel reaches an activity with its heartbeat's answer
                    activity.heartbeat()
                    await asyncio.sleep(0.1)
            except asyncio.CancelledError:
                self.calls.append(("create_vm cancelled", name))
                await self.create_may_stop.wait()
                self.calls.append(("create_vm stopped", name))
                if not self.create_finishes_anyway:
                    raise

        @standin(ProvisioningActivities.create_vm)
        async def create_vm(inp: CreateVmInput) -> VmFacts:
            self.calls.append(("create_vm", inp.spec.name))
            if inp.spec.name in self.create_refusals:
                raise ApplicationError(
                    self.create_refusals[inp.spec.name],
                    type="ProvisioningFailed",
                    non_retryable=True,
                )
            if self.create_runs_until_cancelled:
                await running_until_cancelled(inp.spec.name)
            return VmFacts(name=inp.spec.name, host=inp.spec.host, ip="10.0.2.15", vmid=101)

        @standin(ProvisioningActivities.destroy_vm)
        async def destroy_vm(inp: DestroyVmInput) -> None:
            self.calls.append(("destroy_vm", inp.name))
            if self.destroy_refusals:
                refusal = self.destroy_refusals.pop(0)
                if refusal.startswith("!"):
                    raise ApplicationError(
                        refusal[1:], type="ProvisioningFailed", non_retryable=True
                    )
                raise ApplicationError(refusal, type="ProvisioningTransient")

        def readiness(node: str) -> NodeReadyResult:
            missing = [] if self.node_ready else NOT_READY
            return NodeReadyResult(node_name=node, ready=self.node_ready, missing=missing)

        @standin(KubernetesActivities.check_node_ready)
        async def check_node_ready(inp: CheckNodeReadyInput) -> NodeReadyResult:
            return readiness(inp.node_name)

        @standin(KubernetesActivities.wait_node_ready)
        async def wait_node_ready(inp: WaitNodeReadyInput) -> NodeReadyResult:
            if not self.node_ready and inp.max_wait_seconds is not None:
                # The real probe watches the Node this long before it answers "not yet".
                await asyncio.sleep(inp.max_wait_seconds)
            return readiness(inp.node_name)

        @standin(KubernetesActivities.cordon_node)
        async def cordon_node(inp: NodeNameInput) -> None:
            self.calls.append(("cordon_node", inp.node_name))

        @standin(KubernetesActivities.drain_node)
        async def drain_node(inp: DrainNodeInput) -> DrainNodeResult:
            self.calls.append(("drain_node", inp.node_name))
            return DrainNodeResult()

        @standin(KubernetesActivities.delete_node)
        async def delete_node(inp: NodeNameInput) -> None:
            self.calls.append(("delete_node", inp.node_name))

        return [
            plan_notifications,
            deliver_webhook,
            check_booked_hosts,
            earlier_run,
            warm_candidates,
            reserve_capacity,
            booking_lead,
            change_hold,
            free_capacity,
            create_vm,
            destroy_vm,
            check_node_ready,
            wait_node_ready,
            cordon_node,
            drain_node,
            delete_node,
        ]
