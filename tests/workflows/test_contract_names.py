"""Every workflow answers to the names its contract publishes, which callers use instead of
importing the workflow."""

from __future__ import annotations

import pytest
from temporalio import workflow

from contracts import booking, ledger, release, schedule_host, spare, warm
from contracts.reconcile import RECONCILE_SPARES
from workflows.ledger import InventoryLedger
from workflows.prepare_spare import PrepareSpare
from workflows.reconcile_spares import ReconcileSpares
from workflows.release_spare import ReleaseSpare
from workflows.schedule_host import ScheduleHost
from workflows.warm_pool import WarmPool

CASES = [
    (
        PrepareSpare,
        spare.PREPARE_SPARE,
        {spare.STATUS_QUERY},
        {
            spare.RELEASE_UPDATE,
            warm.HAND_OVER_UPDATE,
            warm.WARM_ANSWER_UPDATE,
            booking.CHANGE_WINDOW_UPDATE,
            spare.ROOM_ANSWER_UPDATE,
        },
        {
            spare.REQUEST_RELEASE_SIGNAL,
            spare.REPLACEMENT_READY_SIGNAL,
            ledger.CAPACITY_GRANTED_SIGNAL,
            release.RELEASE_STEP_SIGNAL,
            booking.BOOKED_HOST_UNFIT_SIGNAL,
        },
    ),
    (
        InventoryLedger,
        ledger.INVENTORY_LEDGER,
        {
            ledger.RESERVATIONS_QUERY,
            ledger.WAITERS_QUERY,
            ledger.HAS_BOOKINGS_QUERY,
            booking.READY_TIMES_QUERY,
        },
        {
            ledger.RESERVE_UPDATE,
            ledger.RESERVE_GROUP_UPDATE,
            ledger.FREE_UPDATE,
            ledger.CHANGE_HOLD_UPDATE,
            warm.TRANSFER_UPDATE,
        },
        {booking.READY_TIME_SIGNAL},
    ),
    (ReleaseSpare, release.RELEASE_SPARE, {release.STEP_QUERY}, set(), set()),
    (
        ScheduleHost,
        schedule_host.SCHEDULE_HOST,
        {schedule_host.HOST_QUERY},
        set(),
        {schedule_host.RELEASE_SIGNAL},
    ),
    (ReconcileSpares, RECONCILE_SPARES, set(), set(), set()),
    (
        WarmPool,
        warm.WARM_POOL,
        {warm.POOL_QUERY},
        {warm.CLAIM_UPDATE},
        {warm.WARM_SPARE_REPORT_SIGNAL, warm.CONFIGURE_SIGNAL},
    ),
]


@pytest.mark.parametrize(("cls", "name", "queries", "updates", "signals"), CASES)
def test_a_workflow_registers_the_names_of_its_contract(
    cls: type, name: str, queries: set[str], updates: set[str], signals: set[str]
) -> None:
    definition = workflow._Definition.must_from_class(cls)
    assert definition.name == name
    assert set(definition.queries) == queries
    assert set(definition.updates) == updates
    assert set(definition.signals) == signals
