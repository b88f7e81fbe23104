"""Whether a reservation's host keeps room for it over a longer hold: the ledger's answer when
a booking's window is extended.

Only room is judged (resources, VM count, the policy's minimum free and thresholds): the VM is
on its host already, so labels, taints, a cordon, pools and neighbours decide nothing new. The
reservation's own past hold is counted as ending where the extension begins, so a VM the
inventory reports already is not counted twice. Refused, the answer says until when the room
is free (`free_until`: the latest end that fits now), when it is free again after what is in
the way (`free_again_at`), and who holds it then (`held_by`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .decision import Decision
from .engine import place
from .holds import Hold
from .models import PlacementInput, VmRequest
from .names import NODE_UNSCHEDULABLE, REQUEST_FILTERS
from .reservations import Reservation, apply_reservations, holding_over

# What a VM already on its host has passed; the rest judges room.
NOT_ROOM = (NODE_UNSCHEDULABLE, *REQUEST_FILTERS)
# The room at an instant is judged over this short interval from it.
INSTANT = timedelta(seconds=1)


@dataclass
class Extension:
    fits: bool
    summary: str
    held_by: list[str] = field(default_factory=list)
    free_until: datetime | None = None
    free_again_at: datetime | None = None


def room_to_extend(
    base: PlacementInput,
    own: Reservation,
    others: Sequence[Reservation],
    end: datetime,
    now: datetime,
) -> Extension:
    """Whether `own`'s host has room for it from its hold's end (or now) to `end`, counting
    `others` (the ledger's other reservations) over that time."""
    host = next((h for h in base.hosts if h.name == own.host), None)
    if host is None:
        return Extension(False, f"host {own.host} is no longer in the inventory")
    if own.hold.end is None or end <= own.hold.end:
        return Extension(True, "no longer than it holds already")
    begin = max(own.hold.end, now)
    if end <= begin:
        return Extension(True, "nothing left to hold")
    on_host = [
        r.model_copy(update={"hold": r.hold.at_least_until(now)})
        for r in others
        if r.host == own.host and r.spare_id != own.spare_id
    ]
    policy = base.policy.model_copy(
        update={"disabled_plugins": [*base.policy.disabled_plugins, *NOT_ROOM]}
    )
    request = VmRequest(name=own.vm_name, **own.shape())
    alone = base.model_copy(update={"hosts": [host], "request": request, "policy": policy})

    def room(over: Hold) -> Decision:
        # Its own hold ends where `over` begins: a VM the inventory shows counts once.
        past = own.model_copy(update={"hold": Hold(start=own.hold.start, end=over.start)})
        return place(apply_reservations(alone, [*on_host, past], over))

    decision = room(Hold(start=begin, end=end))
    if decision.host is not None:
        return Extension(True, f"room on {own.host} until {end.isoformat()}")
    free_until = begin
    # Holds change only where one starts: the last start before the room runs out.
    starts = {r.hold.start for r in on_host if r.hold.start is not None}
    for start in sorted(t for t in starts if begin < t < end):
        if room(Hold(start=begin, end=start)).host is None:
            break
        free_until = start
    free_again_at = None
    ends = {r.hold.end for r in on_host if r.hold.end is not None}
    for moment in sorted(t for t in ends if t > free_until):
        if room(Hold(start=moment, end=moment + INSTANT)).host is not None:
            free_again_at = moment
            break
    in_way = holding_over(on_host, Hold(start=free_until, end=end))
    return Extension(
        False,
        f"{own.host} has no room for {own.spare_id} from {free_until.isoformat()} to "
        f"{end.isoformat()} ({decision.summary})",
        # All of them: the ledger, which knows each one's cluster, chooses whom to name.
        held_by=[r.spare_id for r in in_way],
        free_until=free_until,
        free_again_at=free_again_at,
    )
