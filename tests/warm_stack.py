"""A stack with one warm pool, for the warm pool tests of the workflow, API and chaos suites."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from temporalio.client import Client

from contracts.warm import POOL_QUERY, WarmPoolSpec, WarmPoolView
from contracts.warm import warm_pool_workflow_id as pool_id
from runtime.settings import Settings
from tests.helpers import assert_eventually
from tests.stack import Stack, running_stack
from worker.schedules import apply_warm_pools

# The warm spares' shape: small, so a few hosts hold dozens.
SHAPE = {"cpu": 1, "memory_mb": 512}


def warm_site(hosts: int = 4, cpu_each: int = 16) -> dict[str, Any]:
    """General hosts with room for dozens of small spares, and one host of another pool with
    a label no warm spare's host has."""
    host = {
        "cpu_capacity": cpu_each,
        "cpu_allocated": 0,
        "cpu_allocation_ratio": 1.0,
        "memory_mb_capacity": 65536,
        "memory_mb_allocated": 0,
        "memory_allocation_ratio": 1.0,
    }
    site = [{"name": f"bm-{i:02d}", "pool": "general", **host} for i in range(hosts)]
    site.append({"name": "bm-99", "pool": "other", "labels": {"special": "yes"}, **host})
    return {"hosts": site}


def new_pool_name() -> str:
    return f"p{uuid.uuid4().hex[:8]}"


def with_warm_pool(name: str, size: int) -> Any:
    """A `configure` for running_stack: one warm pool of SHAPE in the stack's inventory."""

    def configure(settings: Settings) -> Settings:
        spec = WarmPoolSpec(
            name=name,
            cluster="lab",
            inventory=next(iter(settings.inventories)),
            pool="general",
            size=size,
            **SHAPE,
        )
        # The hypervisor's HTTP API, not a playbook per VM: provisioning is not the point here.
        return settings.model_copy(
            update={
                "warm_pools": [spec],
                "provisioner": "http",
                "hypervisor_api_url": settings.ansible_extravars["lab_hypervisor_url"],
            }
        )

    return configure


@contextlib.asynccontextmanager
async def warm_stack(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    name: str,
    size: int = 3,
    site: dict[str, Any] | None = None,
) -> AsyncIterator[Stack]:
    async with running_stack(
        client, task_queue, tmp_path, site or warm_site(), with_warm_pool(name, size)
    ) as running:
        yield running


async def pool_view(stack: Stack, name: str) -> WarmPoolView:
    handle = stack.client.get_workflow_handle(pool_id(name))
    return await handle.query(POOL_QUERY, result_type=WarmPoolView)


async def wait_pool(stack: Stack, name: str, ready: int, timeout: float = 60) -> WarmPoolView:
    async def filled() -> None:
        view = await pool_view(stack, name)
        assert view.ready == ready and view.coming_up == 0, view

    await assert_eventually(filled, timeout=timeout)
    return await pool_view(stack, name)


async def resize(stack: Stack, size: int) -> None:
    """The pool's size changed in the settings, and a worker started with them."""
    spec = stack.settings.warm_pools[0].model_copy(update={"size": size})
    stack.settings = stack.settings.model_copy(update={"warm_pools": [spec]})
    await apply_warm_pools(stack.client, stack.settings, stack.task_queue)
