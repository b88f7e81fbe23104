"""Provisioning activities: create, destroy and describe a VM through a provisioner.

The activities own the Temporal side (heartbeats, cancellation, retry decisions); a
`Provisioner` (`provisioners/`: Ansible, a GitLab pipeline or a hypervisor's HTTP API) owns
the hypervisor side and says whether a failure may heal (`ProvisioningFailed.transient`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure
from contracts.vm import CreateVmInput, DescribeVmInput, DestroyVmInput, VmFacts, VmSpec
from provisioners.contract import Progress, Provisioner, ProvisioningFailed

from .heartbeats import QuietHeartbeat, heartbeat_interval

# How often a long-running task is reported again, so a heartbeat timeout only fires when
# the worker is really gone.
HEARTBEAT_EVERY_SECONDS = 5.0

log = logging.getLogger(__name__)


class SpecPreparer(Protocol):
    """Fills a spec in from the site's template (activities/vm_join.py)."""

    async def prepare(self, spec: VmSpec) -> VmSpec: ...


class ProvisioningActivities:
    """The Temporal face of a provisioner: heartbeats, cancellation, retry decisions."""

    def __init__(self, provisioner: Provisioner, joiner: SpecPreparer | None = None) -> None:
        self.provisioner = provisioner
        self.joiner = joiner
        # The creates running in this worker, by VM name (see `_stop_creates`).
        self._creating: dict[str, set[asyncio.Future[VmFacts]]] = {}

    @activity.defn
    async def create_vm(self, input: CreateVmInput) -> VmFacts:
        # A workflow never sends user data; the site's template supplies it (with a token).
        spec = input.spec.model_copy(update={"user_data": None})
        if self.joiner is not None:
            spec = await self.joiner.prepare(spec)
        # Idempotent by name: the playbook answers with the existing VM on a retry.
        work = asyncio.ensure_future(
            self._guarded(lambda progress: self.provisioner.create_vm(spec, progress))
        )
        running = self._creating.setdefault(spec.name, set())
        running.add(work)
        try:
            return await work  # a cancel of the activity cancels the work as well
        finally:
            running.discard(work)
            if not running:
                self._creating.pop(spec.name, None)

    @activity.defn
    async def destroy_vm(self, input: DestroyVmInput) -> None:
        async def destroy(progress: Progress) -> None:
            await self._stop_creates(input.name, progress)
            await self.provisioner.destroy_vm(input, progress)

        await self._guarded(destroy)

    @activity.defn
    async def describe_vm(self, input: DescribeVmInput) -> VmFacts | None:
        return await self._guarded(
            lambda progress: self.provisioner.describe_vm(input.name, progress)
        )

    async def _stop_creates(self, name: str, progress: Progress) -> None:
        """Stop a create of `name` still running in this worker, and wait until it has.

        Such a create is an attempt the engine has given up on: its heartbeat timed out (a
        busy worker or server) and the workflow's cancel then ended the activity at once,
        without this worker's word, so the compensation's destroy can start while the
        attempt still runs. Left alone, it would go on to define or start the VM after the
        destroy has looked. Stopped, it ends as any cancelled create does: after a call
        that cannot be taken back."""
        running = self._creating.get(name, set())
        if not running:
            return
        log.warning("%s: stopping a create still running in this worker before the destroy", name)
        progress("stopping a create of the same VM still running in this worker")
        for work in running:
            work.cancel()
        await asyncio.wait(set(running))

    async def _guarded(self, call: Callable[[Progress], Any]) -> Any:
        last = {"task": "starting"}
        beats = QuietHeartbeat()

        def progress(task: str) -> None:
            last["task"] = task
            beats.beat({"task": task})

        every = heartbeat_interval(HEARTBEAT_EVERY_SECONDS)
        beat = asyncio.create_task(beats.keep_beating(every, lambda: {"task": last["task"]}))
        try:
            return await call(progress)
        except ProvisioningFailed as err:
            if err.transient:
                # The engine's retry policy decides how often and how long to try again.
                raise ApplicationError(err.message, type=Failure.PROVISIONING_TRANSIENT) from err
            raise ApplicationError(
                err.message, type=Failure.PROVISIONING_FAILED, non_retryable=True
            ) from err
        finally:
            beat.cancel()
