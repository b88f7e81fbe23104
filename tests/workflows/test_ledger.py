"""The ledger never over-commits, refuses what does not fit, and serves waiters in order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from activities.ledger import free_group, reserve_group
from contracts.ledger import (
    CHANGE_HOLD_UPDATE,
    Budget,
    ChangeHoldInput,
    ChangeHoldResult,
    GroupMember,
    Hold,
    Reservation,
    ReserveGroupInput,
    ReserveGroupResult,
    ledger_workflow_id,
)
from contracts.spare import Phase, ReleaseRequest
from placement.models import VmRequest
from runtime.clusters import ClusterConfig
from runtime.settings import Settings
from tests.helpers import assert_eventually
from tests.stack import (
    Provisioner,
    Stack,
    ledger_reservations,
    running_stack,
    uniform_site,
    wait_phase,
)
from workflows.ledger import CONTINUE_AS_NEW_HISTORY_BYTES, InventoryLedger
from workflows.prepare_spare import PrepareSpare


@pytest.fixture
def provisioner() -> Provisioner:
    """The lab hypervisor's API: the ledger is under test, not ten spares' playbook runs."""
    return "http"


def by_host(reservations: list[Reservation]) -> dict[str, int]:
    cpu: dict[str, int] = {}
    for r in reservations:
        cpu[r.host] = cpu.get(r.host, 0) + r.cpu
    return cpu


class TestThirtySparesOnRoomForTen:
    @pytest.fixture
    def inventory_doc(self) -> dict[str, Any]:
        return uniform_site(hosts=5, cpu_each=8)  # 5 hosts x 2 spares of 4 CPUs

    async def test_exactly_ten_are_reserved_and_twenty_fail_with_no_capacity(
        self, stack: Stack
    ) -> None:
        requests = [stack.request(cpu=4, ttl_seconds=2) for _ in range(30)]
        handles = await asyncio.gather(*(stack.start(r) for r in requests))
        outcomes = await asyncio.gather(*(h.result() for h in handles), return_exceptions=True)

        released = [o for o in outcomes if not isinstance(o, BaseException)]
        failed = [o for o in outcomes if isinstance(o, WorkflowFailureError)]
        assert len(released) == 10 and len(failed) == 20
        for err in failed:
            assert isinstance(err.cause, ApplicationError)
            assert err.cause.type == "NoCapacity"
            assert err.cause.message.startswith("no_capacity: no host fits")
        hosts_used = [o.host for o in released]
        assert all(hosts_used.count(h) == 2 for h in set(hosts_used))
        assert stack.lab.hypervisor.overcommit_refusals == []
        assert await ledger_reservations(stack) == []


class TestWaitingForCapacity:
    @pytest.fixture
    def inventory_doc(self) -> dict[str, Any]:
        return uniform_site(hosts=2, cpu_each=4)  # room for exactly two spares of 4 CPUs

    async def test_waiters_are_placed_by_priority_then_arrival_as_room_frees(
        self, stack: Stack
    ) -> None:
        first, second = stack.request(cpu=4), stack.request(cpu=4)
        holders = [await stack.start(first), await stack.start(second)]
        for h in holders:
            await wait_phase(h, Phase.READY)

        early = stack.request(cpu=4, wait_for_capacity=True)
        urgent = stack.request(cpu=4, wait_for_capacity=True, priority=5)
        waiters = []
        for req in (early, urgent):
            handle = await stack.start(req)
            await wait_phase(handle, Phase.WAITING_CAPACITY)
            waiters.append(handle)

        await holders[0].execute_update(PrepareSpare.release, ReleaseRequest())
        await wait_phase(waiters[1], Phase.READY)  # the urgent one goes first
        status = await waiters[0].query(PrepareSpare.status)
        assert status.phase == Phase.WAITING_CAPACITY

        await holders[1].execute_update(PrepareSpare.release, ReleaseRequest())
        await wait_phase(waiters[0], Phase.READY)

        reserved = await ledger_reservations(stack)
        assert sorted(r.spare_id for r in reserved) == sorted([early.spare_id, urgent.spare_id])
        assert all(cpu <= 4 for cpu in by_host(reserved).values())
        for h in waiters:
            await h.terminate("test over")

    async def test_a_waiter_gives_up_at_its_deadline(self, stack: Stack) -> None:
        holders = [await stack.start(stack.request(cpu=4)) for _ in range(2)]
        for h in holders:
            await wait_phase(h, Phase.READY)
        late = await stack.start(
            stack.request(cpu=4, wait_for_capacity=True, capacity_deadline_seconds=1)
        )
        with pytest.raises(WorkflowFailureError) as caught:
            await late.result()
        assert isinstance(caught.value.cause, ApplicationError)
        assert caught.value.cause.message == "no_capacity: no room within 1 s"

        async def withdrawn() -> None:
            handle = stack.client.get_workflow_handle(ledger_workflow_id(stack.inventory))
            assert await handle.query(InventoryLedger.waiters) == []

        await assert_eventually(withdrawn)
        for h in holders:
            await h.terminate("test over")

    async def test_a_request_larger_than_any_host_fails_at_once(self, stack: Stack) -> None:
        handle = await stack.start(stack.request(cpu=64, wait_for_capacity=True))
        with pytest.raises(WorkflowFailureError) as caught:
            await handle.result()
        assert isinstance(caught.value.cause, ApplicationError)
        assert caught.value.cause.type == "NeverFits"


class TestAWholeRequestAtOnce:
    """`reserve_group`: every member of a `count: N` request in one update, or none."""

    @pytest.fixture
    def inventory_doc(self) -> dict[str, Any]:
        return uniform_site(hosts=3, cpu_each=4)  # room for three spares of 4 CPUs

    def group(self, stack: Stack, names: list[str], cpu: int = 4) -> ReserveGroupInput:
        return ReserveGroupInput(
            task_queue=stack.task_queue,
            inventory=stack.inventory,
            members=[
                GroupMember(spare_id=n, request=VmRequest(name=n, cpu=cpu, memory_mb=512))
                for n in names
            ],
        )

    async def test_all_or_nothing_and_a_repeat_keeps_what_it_was_given(self, stack: Stack) -> None:
        four = await reserve_group(stack.client, self.group(stack, ["g1", "g2", "g3", "g4"]))
        assert (four.status, four.placeable, four.reservations) == ("no_capacity", 3, [])
        assert four.reason is not None and four.reason.startswith("no host fits")
        assert await ledger_reservations(stack) == []

        two = self.group(stack, ["a1", "a2"])
        first = await reserve_group(stack.client, two)
        assert (first.status, first.placeable) == ("reserved", 2)
        assert len({r.host for r in first.reservations}) == 2
        again = await reserve_group(stack.client, two)
        assert again.reservations == first.reservations

        # One more fits, two do not: the one that would fit is not taken either.
        more = await reserve_group(stack.client, self.group(stack, ["b1", "b2"]))
        assert (more.status, more.placeable) == ("no_capacity", 1)
        assert sorted(r.spare_id for r in await ledger_reservations(stack)) == ["a1", "a2"]
        await free_group(stack.client, two)
        assert await ledger_reservations(stack) == []

    async def test_a_cluster_past_its_surge_budget_gets_nothing(self, stack: Stack) -> None:
        budget = Budget(cluster="prod-a", max_spares=2)
        one = self.group(stack, ["c1"], cpu=1).model_copy(update={"budget": budget})
        assert (await reserve_group(stack.client, one)).status == "reserved"
        # Room for two more, budget for one: all or nothing against the budget too.
        two = self.group(stack, ["c2", "c3"], cpu=1).model_copy(update={"budget": budget})
        refused = await reserve_group(stack.client, two)
        assert (refused.status, refused.in_use, refused.placeable) == ("over_budget", 1, 1)
        assert refused.reason == (
            "cluster 'prod-a' is at its surge budget: 1 of max_spares 2 spares in use, "
            "2 more asked for"
        )
        assert [r.spare_id for r in await ledger_reservations(stack)] == ["c1"]
        # Another cluster's budget is its own; once c1 is freed, the two fit.
        other = self.group(stack, ["d1"], cpu=1).model_copy(
            update={"budget": Budget(cluster="prod-b", max_spares=1)}
        )
        assert (await reserve_group(stack.client, other)).status == "reserved"
        await free_group(stack.client, one)
        # (A new request: a repeated one is answered as it was the first time.)
        later = self.group(stack, ["c4", "c5"], cpu=1).model_copy(update={"budget": budget})
        assert (await reserve_group(stack.client, later)).status == "reserved"
        await free_group(stack.client, later)
        await free_group(stack.client, other)


class TestSurgeBudget:
    """A cluster at its `max_spares` waits for its own spares, with room to spare."""

    @pytest.fixture
    async def budget_stack(
        self, client: Client, task_queue: str, tmp_path: Path
    ) -> AsyncIterator[Stack]:
        def one_spare(settings: Settings) -> Settings:
            lab = ClusterConfig(kubeconfig=settings.kubeconfig, max_spares=1)
            return settings.model_copy(update={"kubeconfig": None, "clusters": {"lab": lab}})

        doc = uniform_site(hosts=2, cpu_each=8)
        async with running_stack(
            client, task_queue, tmp_path, doc, configure=one_spare, provisioner="http"
        ) as stack:
            yield stack

    async def test_past_the_budget_a_spare_fails_or_waits_until_one_is_released(
        self, budget_stack: Stack
    ) -> None:
        stack = budget_stack
        holder = await stack.start(stack.request(cpu=1))
        await wait_phase(holder, Phase.READY)

        refused = await stack.start(stack.request(cpu=1))
        await wait_phase(refused, Phase.FAILED)
        with pytest.raises(WorkflowFailureError) as caught:
            await refused.result()
        assert isinstance(caught.value.cause, ApplicationError)
        assert caught.value.cause.message == (
            "no_capacity: cluster 'lab' is at its surge budget: 1 of max_spares 1 spares in "
            "use, 1 more asked for"
        )

        waiter = await stack.start(stack.request(cpu=1, wait_for_capacity=True))
        await wait_phase(waiter, Phase.WAITING_CAPACITY)
        status = await waiter.query(PrepareSpare.status)
        assert (
            "waiting for the budget: cluster 'lab' is at its surge budget"
            in status.steps[-1].detail
        )
        await holder.execute_update(PrepareSpare.release, ReleaseRequest())
        await wait_phase(waiter, Phase.READY)
        await waiter.terminate("test over")


class TestRoomOverTime:
    """Each reservation holds its room over an interval: a booking from its lead start to its
    window's end, an ordinary spare until its TTL can have ended."""

    @pytest.fixture
    def inventory_doc(self) -> dict[str, Any]:
        return uniform_site(hosts=1, cpu_each=4)  # room for one spare of 4 CPUs at a time

    async def test_a_booking_holds_its_window_and_frees_it_when_given_back(
        self, stack: Stack
    ) -> None:
        now = datetime.now(UTC)

        def days(n: float) -> datetime:
            return now + timedelta(days=n)

        async def ask(name: str, start: datetime | None, end: datetime) -> ReserveGroupResult:
            member = GroupMember(
                spare_id=name,
                request=VmRequest(name=name, cpu=4, memory_mb=512),
                hold=Hold(start=start, end=end),
            )
            group = ReserveGroupInput(
                task_queue=stack.task_queue, inventory=stack.inventory, members=[member]
            )
            return await reserve_group(stack.client, group)

        assert (await ask("b1", days(2), days(3))).status == "reserved"
        overlapping = await ask("o1", None, days(2) + timedelta(hours=1))
        assert (overlapping.status, overlapping.held_by) == ("no_capacity", ["b1"])
        assert overlapping.reason is not None and overlapping.reason.endswith(
            "the room is held then by b1"
        )
        assert (await ask("o2", None, days(1))).status == "reserved"  # gone before the lead
        second = await ask("b2", days(2.5), days(4))
        assert (second.status, second.held_by) == ("no_capacity", ["b1"])
        assert (await ask("b3", days(3), days(4))).status == "reserved"  # right after b1

        await free_group(
            stack.client,
            ReserveGroupInput(
                task_queue=stack.task_queue,
                inventory=stack.inventory,
                members=[
                    GroupMember(spare_id="b1", request=VmRequest(name="b1", cpu=4, memory_mb=512))
                ],
            ),
        )
        assert (await ask("b4", days(2), days(3))).status == "reserved"  # b1's room, at once
        held = {r.spare_id: r.hold for r in await ledger_reservations(stack)}
        assert sorted(held) == ["b3", "b4", "o2"]
        assert held["b4"] == Hold(start=days(2), end=days(3))


async def reserve_for(
    stack: Stack,
    cluster: str | None,
    names: tuple[str, ...],
    cpu: int,
    hold: Hold | None = None,
) -> ReserveGroupResult:
    """Reserve `names` together for `cluster`, each `cpu` CPUs (over `hold`, or from now on)."""
    members = [
        GroupMember(spare_id=n, request=VmRequest(name=n, cpu=cpu, memory_mb=512), hold=hold)
        for n in names
    ]
    group = ReserveGroupInput(
        task_queue=stack.task_queue, inventory=stack.inventory, members=members, cluster=cluster
    )
    return await reserve_group(stack.client, group)


class TestClustersSharingAnInventory:
    """prod-a and prod-b share one inventory's room: a refusal names the requester's own
    cluster's holders and only counts the other cluster's, for a booking, a `count: N` request
    and a longer window alike."""

    @pytest.fixture
    def inventory_doc(self) -> dict[str, Any]:
        return uniform_site(hosts=1, cpu_each=4)

    async def test_a_refusal_names_only_holders_of_the_requesters_cluster(
        self, stack: Stack
    ) -> None:
        day2 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
        window = Hold(start=day2, end=day2 + timedelta(hours=4))

        async def ask(cluster: str | None, *names: str, cpu: int = 2) -> ReserveGroupResult:
            return await reserve_for(stack, cluster, names, cpu, window)

        assert (await ask("prod-a", "spare-prod-a-1")).status == "reserved"
        assert (await ask("prod-b", "spare-prod-b-1")).status == "reserved"

        refused_a = await ask("prod-a", "spare-prod-a-2", "spare-prod-a-3", cpu=1)
        assert (refused_a.status, refused_a.held_by) == ("no_capacity", ["spare-prod-a-1"])
        assert refused_a.reason is not None and refused_a.reason.endswith(
            "the room is held then by spare-prod-a-1, 1 spare of another cluster"
        )
        refused_b = await ask("prod-b", "spare-prod-b-2", cpu=4)
        assert (refused_b.status, refused_b.held_by) == ("no_capacity", ["spare-prod-b-1"])
        assert refused_b.reason is not None and "spare-prod-a" not in refused_b.reason
        # A request of no cluster (an unscoped `/schedule` task) is told of neither.
        refused_none = await ask(None, "task-1", cpu=4)
        assert (refused_none.status, refused_none.held_by) == ("no_capacity", [])
        assert refused_none.reason is not None and refused_none.reason.endswith(
            "the room is held then by 2 spares of other clusters"
        )

        # A longer window of prod-a's booking meets prod-b's next booking: counted, not named.
        after = Hold(start=window.end, end=day2 + timedelta(hours=8))
        later = GroupMember(
            spare_id="spare-prod-b-4",
            request=VmRequest(name="spare-prod-b-4", cpu=4, memory_mb=512),
            hold=after,
        )
        booked = await reserve_group(
            stack.client,
            ReserveGroupInput(
                task_queue=stack.task_queue,
                inventory=stack.inventory,
                members=[later],
                cluster="prod-b",
            ),
        )
        assert booked.status == "reserved"
        ledger = stack.client.get_workflow_handle(ledger_workflow_id(stack.inventory))
        longer: ChangeHoldResult = await ledger.execute_update(
            CHANGE_HOLD_UPDATE,
            ChangeHoldInput(
                inventory=stack.inventory,
                task_queue=stack.task_queue,
                spare_id="spare-prod-a-1",
                end=day2 + timedelta(hours=6),
            ),
            result_type=ChangeHoldResult,
        )
        assert (longer.status, longer.held_by, longer.held_by_others) == ("no_capacity", [], 1)


class TestManyHoldersOfAnotherCluster:
    """The refusal's holders are filtered by cluster before any are cut: prod-b's twelve
    earlier spares on the one host do not crowd prod-a's own three out of its answer."""

    @pytest.fixture
    def inventory_doc(self) -> dict[str, Any]:
        return uniform_site(hosts=1, cpu_each=16)

    async def test_a_refusal_names_its_own_holders_behind_many_of_another_cluster(
        self, stack: Stack
    ) -> None:
        async def ask(cluster: str, *names: str, cpu: int = 1) -> ReserveGroupResult:
            return await reserve_for(stack, cluster, names, cpu)

        theirs = [f"spare-prod-b-{i}" for i in range(1, 13)]
        ours = [f"spare-prod-a-{i}" for i in range(1, 4)]
        assert (await ask("prod-b", *theirs)).status == "reserved"
        assert (await ask("prod-a", *ours)).status == "reserved"

        refused = await ask("prod-a", "spare-prod-a-4", cpu=2)
        assert (refused.status, refused.held_by) == ("no_capacity", ours)
        assert refused.reason is not None and refused.reason.endswith(
            "the room is held then by spare-prod-a-1, spare-prod-a-2, spare-prod-a-3, "
            "12 spares of other clusters"
        )
        # prod-b is told of its first ten by name and counts the rest of its own.
        theirs_refused = await ask("prod-b", "spare-prod-b-13", cpu=2)
        assert theirs_refused.held_by == theirs[:10]
        assert theirs_refused.reason is not None and theirs_refused.reason.endswith(
            "spare-prod-b-10, 2 more of its own, 3 spares of other clusters"
        )


class TestALongHistory:
    """With hundreds held, every placement's input carries every reservation, so the history
    grows fast: the ledger hands over (continues as new) once it passes
    CONTINUE_AS_NEW_HISTORY_BYTES, long before the server suggests it (at 200 events here), and
    keeps every reservation."""

    @pytest.fixture
    def inventory_doc(self) -> dict[str, Any]:
        return uniform_site(hosts=20, cpu_each=64)  # room for 1,280 spares of 1 CPU

    async def test_the_ledger_hands_over_by_history_size_with_every_reservation(
        self, stack: Stack
    ) -> None:
        ledger = stack.client.get_workflow_handle(ledger_workflow_id(stack.inventory))
        first_run: str | None = None
        names: list[str] = []
        for batch in range(7):
            members = [f"long-{batch}-{i}" for i in range(150)]
            group = ReserveGroupInput(
                task_queue=stack.task_queue,
                inventory=stack.inventory,
                members=[
                    GroupMember(spare_id=n, request=VmRequest(name=n, cpu=1, memory_mb=256))
                    for n in members
                ],
            )
            assert (await reserve_group(stack.client, group)).status == "reserved"
            names += members
            if first_run is None:
                first_run = (await ledger.describe()).run_id

        first = await stack.client.get_workflow_handle(
            ledger_workflow_id(stack.inventory), run_id=first_run
        ).describe()
        assert first.status == WorkflowExecutionStatus.CONTINUED_AS_NEW
        info = first.raw_description.workflow_execution_info
        assert info.history_size_bytes > CONTINUE_AS_NEW_HISTORY_BYTES
        assert info.history_length < 200  # not the server's suggestion
        held = await ledger_reservations(stack)
        assert sorted(r.spare_id for r in held) == sorted(names)
