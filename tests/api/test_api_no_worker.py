"""Without a worker, every call that needs one answers 503 `temporal_unavailable` with
Retry-After, on the session's real Temporal server: at once when no worker polls the task
queue, after the bounded RPC timeout when the worker left a moment ago. About 4 s.
"""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import httpx
import pytest
from temporalio import workflow
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from api import temporal_calls
from api.errors import TemporalUnavailable
from api.temporal_client import is_no_worker
from api.workers import why_no_worker
from contracts.spare import (
    PREPARE_SPARE,
    RELEASE_UPDATE,
    STATUS_QUERY,
    Phase,
    ReleaseRequest,
    SpareRequest,
    SpareStatus,
)
from tests.api.api_helpers import spare_body
from tests.helpers import assert_eventually, new_worker


def unavailable(answer: httpx.Response) -> str:
    """The problem's detail, once it is checked to be a 503 a client can retry."""
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"].isdigit()
    problem = answer.json()
    assert problem["code"] == "temporal_unavailable"
    detail: str = problem["detail"]
    return detail


async def test_with_no_worker_on_the_queue_reads_and_writes_that_need_one_are_503(
    api: httpx.AsyncClient, task_queue: str
) -> None:
    # A start needs no worker: the spare waits, durably, for one.
    spare_id = (await api.post("/v1/spares", json=spare_body())).json()["spare_id"]
    no_worker = f"no virtflow worker is polling task queue '{task_queue}' (none seen)"

    assert no_worker in unavailable(await api.get(f"/v1/spares/{spare_id}"))
    assert no_worker in unavailable(await api.post(f"/v1/spares/{spare_id}/release", json={}))
    assert no_worker in unavailable(await api.delete(f"/v1/spares/{spare_id}"))
    # count > 1 reserves every member through the ledger, which only a worker runs.
    assert no_worker in unavailable(await api.post("/v1/spares", json=spare_body(count=2)))
    task = await api.post("/schedule", json={"requested_cpu": 1, "requested_memory": 512})
    assert no_worker in unavailable(await api.get(f"/result/{task.json()['task_id']}"))
    # Visibility answers without a worker.
    assert (await api.get("/v1/spares")).status_code == 200


@workflow.defn(name=PREPARE_SPARE, sandboxed=False)  # this module imports the API
class HeldSpare:
    """Stand-in for PrepareSpare: Ready at once, answers the status query and the release."""

    def __init__(self) -> None:
        self.status: SpareStatus | None = None
        self.released = False

    @workflow.run
    async def run(self, request: SpareRequest) -> None:
        status = SpareStatus(spare_id=request.spare_id, cluster=request.cluster, phase=Phase.READY)
        self.status = status
        await workflow.wait_condition(lambda: self.released)

    @workflow.query(name=STATUS_QUERY)
    def current(self) -> SpareStatus:
        assert self.status is not None
        return self.status

    @workflow.update(name=RELEASE_UPDATE)
    async def release(self, request: ReleaseRequest) -> SpareStatus:
        assert self.status is not None
        self.status = self.status.model_copy(update={"phase": Phase.RELEASED})
        self.released = True
        return self.status


async def test_a_worker_that_just_left_gives_503_after_the_bounded_timeout(
    api: httpx.AsyncClient, client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with new_worker(client, HeldSpare, task_queue=task_queue):
        spare_id = (await api.post("/v1/spares", json=spare_body())).json()["spare_id"]

        async def answered_by_the_worker() -> None:
            # Until the server has seen the new worker's first poll, the API says none runs.
            seen = await api.get(f"/v1/spares/{spare_id}")
            assert (seen.status_code, seen.json().get("phase")) == (200, "ready"), seen.text

        await assert_eventually(answered_by_the_worker)
    # Shorter than the defaults, so that the test is quick once there is nobody to answer.
    monkeypatch.setattr(temporal_calls, "QUERY_TIMEOUT", timedelta(seconds=1))
    monkeypatch.setattr(temporal_calls, "UPDATE_ACCEPT_TIMEOUT", timedelta(seconds=1))
    # The server still remembers the worker's last poll: the call itself times out.
    assert "no virtflow worker answered" in unavailable(await api.get(f"/v1/spares/{spare_id}"))
    released = unavailable(await api.post(f"/v1/spares/{spare_id}/release", json={}))
    assert f"no virtflow worker accepted the release of {spare_id}" in released


@pytest.mark.parametrize(
    ("status", "message", "no_worker"),
    [
        (RPCStatusCode.CANCELLED, "Timeout expired", True),
        (RPCStatusCode.DEADLINE_EXCEEDED, "query timed out before a worker could process it", True),
        (RPCStatusCode.FAILED_PRECONDITION, "no poller seen for task queue recently", True),
        (RPCStatusCode.DEADLINE_EXCEEDED, "context deadline exceeded", False),
        (RPCStatusCode.FAILED_PRECONDITION, "workflow execution already completed", False),
    ],
)
def test_whichever_deadline_passes_first_a_call_nobody_took_up_reads_as_no_worker(
    status: RPCStatusCode, message: str, no_worker: bool
) -> None:
    assert is_no_worker(RPCError(message, status, b"")) is no_worker


@pytest.mark.parametrize(
    ("status", "unanswered"),
    [
        (RPCStatusCode.CANCELLED, True),
        (RPCStatusCode.UNAVAILABLE, True),
        (RPCStatusCode.PERMISSION_DENIED, False),
    ],
)
async def test_a_describe_the_engine_did_not_answer_is_503_not_the_engines_error(
    status: RPCStatusCode, unanswered: bool
) -> None:
    class Refusing:
        async def describe_task_queue(self, *_: object, **__: object) -> None:
            raise RPCError("operation was canceled", status, b"")

    client = SimpleNamespace(namespace="default", workflow_service=Refusing())
    asking = why_no_worker(client, "virtflow")  # type: ignore[arg-type]
    if unanswered:
        with pytest.raises(TemporalUnavailable):
            await asking
    else:
        with pytest.raises(RPCError):
            await asking
