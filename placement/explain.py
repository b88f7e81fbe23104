"""The human-readable explanation: one row per host, best candidates first.

Chosen host, then the other candidates by total (their per-plugin scores), then every rejected
host with the first filter it failed and the numbers behind it: amounts for resources, the
domain and its count for a spread violation, the wanted domain for `not_near`.
"""

from __future__ import annotations

from .decision import Decision
from .framework import RequestContext
from .models import Host, PlacementInput
from .names import (
    INSUFFICIENT_CPU,
    INSUFFICIENT_DEVICE,
    INSUFFICIENT_DISK,
    INSUFFICIENT_GPU,
    INSUFFICIENT_MEMORY,
    NOT_NEAR,
    TOPOLOGY_SPREAD_VIOLATION,
)
from .plugins.near import not_near_detail
from .plugins.resources_fit import device_short
from .plugins.topology_spread import violation_detail
from .table import HostTable


def _numbers(ctx: RequestContext, host: Host, keyword: str) -> str:
    if keyword == TOPOLOGY_SPREAD_VIOLATION:
        return f"{keyword} ({violation_detail(ctx, host)})"
    if keyword == NOT_NEAR:
        return f"{keyword} ({not_near_detail(ctx, host)})"
    if keyword == INSUFFICIENT_DEVICE:
        return device_detail(ctx, host)
    u = ctx.usage(host)
    amounts = {
        INSUFFICIENT_CPU: (u.cpu_req, u.cpu_cap),
        INSUFFICIENT_MEMORY: (u.mem_req, u.mem_cap),
        INSUFFICIENT_GPU: (u.gpu_req, u.gpu_cap),
        INSUFFICIENT_DISK: (u.disk_req, u.disk_cap),
    }
    if keyword not in amounts:
        return keyword
    requested, capacity = amounts[keyword]
    return f"{keyword} (needs {requested} of {capacity})"


def device_detail(ctx: RequestContext, host: Host) -> str:
    """`insufficient_device: xilinx.com/u250 (needs 2 of 1)`: the device that is short."""
    name = device_short(ctx.request, host)
    if name is None:
        return INSUFFICIENT_DEVICE
    needs = host.devices_allocated.get(name, 0) + ctx.request.devices[name]
    return f"{INSUFFICIENT_DEVICE}: {name} (needs {needs} of {host.devices_capacity.get(name, 0)})"


def _request_line(inp: PlacementInput) -> str:
    r = inp.request
    parts = [f"cpu {r.cpu}", f"memory_mb {r.memory_mb}"]
    parts += [f"gpu {r.gpu}"] if r.gpu else []
    parts += [f"disk_gb {r.disk_gb}"] if r.disk_gb else []
    parts += [f"{name} {n}" for name, n in sorted(r.devices.items()) if n]
    parts += [f"pool {r.pool}"] if r.pool else []
    parts += ["dedicated"] if r.dedicated else []
    for c in r.topology_spread:
        group = r.spread_group(c)
        parts.append(
            f"spread {group} over {c.topology_key} max_skew {c.max_skew} ({c.when_unsatisfiable})"
        )
    if r.near is not None:
        how = "required" if r.near.required else "preferred"
        who = r.near.vm if r.near.vm is not None else f"node {r.near.node}"
        parts.append(f"near {who} by {r.near.topology_key} ({how})")
    return f"request {r.name}: " + ", ".join(parts)


def render_explanation(inp: PlacementInput, decision: Decision, limit: int | None = None) -> str:
    """The table; `limit` caps the number of host rows (the summary line always follows)."""
    table = HostTable.build(inp.hosts)
    ctx = RequestContext.build(inp.request, inp.policy, inp.existing_vms, table)
    hosts = {h.name: h for h in inp.hosts}
    header = ["host", "result", *decision.plugins, "total"]
    rows: list[list[str]] = []
    scores = decision.scores
    for name in decision.ranked():
        result = "chosen" if name == decision.host else "candidate"
        breakdown = scores[name]
        rows.append([name, result, *(str(breakdown[p]) for p in decision.plugins)])
        rows[-1].append(str(breakdown["total"]))
    for name, keyword in sorted(decision.rejected.items()):
        rows.append([name, _numbers(ctx, hosts[name], keyword)])
    shown = rows if limit is None else rows[:limit]
    full = [header, *(row for row in shown if len(row) == len(header))]
    widths = [max(len(row[c]) for row in full) for c in range(len(header))]
    lines = [_request_line(inp)]
    for row in [header, *shown]:
        # A rejected row has no score columns: let its reason run past the result column.
        cells = [cell.ljust(widths[c]) for c, cell in enumerate(row[:-1])] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    if len(shown) < len(rows):
        lines.append(f"... {len(rows) - len(shown)} more hosts")
    lines.append(decision.summary)
    return "\n".join(lines)
