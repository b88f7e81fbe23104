"""Whether a booked host can still hold its booking: it is in the inventory, not cordoned,
and has room for it over the booking's hold with every other reservation counted.

Only what can change under a booking after it was placed is judged: presence, cordon, room
(resources, VM quota, the policy's minimum free resources and thresholds). The request's own
constraints (pool, selectors, tolerations, anti-affinity, spread, near) held when it was
placed and are not kept with the reservation; the filters that read them are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from .engine import place
from .models import PlacementInput, VmRequest
from .names import REQUEST_FILTERS
from .reservations import Reservation, apply_reservations


def why_unfit(
    inventory: PlacementInput,
    booked: Reservation,
    reservations: Sequence[Reservation],
    now: datetime | None = None,
) -> str | None:
    """Why `booked`'s host can no longer hold it (None: it still can). `inventory` is the
    inventory as read, without reservations; `reservations` are the ledger's, `booked`
    among them or not."""
    host = next((h for h in inventory.hosts if h.name == booked.host), None)
    if host is None:
        return f"host {booked.host} is no longer in the inventory"
    if host.unschedulable:
        return f"host {booked.host} is cordoned"
    policy = inventory.policy
    disabled = [*policy.disabled_plugins, *REQUEST_FILTERS]
    one_host = inventory.model_copy(
        update={
            "hosts": [host],
            "request": VmRequest(name=booked.vm_name, **booked.shape()),
            "policy": policy.model_copy(update={"disabled_plugins": disabled}),
        }
    )
    others = [r for r in reservations if r.spare_id != booked.spare_id and r.host == host.name]
    decision = place(apply_reservations(one_host, others, booked.hold, now))
    if decision.host is not None:
        return None
    why = decision.rejected.get(host.name) or decision.error or "it does not fit"
    return f"host {booked.host} has no room for it from {booked.hold.describe()} any more: {why}"
