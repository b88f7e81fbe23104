"""Fixtures for the workflow tests: a whole stack per test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from lab.hypervisor import load_inventory_file
from tests.stack import LAB_INVENTORY, Provisioner, Stack, running_stack


@pytest.fixture
def inventory_doc() -> dict[str, Any]:
    """The lab site; a test class may override this fixture with its own hosts."""
    return load_inventory_file(LAB_INVENTORY)


@pytest.fixture
def provisioner() -> Provisioner:
    """The real playbook; a module whose point is not the VM's making overrides this with the
    lab hypervisor's API ("http"), which spares each spare two ansible-playbook runs."""
    return "ansible"


@pytest.fixture
async def stack(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    inventory_doc: dict[str, Any],
    provisioner: Provisioner,
) -> AsyncIterator[Stack]:
    async with running_stack(
        client, task_queue, tmp_path, inventory_doc, provisioner=provisioner
    ) as running:
        yield running
