"""Facts about one inventory host that placement does not use, such as its address.

The original scheduler's API answers with a host's name and IP; the IP is an optional extra
of the inventory's host entry (`ip`, or `address`), read here from a fresh snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel
from temporalio import activity
from temporalio.exceptions import ApplicationError

from hypervisors.inventory import InventorySource

ADDRESS_FIELDS = ("ip", "address")


class HostAddressInput(BaseModel):
    inventory: str
    host: str


class HostAddressResult(BaseModel):
    ip: str | None = None


class HostActivities:
    def __init__(self, inventories: Mapping[str, InventorySource]) -> None:
        self._inventories = inventories

    @activity.defn
    async def host_address(self, inp: HostAddressInput) -> HostAddressResult:
        source = self._inventories.get(inp.inventory)
        if source is None:
            # Configuration, not weather: retrying cannot make the inventory appear.
            raise ApplicationError(
                f"unknown inventory '{inp.inventory}'", type="UnknownInventory", non_retryable=True
            )
        document = await source.load()
        for host in document["hosts"]:
            if isinstance(host, dict) and host.get("name") == inp.host:
                found = next((host[f] for f in ADDRESS_FIELDS if host.get(f)), None)
                return HostAddressResult(ip=str(found) if found is not None else None)
        # The host left the inventory after it was reserved: the name is still the answer.
        return HostAddressResult(ip=None)
