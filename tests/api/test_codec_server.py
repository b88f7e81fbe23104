"""The codec server speaks Temporal's remote codec protocol behind its own tokens, and lets
only the web UI's origin call it from a browser."""

from __future__ import annotations

import json

import httpx
import pytest
from google.protobuf import json_format
from pydantic import SecretStr
from temporalio.api.common.v1 import Payload, Payloads

from api.codec_server import create_codec_app
from runtime.encryption import EncryptionCodec, new_key

TOKEN = "codec-tok-3c2b1a0f"
UI = "https://temporal-ui.example"
KEY = SecretStr(new_key())


def payloads_json(*payloads: Payload) -> str:
    return json_format.MessageToJson(Payloads(payloads=list(payloads)))


@pytest.fixture
def http() -> httpx.AsyncClient:
    app = create_codec_app(EncryptionCodec({"k1": KEY}, "k1"), [SecretStr(TOKEN)], [UI])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://codec")


async def test_encode_then_decode_round_trips_for_a_token_holder(http: httpx.AsyncClient) -> None:
    clear = Payload(metadata={"encoding": b"json/plain"}, data=b'{"host": "hv-1"}')
    auth = {"Authorization": f"Bearer {TOKEN}", "X-Namespace": "default"}
    encoded = await http.post("/encode", content=payloads_json(clear), headers=auth)
    assert encoded.status_code == 200
    sealed = json_format.Parse(encoded.text, Payloads())
    assert b"hv-1" not in sealed.payloads[0].data
    decoded = await http.post("/decode", content=encoded.text, headers=auth)
    assert decoded.status_code == 200
    assert json_format.Parse(decoded.text, Payloads()).payloads[0] == clear


@pytest.mark.parametrize("header", [None, "Bearer wrong-token", f"Basic {TOKEN}"])
async def test_without_a_valid_token_nothing_is_decoded(
    http: httpx.AsyncClient, header: str | None
) -> None:
    headers = {"Authorization": header} if header else {}
    answer = await http.post("/decode", content=payloads_json(), headers=headers)
    assert answer.status_code == 401
    assert answer.json()["code"] == "unauthenticated"


@pytest.mark.parametrize(
    ("body", "code", "said"),
    [
        ("not json", "bad_payloads", "payloads:"),
        (
            json.dumps(
                {
                    "payloads": [
                        {
                            "metadata": {
                                "encoding": "YmluYXJ5L2VuY3J5cHRlZA==",
                                "encryption-key-id": "azk=",
                            },
                            "data": "AAAA",
                        }
                    ]
                }
            ),
            "undecodable",
            "key 'k9', which is not among payload_keys",
        ),
    ],
)
async def test_bad_payloads_are_422_with_a_stable_code(
    http: httpx.AsyncClient, body: str, code: str, said: str
) -> None:
    answer = await http.post("/decode", content=body, headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 422
    assert answer.json()["code"] == code
    assert said in answer.json()["detail"]


@pytest.mark.parametrize(("origin", "allowed"), [(UI, True), ("https://elsewhere.example", False)])
async def test_only_the_ui_origin_passes_the_browser_preflight(
    http: httpx.AsyncClient, origin: str, allowed: bool
) -> None:
    answer = await http.options(
        "/decode",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type,x-namespace",
        },
    )
    assert (answer.headers.get("access-control-allow-origin") == origin) is allowed


async def test_probes_answer_without_a_token(http: httpx.AsyncClient) -> None:
    for path in ("/healthz", "/readyz"):
        assert (await http.get(path)).status_code == 200


async def test_no_route_of_the_codec_server_takes_an_api_token(http: httpx.AsyncClient) -> None:
    """Decoding shows every cluster's payloads: a cluster-scoped API token (or any API token)
    reaches none of it; the probes say only that the process is up. A new route fails here
    until it has a case."""
    app = http._transport.app  # type: ignore[attr-defined]
    routes = sorted(
        (method, route.path)
        for route in app.routes
        for method in (route.methods or {"(not HTTP)"})
        if method != "HEAD"
    )
    cases = {
        ("POST", "/encode"): 401,
        ("POST", "/decode"): 401,
        ("GET", "/healthz"): 200,
        ("GET", "/readyz"): 200,
    }
    assert routes == sorted(cases), "a codec server route without a case here"
    sealed = await http.post(
        "/encode",
        content=payloads_json(Payload(metadata={"encoding": b"json/plain"}, data=b'"prod-b"')),
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    for (method, path), status in cases.items():
        answer = await http.request(
            method, path, content=sealed.text, headers={"Authorization": "Bearer ctl-a-5f0c2e9b"}
        )
        assert answer.status_code == status, (method, path, answer.text)
        assert "prod-b" not in answer.text
