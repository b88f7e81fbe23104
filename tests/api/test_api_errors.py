"""Every failure a caller can meet has a status code: 404, 409, 503, never a 500."""

from __future__ import annotations

import socket
import uuid

import httpx
from temporalio.client import Client

from runtime.settings import Settings
from tests.api.api_helpers import asgi_client, spare_body


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_temporal_unreachable_is_503_json_and_not_ready(api_settings: Settings) -> None:
    settings = api_settings.model_copy(update={"temporal_address": f"127.0.0.1:{closed_port()}"})
    async with asgi_client(settings, None) as api:
        answer = await api.post("/spare/prepare", json=spare_body())
        assert answer.status_code == 503
        assert answer.headers["retry-after"].isdigit()
        assert answer.json()["code"] == "temporal_unavailable"
        assert (await api.get("/spare/spare-lab-x")).status_code == 503
        ready = await api.get("/readyz")
        assert ready.status_code == 503 and ready.headers["retry-after"].isdigit()
        assert ready.json()["code"] == "temporal_unavailable"
        assert (await api.get("/healthz")).json() == {"status": "ok"}


async def test_ready_when_temporal_answers(api: httpx.AsyncClient) -> None:
    answer = await api.get("/readyz")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ready"}


async def test_unknown_spares_are_404(api: httpx.AsyncClient) -> None:
    missing = f"spare-lab-{uuid.uuid4().hex[:8]}"
    assert (await api.get(f"/spare/{missing}")).status_code == 404
    assert (await api.post(f"/spare/{missing}/release", json={})).status_code == 404
    assert (await api.delete(f"/spare/{missing}")).status_code == 404


async def test_a_workflow_that_is_not_a_spare_is_404(
    api: httpx.AsyncClient, client: Client, task_queue: str
) -> None:
    other = f"not-a-spare-{uuid.uuid4().hex[:8]}"
    handle = await client.start_workflow("SomethingElse", id=other, task_queue=task_queue)
    assert (await api.get(f"/spare/{other}")).status_code == 404
    assert (await api.delete(f"/spare/{other}")).status_code == 404
    await handle.terminate("test over")


async def test_a_closed_spare_cannot_be_released_or_cancelled(
    api: httpx.AsyncClient, client: Client
) -> None:
    body = spare_body()
    spare_id = (await api.post("/spare/prepare", json=body)).json()["spare_id"]
    await client.get_workflow_handle(spare_id).terminate("test over")
    release = await api.post(f"/spare/{spare_id}/release", json={"reason": "done"})
    assert release.status_code == 409
    assert release.json()["code"] == "spare_ended"
    assert (
        release.json()["detail"] == f"spare {spare_id} has ended (terminated), nothing to release"
    )
    cancel = await api.delete(f"/spare/{spare_id}")
    assert (cancel.status_code, cancel.json()["code"]) == (409, "spare_ended")


async def test_openapi_documents_the_routes(api: httpx.AsyncClient) -> None:
    paths = (await api.get("/openapi.json")).json()["paths"]
    assert {"/spare/prepare", "/spare/{spare_id}", "/spare/{spare_id}/release"} <= set(paths)
    assert "/placement/explain" in paths
