"""Facts about one inventory host that placement does not use, such as its address.

The original scheduler's API answers with a host's name and IP; the IP is an optional extra
of the inventory's host entry (`ip`, or `address`), read here from a fresh snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping

from temporalio import activity

from contracts.hosts import HostAddressInput, HostAddressResult
from hypervisors.inventory import InventorySource, source_named

ADDRESS_FIELDS = ("ip", "address")


class HostActivities:
    def __init__(self, inventories: Mapping[str, InventorySource]) -> None:
        self._inventories = inventories

    @activity.defn
    async def host_address(self, inp: HostAddressInput) -> HostAddressResult:
        document = await source_named(self._inventories, inp.inventory).load()
        for host in document["hosts"]:
            if isinstance(host, dict) and host.get("name") == inp.host:
                found = next((host[f] for f in ADDRESS_FIELDS if host.get(f)), None)
                return HostAddressResult(ip=str(found) if found is not None else None)
        # The host left the inventory after it was reserved: the name is still the answer.
        return HostAddressResult(ip=None)
