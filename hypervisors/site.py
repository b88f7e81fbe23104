"""What every hypervisor's site file says about a host, and the errors of reading one.

A hypervisor's API knows a host's CPUs, memory and VMs; the site file adds what it cannot
know (pool, rack, labels, taints, allocation ratios, quota). The failures are the inventory's:
a broken file is a non-retryable `InventoryInvalid` (reading it again reads the same bytes), a
hypervisor that does not answer a retryable `InventoryUnavailable` (it may come back).
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure

SiteT = TypeVar("SiteT", bound=BaseModel)


def inventory_invalid(where: str, why: str) -> ApplicationError:
    return ApplicationError(
        f"inventory {where}: {why}", type=Failure.INVENTORY_INVALID, non_retryable=True
    )


def inventory_unavailable(where: str, why: str) -> ApplicationError:
    return ApplicationError(f"inventory {where}: {why}", type=Failure.INVENTORY_UNAVAILABLE)


class HostFacts(BaseModel):
    """What a site says about a host that its hypervisor cannot know."""

    model_config = ConfigDict(extra="forbid")

    pool: str | None = None
    rack: str | None = None
    dedicated: bool = False
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[dict[str, str]] = Field(default_factory=list)
    cpu_allocation_ratio: float | None = Field(default=None, gt=0)
    memory_allocation_ratio: float | None = Field(default=None, gt=0)
    disk_allocation_ratio: float | None = Field(default=None, gt=0)
    gpu_capacity: int = Field(default=0, ge=0)
    vm_quota: int | None = Field(default=None, ge=0)
    unschedulable: bool = False
    # Devices other than GPUs the host offers, by extended-resource name (PLACEMENT.md).
    devices_capacity: dict[str, int] = Field(default_factory=dict)


class SiteHost(HostFacts):
    """One host of the site by name; the numbers come from the hypervisor."""

    name: str = Field(min_length=1)


def read_site(path: Path, model: type[SiteT], where: str) -> SiteT:
    """The site file as `model`; any problem with it is `InventoryInvalid`, naming `where`."""
    try:
        doc = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise inventory_invalid(where, "file not found") from None
    except (OSError, yaml.YAMLError) as err:
        raise inventory_invalid(where, f"cannot read: {err}") from err
    try:
        return model.model_validate(doc)
    except ValidationError as err:
        raise inventory_invalid(where, str(err)) from None
