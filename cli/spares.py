"""The spare commands: `prepare`, `status`, `release`, `cancel`, `window`, `list`. Each calls
the HTTP API (the generated client in `virtflow_client/`), as any other caller of virtflow
does."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.table import Table

from contracts.spare import Phase, SpareRequest
from virtflow_client import AuthenticatedClient
from virtflow_client.api.spares import (
    cancel_spare,
    change_spare_window,
    prepare_spare,
    release_spare,
)
from virtflow_client.api.spares import list_spares as list_spares_op
from virtflow_client.models import (
    BookingInfo,
    CancelAccepted,
    PrepareAccepted,
    PrepareBody,
    ReleaseRequest,
    SparePage,
    SpareStatus,
    SpareView,
    WindowBody,
    WindowChanged,
)
from virtflow_client.models import Phase as ApiPhase
from virtflow_client.types import UNSET

from .common import EXIT_BAD_INPUT, EXIT_FAILED, call_api, console, fail, one_line, read_json
from .spare_api import answer
from .spare_view import follow_spare, get_view, given, phase_of, status_table, watch_spare


def prepare(
    file: Annotated[Path | None, typer.Option("--file", "-f", help="SpareRequest JSON")] = None,
    cluster: Annotated[str | None, typer.Option(help="Cluster the spare joins")] = None,
    request_id: Annotated[str | None, typer.Option(help="Idempotency key")] = None,
    cpu: Annotated[int | None, typer.Option(help="vCPUs")] = None,
    memory_mb: Annotated[int | None, typer.Option(help="Memory in MiB")] = None,
    gpu: Annotated[int | None, typer.Option(help="GPUs")] = None,
    disk_gb: Annotated[int | None, typer.Option(help="Disk in GB")] = None,
    device: Annotated[
        list[str] | None,
        typer.Option(help="Device NAME=COUNT, e.g. xilinx.com/u250=1 (repeatable)"),
    ] = None,
    pool: Annotated[str | None, typer.Option(help="Host pool")] = None,
    inventory: Annotated[str | None, typer.Option(help="Configured inventory name")] = None,
    receiver: Annotated[
        list[str] | None, typer.Option("--receiver", help="Configured receiver (repeatable)")
    ] = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Start and return")] = False,
    window_start: Annotated[
        str | None,
        typer.Option(help="Book: Ready at this RFC 3339 time (with --window-end)"),
    ] = None,
    window_end: Annotated[
        str | None, typer.Option(help="Book: held until this RFC 3339 time, then released")
    ] = None,
) -> None:
    """Ask the API for a spare and follow it until Ready (exit 0) or failure (exit 1).

    With a window: book it, print when its spare will be made, and return."""
    body: dict[str, Any] = read_json(file) if file else {}
    if (window_start is None) != (window_end is None):
        fail("bad request: --window-start and --window-end go together", EXIT_BAD_INPUT)
    if window_start is not None:
        body["window"] = {"start": window_start, "end": window_end}
    options = {
        "cluster": cluster,
        "request_id": request_id,
        "cpu": cpu,
        "memory_mb": memory_mb,
        "gpu": gpu,
        "disk_gb": disk_gb,
        "devices": _devices(device) if device else None,
        "pool": pool,
        "inventory": inventory,
        "receivers": receiver or None,
    }
    body.update({k: v for k, v in options.items() if v is not None})
    try:
        SpareRequest.model_validate(
            {k: v for k, v in body.items() if k not in ("count", "partial")}
        )
    except ValidationError as err:
        fail(f"bad request: {one_line(err)}", EXIT_BAD_INPUT)

    async def go(client: AuthenticatedClient) -> int:
        response = await prepare_spare.asyncio_detailed(
            client=client, body=PrepareBody.from_dict(body)
        )
        accepted = answer(response, PrepareAccepted)
        if isinstance(accepted.booking, BookingInfo):
            console.print(
                f"spare [bold]{accepted.spare_id}[/] booked: made at "
                f"{accepted.booking.lead_start.isoformat()} (lead "
                f"{accepted.booking.lead_seconds} s): {accepted.ui_url}"
            )
            return 0
        console.print(f"spare [bold]{accepted.spare_id}[/] started: {accepted.ui_url}")
        if no_wait:
            return 0
        return await follow_spare(client, accepted.spare_id, console)

    raise typer.Exit(call_api(go))


def _devices(options: list[str]) -> dict[str, int]:
    """`--device NAME=COUNT` options as the request's `devices`; a bad one exits 2."""
    devices: dict[str, int] = {}
    for option in options:
        name, sep, count = option.rpartition("=")
        if not sep or not count.strip().isdigit():
            fail(f"bad --device {option!r}: expected NAME=COUNT", EXIT_BAD_INPUT)
        devices[name.strip()] = devices.get(name.strip(), 0) + int(count)
    return devices


# The argument of every command about one spare.
SpareId = Annotated[str, typer.Argument(help="Spare (workflow) id")]

# A watch ends at a phase the spare stays in, or when its workflow ends.
SETTLED = {Phase.READY.value, Phase.RELEASED.value, Phase.FAILED.value, Phase.CANCELLED.value}


def status(
    spare_id: SpareId,
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON")] = False,
    watch: Annotated[
        bool, typer.Option("--watch", "-w", help="Live view until Ready or ended (Ctrl-C stops)")
    ] = False,
) -> None:
    """Show a spare's phase, host, VM and what it waits for."""

    async def go(client: AuthenticatedClient) -> None:
        if watch:
            await watch_spare(client, spare_id, SETTLED, console)
            return
        view = await get_view(client, spare_id)
        if as_json:
            console.print_json(json.dumps(view.to_dict()))
        else:
            console.print(status_table(view))

    call_api(go)


# How a cancelled workflow's status reads.
CANCELLED = ("canceled", "cancelled")


async def _then_watch(
    wait: bool,
    client: AuthenticatedClient,
    spare_id: str,
    until: set[str],
    succeeded: Callable[[SpareView], bool],
) -> int:
    """After an action: without `--wait`, 0 at once; with it, the spare watched until one of
    `until` (or its workflow's end), then 0 if it ended as the action meant, else 1."""
    if not wait:
        return 0
    view = await watch_spare(client, spare_id, until, console)
    return 0 if succeeded(view) else EXIT_FAILED


def release(
    spare_id: SpareId,
    reason: Annotated[str, typer.Option(help="Why, recorded in history")] = "released by CLI",
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow it until released (exit 0) or failed (1)")
    ] = False,
) -> None:
    """Release a Ready spare: drain, delete the Node, destroy the VM, free the capacity."""

    async def go(client: AuthenticatedClient) -> int:
        response = await release_spare.asyncio_detailed(
            spare_id, client=client, body=ReleaseRequest(reason=reason)
        )
        result = answer(response, SpareStatus)
        console.print(f"spare {spare_id}: release accepted (phase was {phase_of(result)})")
        ended = {Phase.RELEASED.value, Phase.FAILED.value}
        return await _then_watch(
            wait, client, spare_id, ended, lambda view: phase_of(view) == Phase.RELEASED.value
        )

    raise typer.Exit(call_api(go))


def cancel(
    spare_id: SpareId,
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow it until it has compensated and ended")
    ] = False,
) -> None:
    """Cancel a spare (the emergency stop): it undoes what it did, then ends. Operator role."""

    async def go(client: AuthenticatedClient) -> int:
        answer(await cancel_spare.asyncio_detailed(spare_id, client=client), CancelAccepted)
        console.print(f"spare {spare_id}: cancel requested")
        return await _then_watch(
            wait, client, spare_id, set(), lambda view: view.workflow_status in CANCELLED
        )

    raise typer.Exit(call_api(go))


def window(
    spare_id: Annotated[str, typer.Argument(help="Booked spare (workflow) id")],
    end: Annotated[str, typer.Option("--end", help="The window's new end (RFC 3339, offset)")],
) -> None:
    """End a booking's window later or sooner. A later end is taken only if its host's room is
    free until then; otherwise the answer says who holds it and until when it is free."""
    try:
        new_end = datetime.fromisoformat(end)
    except ValueError:
        fail(f"bad request: --end {end!r} is not an RFC 3339 time", EXIT_BAD_INPUT)
    if new_end.tzinfo is None:
        fail(f"bad request: --end {end!r} has no offset (add Z or +hh:mm)", EXIT_BAD_INPUT)

    async def go(client: AuthenticatedClient) -> None:
        response = await change_spare_window.asyncio_detailed(
            spare_id, client=client, body=WindowBody(end=new_end)
        )
        changed = answer(response, WindowChanged)
        console.print(
            f"spare {spare_id}: window {changed.window.start.isoformat()} .. "
            f"{changed.window.end.isoformat()}"
        )

    call_api(go)


MAX_PAGE_SIZE = 500


def list_spares(
    cluster: Annotated[str | None, typer.Option(help="Only this cluster")] = None,
    pool: Annotated[str | None, typer.Option(help="Only this pool ('any': no pool asked)")] = None,
    phase: Annotated[Phase | None, typer.Option(help="Only spares in this phase")] = None,
    host: Annotated[str | None, typer.Option(help="Only spares on this host")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many (paged through)")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print the spares as JSON")] = False,
) -> None:
    """List spares, newest first (Temporal visibility through the API), page after page."""

    async def go(client: AuthenticatedClient) -> None:
        spares: list[Any] = []
        token: str | None = None
        while len(spares) < limit:
            response = await list_spares_op.asyncio_detailed(
                client=client,
                cluster=cluster,
                pool=pool,
                host=host,
                phase=ApiPhase(phase.value) if phase else UNSET,
                page_size=min(limit - len(spares), MAX_PAGE_SIZE),
                page_token=token or UNSET,
            )
            page = answer(response, SparePage)
            spares += page.spares
            token = given(page.next_page_token)
            if not token:
                break
        if as_json:
            console.print_json(json.dumps([s.to_dict() for s in spares]))
            return
        table = Table("spare", "cluster", "pool", "host", "phase", "workflow", "started")
        for spare in spares:
            started = given(spare.started_at)
            table.add_row(
                spare.spare_id,
                given(spare.cluster) or "-",
                given(spare.pool) or "-",
                given(spare.host) or "-",
                given(spare.phase) or "-",
                spare.workflow_status,
                f"{started:%Y-%m-%d %H:%M:%S}" if started else "-",
            )
        console.print(table)
        more = f" (more: raise --limit above {limit})" if token else ""
        console.print(f"{len(spares)} spare(s){more}", highlight=False)

    call_api(go)
