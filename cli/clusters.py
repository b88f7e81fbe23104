"""`virtflow clusters`: the registered clusters, through the API."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from virtflow_client import AuthenticatedClient
from virtflow_client.api.clusters import list_clusters
from virtflow_client.models import ClusterList

from .spare_api import answer

console = Console()


def clusters(
    as_json: Annotated[bool, typer.Option("--json", help="Print the clusters as JSON")] = False,
) -> None:
    """Each cluster: its API server, whether it answers (or its last error and since when),
    its spares in use and its surge budget."""
    from .common import call_api

    async def go(client: AuthenticatedClient) -> None:
        found = answer(await list_clusters.asyncio_detailed(client=client), ClusterList)
        if as_json:
            console.print_json(json.dumps(found.to_dict()))
            return
        table = Table("cluster", "API server", "reachable", "since", "spares", "budget")
        table.add_column("last error", overflow="fold")
        for c in found.clusters:
            since = c.since.strftime("%Y-%m-%d %H:%M:%SZ") if isinstance(c.since, datetime) else "-"
            table.add_row(
                c.name,
                c.api_server if isinstance(c.api_server, str) else "-",
                "yes" if c.reachable else "NO",
                since,
                str(c.spares_in_use),
                str(c.max_spares) if isinstance(c.max_spares, int) else "-",
                c.last_error if isinstance(c.last_error, str) else "",
            )
        console.print(table)

    call_api(go)
