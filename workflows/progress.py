"""What a spare shows of itself while it runs: its status, its search attributes, its details.

The status is what the status Query answers; the search attributes are what `list` filters
on; the details line is what the Temporal UI shows. A phase change updates all three, plus
the phase metrics, so they never disagree.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate

with workflow.unsafe.imports_passed_through():
    from contracts import metrics
    from contracts.common import HOST, PHASE
    from contracts.ledger import Reservation
    from contracts.spare import Phase, SpareStatus, StepRecord


class Progress:
    def __init__(self, status: SpareStatus) -> None:
        self.status = status
        self._detail = ""
        # The detail the current phase was entered with (a release's word is added to it).
        self._entered = ""
        self._pending_attributes: dict[str, SearchAttributeUpdate] = {}
        self._publishing: asyncio.Future[None] | None = None
        self._held_back = False
        # The phase metrics' `cluster`: set once the worker's configuration confirmed the
        # spare's cluster (a registered one: one series per cluster); the phases entered
        # before then are counted then.
        self._cluster: str | None = None
        self._uncounted: list[tuple[str, str | None]] = []

    def enter(self, phase: Phase, detail: str) -> None:
        """The spare is now in `phase`: the status, the phase metrics, the search attribute
        and the details line all say so."""
        s = self.status
        left = s.phase.value if s.steps else None
        self._count(phase.value, left)
        if phase == Phase.READY:
            ready_after = workflow.now() - workflow.info().start_time
            metrics.spare_ready(workflow.metric_meter(), ready_after, self.metric_cluster)
        s.phase = phase
        s.waiting_for = []
        s.steps.append(StepRecord(phase=phase, at=workflow.now(), detail=detail))
        self._entered = detail
        self.set_attributes(PHASE.value_set(phase.value))
        self.show(detail)

    def reserved(self, reservation: Reservation) -> None:
        """The spare has its host: the status and the search attributes name it."""
        s = self.status
        s.host, s.vmid, s.topology = reservation.host, reservation.vmid, reservation.topology
        self.set_attributes(HOST.value_set(reservation.host))

    def set_attributes(self, *updates: SearchAttributeUpdate) -> None:
        """Upsert search attributes once per workflow task, with only the values that changed.

        Phases often follow each other within one task (ready, then releasing at once when
        the release was already asked for), and each upsert is a history event and a
        visibility write on the server; visibility only changes when the task completes, so
        publishing the last value is all anyone could see anyway.
        """
        for update in updates:
            self._pending_attributes[update.key.name] = update
        if self._publishing is None or self._publishing.done():
            # Runs once the workflow's code waits, still inside this workflow task.
            self._publishing = asyncio.ensure_future(self._publish_when_idle())

    @contextmanager
    def answered_within_task(self) -> Iterator[None]:
        """Around a call answered within this workflow task (a local activity): what the
        attributes say before its answer nobody could see, so they wait for it."""
        self._held_back = True
        try:
            yield
        finally:
            self._held_back = False

    async def _publish_when_idle(self) -> None:
        if not self._held_back:  # else published with the next change or at the end
            self.publish()

    def publish(self) -> None:
        current = workflow.info().typed_search_attributes
        changed = [u for u in self._pending_attributes.values() if current.get(u.key) != u.value]
        self._pending_attributes.clear()
        if changed:
            workflow.upsert_search_attributes(changed)

    @property
    def metric_cluster(self) -> str:
        return metrics.UNCONFIRMED if self._cluster is None else self._cluster

    def count_for(self, cluster: str) -> None:
        """Label the phase metrics with `cluster` (the confirmed one, or UNCONFIRMED for a
        spare ending before its cluster was confirmed), the phases entered so far included."""
        if self._cluster is not None:
            return
        self._cluster = cluster
        for phase, left in self._uncounted:
            metrics.spare_entered_phase(workflow.metric_meter(), phase, left, cluster)
        self._uncounted = []

    def _count(self, phase: str, left: str | None) -> None:
        if self._cluster is None:
            self._uncounted.append((phase, left))
        else:
            metrics.spare_entered_phase(workflow.metric_meter(), phase, left, self._cluster)

    def amend_phase(self, word: str) -> None:
        """Add `word` to the current phase's detail (it replaces the word said before)."""
        detail = f"{self._entered}: {word}"
        self.status.steps[-1].detail = detail
        self.show(detail)

    def waiting(self, missing: list[str]) -> None:
        self.status.waiting_for = missing
        self.show("waiting for: " + ", ".join(missing))

    def show(self, detail: str) -> None:
        s = self.status
        self._detail = detail
        stopped = ", ".join(s.disabled_receivers)
        gone = f"  \n**Webhooks stopped (410 Gone)** {stopped}" if stopped else ""
        # Requested and actual domain side by side, so an unmet preference is seen, not hidden.
        where = f"  \n**Topology** {s.topology.describe()}" if s.topology else ""
        workflow.set_current_details(
            f"**Phase** {s.phase.value}  \n**Host** {s.host or '-'}{where}  \n{detail}{gone}"
        )

    def receivers_changed(self, disabled: list[str], undelivered: list[str]) -> None:
        self.status.disabled_receivers = disabled
        self.status.undelivered = undelivered
        self.show(self._detail)
