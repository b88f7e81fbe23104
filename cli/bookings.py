"""`virtflow bookings`: each host's bookings over a span of time, through the API (which checks
the times: a bad one is the API's 422, exit 2)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated

import typer
from rich.table import Table

from virtflow_client import AuthenticatedClient
from virtflow_client.api.bookings import list_bookings
from virtflow_client.models import BookingsView
from virtflow_client.types import UNSET

from .common import call_api, console
from .spare_api import answer


def _when(moment: object) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%SZ}" if isinstance(moment, datetime) else "-"


def _phase(phase: object, status: object) -> str:
    shown = phase if isinstance(phase, str) else "-"
    # A spare that ended while its ledger still holds the room says so.
    if not isinstance(status, str) or status == "running":
        return shown
    return f"{shown} ({status})"


def bookings(
    start: Annotated[
        str | None, typer.Option("--from", help="From (RFC 3339 with an offset); default now")
    ] = None,
    end: Annotated[
        str | None,
        typer.Option("--to", help="Until (RFC 3339); default: every booking that can exist"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the bookings as JSON")] = False,
) -> None:
    """Each host's bookings: spare, cluster, phase, when its spare is made (lead start) and its
    window. Only the clusters the API token acts for."""

    async def go(client: AuthenticatedClient) -> None:
        response = await list_bookings.asyncio_detailed(
            client=client,
            from_=start if start is not None else UNSET,
            to=end if end is not None else UNSET,
        )
        view = answer(response, BookingsView)
        if as_json:
            console.print_json(json.dumps(view.to_dict()))
            return
        console.print(f"bookings {_when(view.from_)} .. {_when(view.to)}", highlight=False)
        count = 0
        for host in view.hosts:
            table = Table(
                "spare",
                "cluster",
                "phase",
                "made from",
                "window start",
                "window end",
                title=f"{host.host} ({host.inventory})",
                title_justify="left",
            )
            for b in host.bookings:
                count += 1
                table.add_row(
                    b.spare_id,
                    b.cluster if isinstance(b.cluster, str) else "-",
                    _phase(b.phase, b.workflow_status),
                    _when(b.lead_start),
                    _when(b.window_start),
                    _when(b.window_end),
                )
            console.print(table)
        console.print(f"{count} booking(s) on {len(view.hosts)} host(s)", highlight=False)
        for missing in view.unanswered or []:
            console.print(
                f"[yellow]inventory {missing.inventory}: its bookings are missing, its ledger "
                f"did not answer ({missing.detail})[/]",
                highlight=False,
            )

    call_api(go)
