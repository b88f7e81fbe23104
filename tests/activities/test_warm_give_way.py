"""Which warm spares give way to a request that fits nowhere else: the fewest, oldest first,
judged on one inventory read however many hosts and counts it weighs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from activities.placement import PlacementActivities
from activities.warm_pools import WarmActivities
from contracts.warm import GiveWayInput
from hypervisors.inventory import FileInventory
from placement.models import VmRequest
from placement.reservations import Reservation


class CountedInventory(FileInventory):
    """The file inventory, counting its reads."""

    reads = 0

    async def load(self) -> dict[str, Any]:
        self.reads += 1
        return await super().load()


async def test_the_fewest_oldest_warm_spares_give_way_after_one_inventory_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "inventory.json"
    hosts = [{"name": h, "cpu_capacity": 8, "memory_mb_capacity": 16384} for h in ("h1", "h2")]
    path.write_text(json.dumps({"hosts": hosts}))
    inventory = CountedInventory(path)
    placement = PlacementActivities({"site": inventory})
    warm_activities = WarmActivities(
        cast(Any, None), [], cast(Any, None), placement, cast(Any, None)
    )
    # Each host is full with two warm spares (oldest first); the request needs a whole host.
    warm = [
        Reservation.of(VmRequest(name=f"w{i}", cpu=4, memory_mb=2048), host, None, f"w{i}")
        for i, host in enumerate(("h1", "h1", "h2", "h2"), start=1)
    ]
    request = VmRequest(name="spare-big", cpu=8, memory_mb=4096)

    answer = await warm_activities.give_way(
        GiveWayInput(inventory="site", request=request, reservations=warm, warm=warm)
    )

    assert (answer.host, answer.take_back) == ("h1", ["w1", "w2"])
    assert inventory.reads == 1
    # A request that one warm spare's room satisfies takes only the oldest of one host.
    small = VmRequest(name="spare-small", cpu=4, memory_mb=2048)
    answer = await warm_activities.give_way(
        GiveWayInput(inventory="site", request=small, reservations=warm, warm=warm)
    )
    assert (answer.host, answer.take_back) == ("h1", ["w1"])
    assert inventory.reads == 2
