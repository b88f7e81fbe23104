"""Bearer tokens: none configured means the lab (open); otherwise each route checks the role."""

from __future__ import annotations

import uuid

import pytest
from pydantic import SecretStr
from temporalio.client import Client

from runtime.settings import Settings
from tests.api.api_helpers import asgi_client
from tests.known_secrets import CONTROLLER_TOKEN as CONTROLLER
from tests.known_secrets import OPERATOR_TOKEN as OPERATOR


@pytest.fixture
def secured(api_settings: Settings) -> Settings:
    tokens = {SecretStr(OPERATOR): "operator", SecretStr(CONTROLLER): "upgrade-controller"}
    return api_settings.model_copy(update={"api_tokens": tokens})


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_without_a_token_the_caller_is_refused(secured: Settings, client: Client) -> None:
    async with asgi_client(secured, client) as api:
        answer = await api.get("/spare/spare-lab-x")
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == "Bearer"
        assert (await api.get("/spare/spare-lab-x", headers=bearer("wrong"))).status_code == 401
        # Probes stay open: orchestrators call them without credentials.
        assert (await api.get("/healthz")).status_code == 200


async def test_roles_decide_who_may_cancel(secured: Settings, client: Client) -> None:
    missing = f"spare-lab-{uuid.uuid4().hex[:8]}"
    async with asgi_client(secured, client) as api:
        # 404 means the token passed and the lookup ran.
        assert (await api.get(f"/spare/{missing}", headers=bearer(CONTROLLER))).status_code == 404
        refused = await api.delete(f"/spare/{missing}", headers=bearer(CONTROLLER))
        assert refused.status_code == 403
        assert "upgrade-controller" in refused.json()["detail"]
        assert refused.json()["code"] == "forbidden"
        assert (await api.delete(f"/spare/{missing}", headers=bearer(OPERATOR))).status_code == 404


async def test_only_the_upgrade_controller_prepares_and_releases(
    secured: Settings, client: Client
) -> None:
    body = {"request_id": "r1", "cluster": "lab", "cpu": 2, "memory_mb": 2048}
    async with asgi_client(secured, client) as api:
        for method, path, payload in (
            ("POST", "/spare/prepare", body),
            ("POST", "/spare/spare-lab-r1/release", None),
            ("POST", "/schedule", {"requested_cpu": 1, "requested_memory": 1024}),
        ):
            refused = await api.request(method, path, json=payload, headers=bearer(OPERATOR))
            assert refused.status_code == 403, path
            assert refused.json()["detail"] == "role 'operator' may not do this"
        # The controller passes the role check: a missing spare is the next answer.
        missing = await api.post("/spare/spare-lab-none/release", headers=bearer(CONTROLLER))
        assert missing.status_code == 404


async def test_an_open_api_logs_that_auth_is_off(
    api_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="api.app"):
        async with asgi_client(api_settings, None):
            pass
    assert "API authentication disabled" in caplog.text
