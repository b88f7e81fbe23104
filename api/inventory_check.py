"""Right reasons before anything starts: a pool, a node selector or a host-name pattern (the
qemu-scheduler's `node.qemu-scheduler/regex`) that no host of the live inventory has is the
caller's mistake (422 naming the field), not a spare that "never fits".

Only names and labels are checked here; whether there is room is the ledger's question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import ValidationError
from temporalio.exceptions import ApplicationError

from contracts.spare import NODE_REGEX_ANNOTATION
from hypervisors.inventory import read_inventory, unknown_inventory
from placement.models import ExistingVm, Host, Near
from placement.table import HostTable
from placement.topology import near_domain
from runtime.settings import Settings

from .errors import Code, InvalidInput, InventoryUnavailable

MAX_LISTED = 10


def inventory_spec(settings: Settings, name: str) -> str:
    """Where inventory `name` is read from; a name the settings do not configure is a 422
    naming the field, with the same words and code wherever an inventory is named."""
    spec = settings.inventories.get(name)
    if spec is None:
        raise InvalidInput(
            "inventory", unknown_inventory(name, settings.inventories), Code.UNKNOWN_INVENTORY
        )
    return spec


async def inventory_hosts(settings: Settings, inventory: str) -> list[Host]:
    """The hosts of a configured inventory, read now."""
    hosts, _ = await inventory_snapshot(settings, inventory)
    return hosts


async def inventory_snapshot(
    settings: Settings, inventory: str
) -> tuple[list[Host], list[ExistingVm]]:
    """The hosts and the VMs of a configured inventory, read now."""
    spec = settings.inventories[inventory]
    try:
        document = await read_inventory(spec)
        vms = [ExistingVm.model_validate(v) for v in document.get("existing_vms") or []]
        return [Host.model_validate(h) for h in document["hosts"]], vms
    except ApplicationError as err:
        # The source's own retry decision tells a broken document from an outage.
        if err.non_retryable:
            raise InvalidInput("inventory", str(err), Code.UNKNOWN_INVENTORY) from err
        raise InventoryUnavailable(str(err)) from err
    except ValidationError as err:
        raise InventoryUnavailable(f"inventory {inventory}: {err.errors()[0]['msg']}") from err


def _listed(names: set[str]) -> str:
    shown = sorted(names)[:MAX_LISTED]
    more = f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else ""
    return ", ".join(shown) + more if shown else "none"


def check_hosts_exist(
    hosts: list[Host],
    inventory: str,
    pool: str | None,
    node_selector: Mapping[str, str],
    pool_field: str = "pool",
    node_regex: str | None = None,
) -> None:
    """422 `unknown_pool` or `no_matching_host` when no host could ever be chosen."""
    if pool is not None:
        pools = {h.pool for h in hosts if h.pool is not None}
        if pool not in pools:
            raise InvalidInput(
                pool_field,
                f"no host of inventory '{inventory}' is in pool '{pool}' (pools: {_listed(pools)})",
                Code.UNKNOWN_POOL,
            )
        hosts = [h for h in hosts if h.pool == pool]
    where = f"in pool '{pool}'" if pool is not None else f"of inventory '{inventory}'"
    for key, value in node_selector.items():
        if not any(h.labels.get(key) == value for h in hosts):
            seen = {h.labels[key] for h in hosts if key in h.labels}
            raise InvalidInput(
                f"node_selector.{key}",
                f"no host {where} has label {key}={value} (values there: {_listed(seen)})",
                Code.NO_MATCHING_HOST,
                ("node_selector", key),
            )
    if node_selector and not any(
        all(h.labels.get(k) == v for k, v in node_selector.items()) for h in hosts
    ):
        wanted = ", ".join(f"{k}={v}" for k, v in node_selector.items())
        raise InvalidInput(
            "node_selector",
            f"no host {where} has all of the labels {wanted}",
            Code.NO_MATCHING_HOST,
        )
    if node_regex is not None:
        # Searched, unanchored, as placement (and the qemu-scheduler) match it.
        pattern = re.compile(node_regex)
        names = {h.name for h in hosts}
        if not any(pattern.search(name) for name in names):
            raise InvalidInput(
                f"annotations.{NODE_REGEX_ANNOTATION}",
                f"no host {where} has a name matching {node_regex!r} (hosts: {_listed(names)})",
                Code.NO_MATCHING_HOST,
                ("annotations", NODE_REGEX_ANNOTATION),
            )


def check_near_known(hosts: list[Host], vms: list[ExistingVm], inventory: str, near: Near) -> None:
    """422 `near_unknown` when the VM or Node `near` names, or its host's domain, is unknown:
    placement would have no domain to aim at (it never falls back to ignoring `near`)."""
    wanted = near_domain(near, vms, HostTable.build(hosts))
    if wanted.domain is None:
        field = "near.vm" if near.vm is not None else "near.node"
        raise InvalidInput(
            field,
            f"{wanted.problem} (inventory '{inventory}')",
            Code.NEAR_UNKNOWN,
            ("near", "vm" if near.vm is not None else "node"),
        )
