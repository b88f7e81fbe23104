"""The API under test: the real app over ASGI, on the session's real Temporal server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from temporalio.client import Client

from activities.notify import ReceiverConfig
from webhooks.signing import generate_secret
from worker.api import create_app
from worker.settings import Settings

LAB_INVENTORY = Path(__file__).resolve().parents[2] / "lab" / "inventory.yaml"


@pytest.fixture
def api_settings(task_queue: str, tmp_path: Path) -> Settings:
    return Settings(
        task_queue=task_queue,
        state_dir=tmp_path,
        inventories={"default": str(LAB_INVENTORY)},
        receivers={
            "upgradectrl": ReceiverConfig(
                url="http://127.0.0.1:9/webhooks", secrets=[SecretStr(generate_secret())]
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
