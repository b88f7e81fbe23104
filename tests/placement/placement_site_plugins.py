"""A site's own placement plugins, as a site would ship them through entry points.

`HostCost` prefers cheaper hosts from a label; `MaintenanceSoon` keeps VMs off hosts about to be
serviced. Both run host by host: site plugins need no numpy form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from placement.framework import PerHostScore, RequestContext
from placement.models import Host


class HostCost(PerHostScore):
    """Raw score: the host's cost label (missing: `missing`); cheapest gets 100."""

    name = "HostCost"

    def __init__(self, label: str, missing: int) -> None:
        self.label = label
        self.missing = missing

    def score_host(self, ctx: RequestContext, host: Host) -> int:
        value = host.labels.get(self.label)
        return int(value) if value is not None and value.isdigit() else self.missing

    def normalize(self, ctx: RequestContext, raw: list[int]) -> list[int] | None:
        top = max(raw, default=0)
        return [100 if top == 0 else 100 - 100 * cost // top for cost in raw]


def host_cost(args: Mapping[str, Any]) -> HostCost:
    unknown = set(args) - {"label", "missing"}
    if unknown:
        raise ValueError(f"unknown arguments {sorted(unknown)}")
    missing = args.get("missing", 100)
    if not isinstance(missing, int) or missing < 0:
        raise ValueError("missing must be a non-negative integer")
    return HostCost(str(args.get("label", "cost")), missing)


class MaintenanceSoon:
    name = "MaintenanceSoon"
    reasons = ("maintenance_soon",)

    def filter_host(self, ctx: RequestContext, host: Host) -> str | None:
        return "maintenance_soon" if host.labels.get("maintenance") == "soon" else None


def maintenance_soon(args: Mapping[str, Any]) -> MaintenanceSoon:
    return MaintenanceSoon()


def hosts_of(names: Sequence[str], **labels: str) -> list[dict[str, Any]]:
    return [{"name": n, "labels": dict(labels)} for n in names]
