"""A burst of `POST /v1/spares` that all name one request: how fast the API admits it, and
whether every request gets an answer.

An upgrade controller that retries, or several replicas of one, can send the same request_id
many times at once, and a buggy one a different body under it. Half the requests carry body A,
half body B (another size): exactly one of them starts the spare, every request with its body
gets 202 and the same spare, every other one 409 `request_conflict`, and none is dropped.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field

import aiohttp
from orchestration_runs import RELEASE_SIGNAL, next_cluster, spare_request
from orchestration_stack import BenchStack
from temporalio.client import WorkflowHandle

from contracts.spare import ReleaseRequest, SpareResult


@dataclass
class AdmitRun:
    requests: int
    connections: int
    wall: float = 0.0
    answers: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    spare_ids: set[str] = field(default_factory=set)

    @property
    def per_second(self) -> float:
        return self.requests / self.wall if self.wall else 0.0


async def admit_burst(stack: BenchStack, requests: int, connections: int) -> AdmitRun:
    """The burst, sent with aiohttp: httpx's connection pool examines every queued request
    against every connection whenever one frees up, so with 1,000 requests queued on 200
    connections it measured itself (about 20 requests/s), not the API."""
    run = AdmitRun(requests, connections)
    first = spare_request(next_cluster(), 0)
    bodies = [
        first.model_dump(mode="json"),
        first.model_copy(update={"cpu": first.cpu * 2}).model_dump(mode="json"),
    ]
    connector = aiohttp.TCPConnector(limit=connections)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(stack.api_url, connector=connector, timeout=timeout) as http:

        async def one(i: int) -> None:
            try:
                async with http.post("/v1/spares", json=bodies[i % 2]) as answer:
                    body = await answer.json()
            except (aiohttp.ClientError, TimeoutError) as err:
                run.errors[type(err).__name__] += 1
                return
            code = body.get("code", "") if answer.status >= 400 else ""
            run.answers[f"{answer.status} {code}".strip()] += 1
            if answer.status == 202:
                run.spare_ids.add(body["spare_id"])

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(requests)))
        run.wall = time.perf_counter() - start
    # The spare the burst started goes away again.
    handle: WorkflowHandle[object, SpareResult] = stack.client.get_workflow_handle(
        first.spare_id, result_type=SpareResult
    )
    await handle.signal(RELEASE_SIGNAL, ReleaseRequest(reason="benchmark"))
    await handle.result()
    return run
