"""The API under test: the real app over ASGI, on the session's real Temporal server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from temporalio.client import Client

from api.app import create_app
from lab.hypervisor import load_inventory_file
from runtime.receivers import ReceiverConfig
from runtime.settings import Settings
from tests.helpers import assert_eventually
from tests.known_secrets import WEBHOOK_SECRET
from tests.stack import Stack, running_stack
from webhooks.serve import serve_app

LAB_INVENTORY = Path(__file__).resolve().parents[2] / "lab" / "inventory.yaml"


@pytest.fixture
def api_settings(task_queue: str, tmp_path: Path) -> Settings:
    return Settings(
        task_queue=task_queue,
        state_dir=tmp_path,
        inventories={"default": str(LAB_INVENTORY)},
        receivers={
            "upgradectrl": ReceiverConfig(
                url="http://127.0.0.1:9/webhooks", secrets=[SecretStr(WEBHOOK_SECRET)]
            )
        },
    )


def asgi_client(settings: Settings, temporal: Client | None) -> httpx.AsyncClient:
    async def same_client() -> Client:
        assert temporal is not None
        return temporal

    app = create_app(settings, client_factory=same_client if temporal else None)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api")


@pytest.fixture
async def api(api_settings: Settings, client: Client) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(api_settings, client) as http:
        yield http


def spare_body(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "request_id": f"r{uuid.uuid4().hex[:10]}",
        "cluster": "lab",
        "cpu": 2,
        "memory_mb": 2048,
    }
    return {**body, **fields}


@dataclass
class LiveStack:
    """The API on a real worker, the lab and the reference receiver; `api` calls it in-process,
    `url` is the same app served over loopback HTTP (for the command line)."""

    api: httpx.AsyncClient
    stack: Stack
    url: str

    async def phase_becomes(self, spare_id: str, phase: str, timeout: float = 60) -> dict[str, Any]:
        async def check() -> dict[str, Any]:
            answer = await self.api.get(f"/spare/{spare_id}")
            assert answer.status_code == 200, answer.text
            status: dict[str, Any] = answer.json()
            if status["phase"] != phase and status["workflow_status"] != "running":
                pytest.fail(f"the spare ended {status['phase']}, not {phase}: {status['error']}")
            assert status["phase"] == phase, status
            return status

        return await assert_eventually(check, timeout=timeout)


@pytest.fixture
async def live(client: Client, task_queue: str, tmp_path: Path) -> AsyncIterator[LiveStack]:
    async with live_stack(client, task_queue, tmp_path) as stack:
        yield stack


@asynccontextmanager
async def live_stack(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    configure: Callable[[Settings], Settings] | None = None,
) -> AsyncIterator[LiveStack]:
    """The `live` stack; `configure` adjusts the settings of the worker and the API alike."""
    inventory_doc = load_inventory_file(LAB_INVENTORY)
    async with running_stack(
        client, task_queue, tmp_path, inventory_doc, configure=configure, provisioner="http"
    ) as stack:
        # The API starts spares on the settings' task queue: the test worker's own.
        settings = stack.settings.model_copy(update={"task_queue": task_queue})

        async def same_client() -> Client:
            return client

        served = create_app(settings, client_factory=same_client)
        async with asgi_client(settings, client) as api, serve_app(served) as url:
            yield LiveStack(api, stack, url)
