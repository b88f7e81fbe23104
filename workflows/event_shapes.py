"""A spare's facts as its events carry them: the contracts' models in the webhooks' shapes.

The webhook payload is a public format of its own (webhooks/events.py), so it does not reuse
the internal models; these are the only places the two meet.

Plain deterministic code with no state: passed through the sandbox (worker/worker.py).
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts.drain import DrainNodeResult
    from contracts.ledger import Reservation
    from contracts.release import ReleaseResult
    from webhooks.events import BlockingBudget, DrainInfo, TopologyInfo


def topology_info(reservation: Reservation) -> TopologyInfo | None:
    placed = reservation.topology
    return None if placed is None else TopologyInfo.model_validate(placed.model_dump())


def drain_info(drain: DrainNodeResult, left_cordoned: bool = False) -> DrainInfo:
    return DrainInfo(
        outcome=drain.outcome.value,
        policy=drain.policy.value,
        evicted=drain.evicted,
        deleted=drain.deleted,
        not_evicted=drain.skipped,
        blocked_by=[
            BlockingBudget(
                namespace=b.namespace, name=b.name, disruptions_allowed=b.disruptions_allowed
            )
            for b in drain.blocked_by
        ],
        left_cordoned=left_cordoned,
    )


def released_detail(released: ReleaseResult) -> str:
    """One line for the spare's last step: what the release did to the Node's pods."""
    if released.drain is None:
        not_evicted = ", ".join(released.not_evicted)
        return f"evicted {len(released.evicted)} pods" + (
            f"; not evicted in time: {not_evicted}" if not_evicted else ""
        )
    left = "; VM kept, Node left cordoned (policy leave)" if released.left_cordoned else ""
    return released.drain.summary() + left
