"""Dry-run placement: where would a VM go and why not elsewhere, creating nothing.

Shared by `POST /placement/explain` and `virtflow explain`. The body is the placement JSON form
(PLACEMENT.md); when it carries no hosts, the named (or default) inventory supplies them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field
from temporalio.exceptions import ApplicationError

from activities.inventory import read_inventory
from placement.engine import place
from placement.explain import render_explanation
from placement.models import PlacementInput
from runtime.settings import Settings

from .errors import Code, InvalidInput, InventoryUnavailable

# Fields an inventory snapshot supplies; a body gives either these or an inventory name.
_SNAPSHOT_FIELDS = ("hosts", "existing_vms", "used_vmids", "next_vmid")


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


class ExplainResult(BaseModel):
    decision: dict[str, Any] = Field(
        description="host, vmid, error, rejected (host -> reason), scores (host -> plugin -> score)"
    )
    summary: str
    table: str


def load_policy(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise InvalidInput("policy", f"{path} does not hold a mapping")
    return data


async def build_input(settings: Settings, body: ExplainBody) -> PlacementInput:
    """Merge the body with the inventory snapshot and the configured policy."""
    data = body.model_dump(exclude_none=True, exclude={"inventory"})
    if body.hosts is None:
        name = body.inventory or "default"
        spec = settings.inventories.get(name)
        if spec is None:
            known = ", ".join(sorted(settings.inventories)) or "none"
            raise InvalidInput(
                "inventory",
                f"unknown inventory '{name}' (configured: {known})",
                Code.UNKNOWN_INVENTORY,
            )
        try:
            snapshot = await read_inventory(spec)
        except ApplicationError as err:
            # The source's own retry decision tells a broken document from an outage.
            if err.non_retryable:
                raise InvalidInput("inventory", str(err)) from err
            raise InventoryUnavailable(str(err)) from err
        for key in _SNAPSHOT_FIELDS:
            if key in snapshot and key not in data:
                data[key] = snapshot[key]
    elif body.inventory is not None:
        raise InvalidInput("inventory", "give either hosts or an inventory name, not both")
    if "policy" not in data and settings.policy_path is not None:
        data["policy"] = load_policy(settings.policy_path)
    return PlacementInput.model_validate(data)


async def explain(settings: Settings, body: ExplainBody) -> ExplainResult:
    inp = await build_input(settings, body)
    # The engine is pure CPU work; keep the event loop free for big inventories.
    decision = await asyncio.to_thread(place, inp)
    table = render_explanation(inp, decision)
    return ExplainResult(decision=decision.to_json(), summary=decision.summary, table=table)
