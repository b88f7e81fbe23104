"""Dry-run placement: where would a VM go and why not elsewhere, creating nothing.

Shared by `POST /placement/explain` and `virtflow explain`. The body is the placement JSON form
(PLACEMENT.md); when it carries no hosts, the named (or default) inventory supplies them, and
the input is built as the ledger's placement builds it (`activities.placement.placement_input`),
so explain names the host the ledger would reserve next.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from activities.placement import placement_input
from contracts.ledger import Reservation
from placement.engine import place
from placement.errors import PolicyError
from placement.explain import render_explanation
from placement.models import PlacementInput, Policy
from placement.policy import load_policy
from runtime.settings import Settings

from .errors import Code, InvalidInput
from .inventory_view import inventory_document, ledger_reservations
from .temporal_client import ClientProvider


class ExplainBody(BaseModel):
    """The placement input, with hosts inline or taken from a configured inventory."""

    model_config = ConfigDict(extra="allow")

    request: dict[str, Any]
    policy: dict[str, Any] | None = None
    hosts: list[dict[str, Any]] | None = None
    existing_vms: list[dict[str, Any]] | None = None
    used_vmids: list[int] | None = None
    next_vmid: int | None = None
    inventory: str | None = Field(
        default=None, description="Configured inventory to take hosts from when none are given"
    )
    cluster: str | None = Field(
        default=None,
        min_length=1,
        max_length=63,
        description="Explain for this registered cluster: its inventories only",
    )


class ExplainResult(BaseModel):
    decision: dict[str, Any] = Field(
        description="host, vmid, error, rejected (host -> reason), scores (host -> plugin -> score)"
    )
    summary: str
    table: str


async def build_input(
    settings: Settings, body: ExplainBody, clients: ClientProvider
) -> PlacementInput:
    """The input the ledger's placement would build: for a configured inventory, its snapshot
    with the ledger's pending reservations counted and the configured policy (else the one the
    inventory carries); a body's own hosts, VMs and policy take their place."""
    fields = body.model_dump(
        exclude_none=True, exclude={"inventory", "request", "policy", "cluster"}
    )
    reservations: list[Reservation] = []
    if body.hosts is None:
        name = body.inventory or "default"
        fields = {**await inventory_document(settings, name), **fields}
        reservations = await ledger_reservations(await clients.get(), name)
    elif body.inventory is not None:
        raise InvalidInput("inventory", "give either hosts or an inventory name, not both")
    policy = body.policy if body.policy is not None else configured_policy(settings)
    return placement_input(fields, body.request, reservations, policy)


def configured_policy(settings: Settings) -> Policy | None:
    """The policy file the worker's placement uses, checked the same way."""
    if settings.policy_path is None:
        return None
    try:
        return load_policy(settings.policy_path)
    except PolicyError as err:
        raise InvalidInput("policy", str(err)) from err


def check_inventory_scope(settings: Settings, scope: frozenset[str] | None, name: str) -> None:
    """A caller scoped to clusters reads only the inventories those clusters may use."""
    if scope is None:
        return
    registry = settings.cluster_registry
    allowed = [registry.get(c).inventories for c in scope if c in registry]
    if not any(inventories is None or name in inventories for inventories in allowed):
        raise InvalidInput(
            "inventory",
            f"inventory '{name}' is not one that cluster(s) {', '.join(sorted(scope))} may use",
            Code.NOT_ALLOWED_FOR_CLUSTER,
        )


async def explain(
    settings: Settings,
    body: ExplainBody,
    clients: ClientProvider,
    scope: frozenset[str] | None = None,
) -> ExplainResult:
    if body.hosts is None:
        check_inventory_scope(settings, scope, body.inventory or "default")
    inp = await build_input(settings, body, clients)
    # The engine is pure CPU work; keep the event loop free for big inventories.
    decision = await asyncio.to_thread(place, inp)
    table = render_explanation(inp, decision)
    return ExplainResult(decision=decision.to_json(), summary=decision.summary, table=table)
