"""One measured run of the orchestration benchmark: a burst of spares or of minimal workflows.

Each run records its wall time and the CPU seconds the worker and the Temporal server spent,
so the numbers say where the time went, not only how much there was.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field

import httpx
import psutil
from orchestration_baseline import MINIMAL_WORKFLOW
from orchestration_history import create_vm_latencies, percentile
from orchestration_stack import BENCH_CLUSTERS, BIG_INVENTORY, TASK_QUEUE, BenchStack
from temporalio.common import WorkflowIDReusePolicy

from api.spare_start import request_hash
from contracts.spare import (
    MEMO_REQUEST_HASH,
    PREPARE_SPARE,
    ReleaseRequest,
    SpareRequest,
    SpareResult,
    start_search_attributes,
)

RELEASE_SIGNAL = "request_release"

READY_POLL_SECONDS = 0.5
POST_ATTEMPTS = 3


def _cpu(proc: psutil.Process) -> float:
    """User and system seconds, with those of its ended children (ansible-playbook runs)."""
    times = proc.cpu_times()
    return float(times.user + times.system + times.children_user + times.children_system)


@dataclass
class Run:
    """Wall and CPU seconds of one burst; latencies when it went through the API."""

    count: int
    wall: float = 0.0
    worker_cpu: float = 0.0
    server_cpu: float = 0.0
    # This process: the lab, the receiver, the API and the load itself.
    driver_cpu: float = 0.0
    latencies: list[float] = field(default_factory=list)
    failed: int = 0
    ids: list[str] = field(default_factory=list)
    # Through the API: when each POST left and its answer came back.
    posts: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def per_second(self) -> float:
        return self.count / self.wall if self.wall else 0.0

    def latency_ms(self, pct: int) -> float:
        return round(percentile(self.latencies, pct) * 1000, 1)


class Meter:
    """Wall clock and the two processes' CPU, from `start` to `stop`."""

    def __init__(self, stack: BenchStack, run: Run) -> None:
        self.stack, self.run = stack, run

    def __enter__(self) -> Meter:
        self.t0 = time.perf_counter()
        self.w0, self.s0 = _cpu(self.stack.worker), _cpu(self.stack.server)
        self.d0 = _cpu(psutil.Process())
        return self

    def __exit__(self, *exc: object) -> None:
        self.run.wall = time.perf_counter() - self.t0
        self.run.worker_cpu = _cpu(self.stack.worker) - self.w0
        self.run.server_cpu = _cpu(self.stack.server) - self.s0
        self.run.driver_cpu = _cpu(psutil.Process()) - self.d0


def tag() -> str:
    return uuid.uuid4().hex[:6]


_unused_clusters = iter(BENCH_CLUSTERS)


def next_cluster() -> str:
    """A registered cluster no section of this run has used yet."""
    return next(_unused_clusters)


def spare_request(cluster: str, i: int) -> SpareRequest:
    return SpareRequest(
        request_id=f"s{i}",
        cluster=cluster,
        inventory=BIG_INVENTORY,
        cpu=2,
        memory_mb=2048,
    )


async def _finish(stack: BenchStack, spare_id: str) -> bool:
    try:
        await stack.client.get_workflow_handle(spare_id, result_type=SpareResult).result()
    except Exception:
        return False
    return True


async def spares_via_client(stack: BenchStack, count: int) -> Run:
    """Start with the release signal attached: prepare, Ready, release, with no polling."""
    cluster, run = next_cluster(), Run(count)

    async def one(i: int) -> bool:
        req = spare_request(cluster, i)
        run.ids.append(req.spare_id)
        await stack.client.start_workflow(
            PREPARE_SPARE,
            req,
            id=req.spare_id,
            task_queue=TASK_QUEUE,
            # As the API starts a spare (POST /spare/prepare): its first search attributes, the
            # request's hash in the memo, and no reuse of an ended spare's id.
            search_attributes=start_search_attributes(req),
            memo={MEMO_REQUEST_HASH: request_hash(req)},
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            start_signal=RELEASE_SIGNAL,
            start_signal_args=[ReleaseRequest(reason="benchmark")],
        )
        return await _finish(stack, req.spare_id)

    with Meter(stack, run):
        done = await asyncio.gather(*(one(i) for i in range(count)))
    run.failed = done.count(False)
    return run


async def prepare(stack: BenchStack, req: SpareRequest) -> None:
    """POST /spare/prepare; sent again if a kept-alive connection closed under it (the POST is
    idempotent by request_id: the same body finds the same spare)."""
    for attempt in range(POST_ATTEMPTS):
        try:
            answer = await stack.http.post(
                f"{stack.api_url}/spare/prepare", json=req.model_dump(mode="json")
            )
        except httpx.TransportError:
            if attempt == POST_ATTEMPTS - 1:
                raise
            continue
        answer.raise_for_status()
        return


async def spares_via_api(stack: BenchStack, count: int) -> Run:
    """POST /spare/prepare for each, then the release signal; latency read from histories."""
    cluster, run = next_cluster(), Run(count)
    sent_at: dict[str, float] = {}

    async def one(i: int) -> bool:
        req = spare_request(cluster, i)
        sent_at[req.spare_id] = time.time()
        await prepare(stack, req)
        run.posts[req.spare_id] = (sent_at[req.spare_id], time.time())
        handle = stack.client.get_workflow_handle(req.spare_id)
        await handle.signal(RELEASE_SIGNAL, ReleaseRequest(reason="benchmark"))
        return await _finish(stack, req.spare_id)

    with Meter(stack, run):
        done = await asyncio.gather(*(one(i) for i in range(count)))
    run.failed = done.count(False)
    run.latencies = await create_vm_latencies(stack.client, sent_at)
    return run


async def minimal_workflows(stack: BenchStack, count: int, steps: int) -> Run:
    prefix, run = f"minimal-{tag()}", Run(count)

    async def one(i: int) -> bool:
        run.ids.append(f"{prefix}-{i}")
        handle = await stack.client.start_workflow(
            MINIMAL_WORKFLOW, steps, id=f"{prefix}-{i}", task_queue=TASK_QUEUE, result_type=int
        )
        return await handle.result() == steps

    with Meter(stack, run):
        done = await asyncio.gather(*(one(i) for i in range(count)))
    run.failed = done.count(False)
    return run


async def hold_spares(stack: BenchStack, count: int) -> tuple[str, list[str]]:
    """Start `count` spares and return once all are Ready (held until released)."""
    cluster = next_cluster()
    requests = [spare_request(cluster, i) for i in range(count)]
    await asyncio.gather(
        *(
            stack.client.start_workflow(
                PREPARE_SPARE,
                r,
                id=r.spare_id,
                task_queue=TASK_QUEUE,
                search_attributes=start_search_attributes(r),
            )
            for r in requests
        )
    )
    query = f"VirtflowCluster = '{cluster}' AND VirtflowPhase = 'ready'"
    while (await stack.client.count_workflows(query)).count < count:
        await asyncio.sleep(READY_POLL_SECONDS)
    return cluster, [r.spare_id for r in requests]


async def release_all(stack: BenchStack, spare_ids: list[str]) -> int:
    """Release every spare; the number that failed to end released."""

    async def one(spare_id: str) -> bool:
        handle = stack.client.get_workflow_handle(spare_id)
        await handle.signal(RELEASE_SIGNAL, ReleaseRequest(reason="benchmark"))
        return await _finish(stack, spare_id)

    done = await asyncio.gather(*(one(s) for s in spare_ids))
    return done.count(False)
