"""ScheduleHost: placement only, for callers of the original scheduler's API (`POST /schedule`).

It reserves a host through the inventory's ledger, like a spare does, and answers with the
host's name and IP. It creates nothing: the caller builds its VM itself. The reservation is
held until the caller releases the task (signal `release`) or `hold_seconds` pass, so two
callers never get the same free room while their VMs are being built; after that the
inventory itself counts the caller's VM.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import ValidationError
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from activities.hosts import HostActivities
    from contracts.common import ANY_POOL, HOST, POOL
    from contracts.failures import Failure
    from contracts.hosts import HostAddressInput, HostAddressResult
    from contracts.ledger import ReserveInput
    from contracts.schedule_host import (
        HOST_QUERY,
        RELEASE_SIGNAL,
        SCHEDULE_HOST,
        ReleaseTask,
        ScheduledHost,
        ScheduleHostInput,
        ScheduleHostResult,
    )


from .hold import hold_until_released
from .ledger_calls import free_reservation, reserve
from .step_failure import StepFailed

SHORT_CALL = timedelta(seconds=60)


@workflow.defn(name=SCHEDULE_HOST, failure_exception_types=[ValidationError])
class ScheduleHost:
    def __init__(self) -> None:
        self._host: ScheduledHost | None = None
        self._release: ReleaseTask | None = None

    @workflow.query(name=HOST_QUERY)
    def host(self) -> ScheduledHost | None:
        """None while the ledger is still deciding."""
        return self._host

    @workflow.signal(name=RELEASE_SIGNAL)
    def release(self, req: ReleaseTask) -> None:
        if self._release is None:
            self._release = req

    @workflow.run
    async def run(self, inp: ScheduleHostInput) -> ScheduleHostResult:
        task_id = workflow.info().workflow_id
        workflow.upsert_search_attributes([POOL.value_set(inp.pool or ANY_POOL)])
        workflow.set_current_details("asking the ledger for a host")
        try:
            name = await self._reserve(task_id, inp)
            host = ScheduledHost(name=name, ip=await self._address(inp, name))
            self._host = host
            workflow.upsert_search_attributes([HOST.value_set(name)])
            workflow.set_current_details(
                f"**Host** {name} ({host.ip or 'no address'}) held for the caller, "
                f"at most {inp.hold_seconds} s"
            )
            reason = await self._hold(inp)
        finally:
            # Whatever happened (refused, failed, cancelled), nothing stays reserved; freeing
            # is idempotent, so a task that never got a host costs one no-op update.
            await free_reservation(task_id, inp.inventory)
        workflow.set_current_details(f"**Host** {name} freed: {reason}")
        return ScheduleHostResult(host=host, freed_because=reason)

    async def _hold(self, inp: ScheduleHostInput) -> str:
        return await hold_until_released(
            lambda: self._release.reason if self._release else None,
            inp.hold_seconds,
            expired=f"hold of {inp.hold_seconds} s expired",
        )

    async def _address(self, inp: ScheduleHostInput, name: str) -> str | None:
        """Best effort: the host is reserved either way, and its name is the main answer."""
        try:
            address: HostAddressResult = await workflow.execute_activity_method(
                HostActivities.host_address,
                HostAddressInput(inventory=inp.inventory, host=name),
                start_to_close_timeout=SHORT_CALL,
                retry_policy=RetryPolicy(maximum_attempts=5),
            )
        except ActivityError as err:
            if is_cancelled_exception(err):
                raise
            workflow.logger.warning("no address for host %s: %s", name, err)
            return None
        return address.ip

    async def _reserve(self, task_id: str, inp: ScheduleHostInput) -> str:
        try:
            result = await reserve(
                ReserveInput(
                    inventory=inp.inventory,
                    task_queue=workflow.info().task_queue,
                    request=inp.vm_request(task_id),
                    cluster=inp.cluster,
                )
            )
            if result.reservation is None:
                raise StepFailed(f"{result.status}: {result.reason}", Failure.NO_CAPACITY)
        except StepFailed as refused:
            # No room is an answer, not a fault: fail once, with the ledger's reason.
            raise refused.failure() from None
        return result.reservation.host
