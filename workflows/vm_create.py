"""The create-VM step of a spare: one call of the provisioner, with the retries it deserves."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.provisioning import ProvisioningActivities
    from contracts.failures import Failure
    from contracts.ledger import Reservation
    from contracts.spare import SpareRequest
    from contracts.vm import CreateVmInput, VmFacts

from .side_effects import STOP_FIRST, until_stopped

# A create that failed for a reason the playbook reports is final; others get a few tries.
CREATE_RETRY = RetryPolicy(
    maximum_attempts=3,
    initial_interval=timedelta(seconds=5),
    non_retryable_error_types=[Failure.PROVISIONING_FAILED],
)


async def create_vm(spare_id: str, req: SpareRequest, reservation: Reservation) -> VmFacts:
    """The spare's VM on its reserved host. A cancel stops the create before compensation
    destroys: a create still running would make the VM after the destroy."""
    creating = workflow.start_activity_method(
        ProvisioningActivities.create_vm,
        CreateVmInput(spec=req.vm_spec(spare_id, reservation)),
        start_to_close_timeout=timedelta(seconds=req.create_timeout_seconds),
        heartbeat_timeout=req.timeouts.heartbeat,
        retry_policy=CREATE_RETRY,
        cancellation_type=STOP_FIRST,
    )
    return await until_stopped(creating)
