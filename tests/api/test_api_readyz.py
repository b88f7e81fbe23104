"""GET /readyz: ready only when Temporal answers and every configured inventory is readable."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from runtime.settings import Settings
from tests.api.api_helpers import asgi_client, spare_body
from tests.api.test_api_errors import closed_port


async def test_an_unreadable_inventory_makes_the_api_not_ready(
    api_settings: Settings, client: Client, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("hosts: nope\n")
    inventories = {
        **api_settings.inventories,
        "gone": f"http://127.0.0.1:{closed_port()}/inventory",
        "broken": str(broken),
    }
    settings = api_settings.model_copy(update={"inventories": inventories})
    async with asgi_client(settings, client) as api:
        answer = await api.get("/readyz")
    assert answer.status_code == 503
    assert answer.headers["retry-after"].isdigit()
    body = answer.json()
    assert (body["status"], body["code"]) == (503, "inventory_unavailable")
    assert set(body["inventories"]) == {"gone", "broken"}
    assert body["inventories"]["broken"].endswith("expected a 'hosts' list")
    assert "cannot connect" in body["inventories"]["gone"]


async def test_the_new_routes_answer_503_when_temporal_is_down(api_settings: Settings) -> None:
    settings = api_settings.model_copy(update={"temporal_address": f"127.0.0.1:{closed_port()}"})
    async with asgi_client(settings, None) as api:
        answers = [
            await api.get("/spares"),
            await api.post("/schedule", json={"requested_cpu": 1, "requested_memory": 1}),
            await api.get("/result/0123456789abcdef"),
            await api.post("/spare/prepare", json=spare_body(count=2)),
        ]
    for answer in answers:
        assert answer.status_code == 503, answer.text
        assert answer.headers["retry-after"].isdigit()
        assert answer.json()["code"] == "temporal_unavailable"
        assert answer.json()["title"] == "Temporal unavailable"
