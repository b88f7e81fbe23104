"""How the command line shows a spare: its status table, a live view, the steps as they come.

Everything here reads the API's `SpareView` (through the generated client), never Temporal.
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

from rich.console import Console
from rich.live import Live
from rich.table import Table

from contracts.spare import Phase
from virtflow_client import AuthenticatedClient
from virtflow_client.api.spares import get_spare
from virtflow_client.models import PlacedTopology, SpareStatus, SpareView
from virtflow_client.types import Unset

from .common import EXIT_FAILED
from .spare_api import answer

T = TypeVar("T")
FOLLOW_POLL_SECONDS = 1.0
# Phases after which a spare never becomes Ready.
NOT_READY_END = {Phase.FAILED, Phase.CANCELLED, Phase.RELEASED, Phase.COMPENSATING}


def given(value: T | Unset | None) -> T | None:
    """The client's value, with an absent one (UNSET) as None."""
    return None if isinstance(value, Unset) else value


def phase_of(view: SpareView | SpareStatus) -> str:
    phase = given(view.phase)
    return phase.value if phase is not None else "validating"


def _topology(placed: PlacedTopology) -> str:
    """The host's domains, and the domain `near` wanted: `zone=z-c; near w-7 wanted zone=z-c`."""
    domains = given(placed.domains)
    pairs = domains.additional_properties.items() if domains is not None else []
    text = ", ".join(f"{key}={value or '-'}" for key, value in pairs)
    near = given(placed.near)
    if near is not None:
        who = given(near.node) or given(near.vm)
        text += f"; near {who} wanted {near.topology_key}={given(near.domain) or '-'}"
    return text


def status_table(view: SpareView) -> Table:
    """Phase, host, VM and what the spare waits for: the status command's view."""
    table = Table(show_header=False, box=None)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    vm = given(view.vm)
    vmid = given(view.vmid) or (given(vm.vmid) if vm else None)
    table.add_row("spare", view.spare_id)
    table.add_row("phase", f"[bold]{phase_of(view)}[/] (workflow {view.workflow_status})")
    table.add_row("cluster / pool", f"{view.cluster} / {given(view.pool) or '-'}")
    table.add_row("host / vmid", f"{given(view.host) or '-'} / {vmid or '-'}")
    topology = given(view.topology)
    if topology is not None:
        table.add_row("topology", _topology(topology))
    if vm is not None:
        table.add_row("vm", f"{vm.name} ip {given(vm.ip) or '-'} mac {given(vm.mac) or '-'}")
    waiting = given(view.waiting_for)
    if waiting:
        table.add_row("waiting for", "[yellow]" + ", ".join(waiting) + "[/]")
    if given(view.error):
        table.add_row("error", f"[red]{view.error}[/]")
    for step in given(view.steps) or []:
        table.add_row(f"  {step.at:%H:%M:%S}", f"{step.phase.value} {given(step.detail) or ''}")
    table.add_row("history", view.ui_url)
    return table


async def get_view(client: AuthenticatedClient, spare_id: str) -> SpareView:
    return answer(await get_spare.asyncio_detailed(spare_id, client=client), SpareView)


def _settled(view: SpareView, until: set[str]) -> bool:
    return phase_of(view) in until or view.workflow_status != "running"


async def watch_spare(
    client: AuthenticatedClient, spare_id: str, until: set[str], out: Console
) -> SpareView:
    """A live view of the spare, redrawn as it changes, until its phase is one of `until` or
    its workflow ends."""
    view = await get_view(client, spare_id)
    with Live(status_table(view), console=out, auto_refresh=False, transient=False) as live:
        while not _settled(view, until):
            await asyncio.sleep(FOLLOW_POLL_SECONDS)
            view = await get_view(client, spare_id)
            live.update(status_table(view), refresh=True)
    return view


async def follow_spare(client: AuthenticatedClient, spare_id: str, out: Console) -> int:
    """Print each new step until the spare is Ready (0) or can no longer be (1)."""
    shown = 0
    waiting: list[str] = []
    while True:
        view = await get_view(client, spare_id)
        steps = given(view.steps) or []
        for step in steps[shown:]:
            detail = f" - {step.detail}" if given(step.detail) else ""
            out.print(f"  [cyan]{step.phase.value:<17}[/]{detail}")
        shown = len(steps)
        now_waiting = given(view.waiting_for) or []
        if now_waiting and now_waiting != waiting:
            out.print(f"  {'':<17}waiting for: {', '.join(now_waiting)}")
        waiting = now_waiting
        if phase_of(view) == Phase.READY.value:
            out.print(f"[green]ready[/] on {given(view.host)}")
            return 0
        if phase_of(view) in {p.value for p in NOT_READY_END} or view.workflow_status != "running":
            out.print(f"[red]{phase_of(view)}[/]: {given(view.error) or view.workflow_status}")
            return EXIT_FAILED
        await asyncio.sleep(FOLLOW_POLL_SECONDS)
