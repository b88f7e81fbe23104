"""A spare's whole life through the HTTP API, on a real worker, lab and receiver, driven by the
typed client generated from openapi.json (as an upgrade controller would code it)."""

from __future__ import annotations

from tests.api.api_helpers import LiveStack, spare_body
from tests.helpers import assert_eventually
from virtflow_client import AuthenticatedClient
from virtflow_client.api.spares import cancel_spare, get_spare, prepare_spare, release_spare
from virtflow_client.models import (
    CancelAccepted,
    Code,
    Phase,
    PrepareAccepted,
    PrepareBody,
    Problem,
    ReleaseRequest,
    SpareStatus,
    SpareView,
)


def _client(live: LiveStack) -> AuthenticatedClient:
    return AuthenticatedClient(base_url=live.url, token="", prefix="")  # the lab: no auth


async def test_prepare_follow_release_over_http(live: LiveStack) -> None:
    client = _client(live)
    body = spare_body(inventory=live.stack.inventory, receivers=["upgradectrl"])
    accepted = await prepare_spare.asyncio_detailed(client=client, body=PrepareBody.from_dict(body))
    assert accepted.status_code == 202 and isinstance(accepted.parsed, PrepareAccepted)
    spare_id = accepted.parsed.spare_id
    location = accepted.headers["location"]
    assert location == f"/v1/spares/{spare_id}"
    assert (await live.api.get(location)).json()["spare_id"] == spare_id

    await live.phase_becomes(spare_id, "ready")
    ready = await get_spare.asyncio(spare_id, client=client)
    assert isinstance(ready, SpareView)
    assert ready.phase == Phase.READY and ready.host
    assert ready.workflow_status == "running"
    assert ready.ui_url.endswith(f"/workflows/{spare_id}")
    assert isinstance(ready.steps, list) and ready.steps[-1].phase == Phase.READY

    async def ready_event() -> None:
        assert "spare.ready" in await live.stack.event_types(spare_id)

    await assert_eventually(ready_event)

    released = await release_spare.asyncio_detailed(
        spare_id, client=client, body=ReleaseRequest(reason="upgrade done")
    )
    assert released.status_code == 202 and isinstance(released.parsed, SpareStatus)
    assert released.headers["location"] == location
    assert released.parsed.spare_id == spare_id
    again = await release_spare.asyncio(spare_id, client=client, body=ReleaseRequest(reason="2"))
    assert isinstance(again, Problem) and (again.status, again.code) == (
        409,
        Code.ALREADY_RELEASED,
    )
    await live.phase_becomes(spare_id, "released")
    late = await release_spare.asyncio(spare_id, client=client, body=ReleaseRequest())
    stop = await cancel_spare.asyncio(spare_id, client=client)
    for answer in (late, stop):
        assert isinstance(answer, Problem) and answer.code == Code.ALREADY_RELEASED

    async def released_event() -> None:
        assert "spare.released" in await live.stack.event_types(spare_id)

    await assert_eventually(released_event)


async def test_release_before_ready_is_409_with_the_reason(live: LiveStack) -> None:
    client = _client(live)
    # The lab's GPU host has 4 GPUs, 2 in use: 4 fit the host but not now, so the spare waits.
    body = spare_body(
        inventory=live.stack.inventory,
        pool="gpu",
        gpu=4,
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}],
        wait_for_capacity=True,
        receivers=[],
    )
    accepted = await prepare_spare.asyncio(client=client, body=PrepareBody.from_dict(body))
    assert isinstance(accepted, PrepareAccepted)
    spare_id = accepted.spare_id
    await live.phase_becomes(spare_id, "waiting_capacity")
    answer = await release_spare.asyncio(spare_id, client=client, body=ReleaseRequest())
    assert isinstance(answer, Problem)
    assert (answer.status, answer.code) == (409, Code.SPARE_NOT_READY)
    assert "waiting_capacity" in answer.detail

    cancel = await cancel_spare.asyncio_detailed(spare_id, client=client)
    assert cancel.status_code == 202 and isinstance(cancel.parsed, CancelAccepted)
    await live.phase_becomes(spare_id, "cancelled")
