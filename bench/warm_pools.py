"""What a warm pool buys: `POST /v1/spares` to `spare.ready` at the receiver, warm hit vs cold.

On the lab: a Temporal dev server (SQLite file, as `virtflow dev`), the lab Kubernetes API and
hypervisor (its kubelet marks a Node Ready `--ready-delay` seconds after the VM boots), the
real lab playbook through ansible-runner, the reference receiver, a worker with one warm pool
and the HTTP API served on loopback. Spares are asked for one at a time: `--spares` cold ones
(a shape no pool keeps), then `--spares` warm hits (the pool's shape; the pool refills behind
each, and the next request waits until the pool is full again, so each one is a hit). The time
is the receiver's own `received_at` of `spare.ready` minus the moment the POST was sent.

    .venv/bin/python bench/warm_pools.py [--spares 10] [--ready-delay 5]

Prints one JSON object per measurement on stdout and p50/p95 per kind on stderr; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from statistics import median, quantiles
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from api.app import create_app  # noqa: E402
from cli.dev import TemporalDevServer, free_ports  # noqa: E402
from contracts.warm import POOL_QUERY, WarmPoolSpec, WarmPoolView  # noqa: E402
from contracts.warm import warm_pool_workflow_id as pool_id  # noqa: E402
from lab.hypervisor import load_inventory_file  # noqa: E402
from lab.stack import DEFAULT_INVENTORY, LabStack  # noqa: E402
from runtime.receivers import ReceiverConfig  # noqa: E402
from runtime.settings import Settings  # noqa: E402
from webhooks.receiver import create_receiver_app  # noqa: E402
from webhooks.serve import serve_app  # noqa: E402
from webhooks.signing import generate_secret  # noqa: E402
from worker.schedules import apply_warm_pools  # noqa: E402
from worker.worker import running_worker  # noqa: E402

POOL = "bench"
WARM = {"cpu": 2, "memory_mb": 2048}
COLD = {"cpu": 4, "memory_mb": 4096}
POLL_SECONDS = 0.01
WAIT_SECONDS = 300.0


async def until(check: Any, timeout: float = WAIT_SECONDS) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await check()
        if value:
            return value
        await asyncio.sleep(POLL_SECONDS)
    raise TimeoutError("waited too long")


async def one_spare(
    api: httpx.AsyncClient, receiver: httpx.AsyncClient, shape: dict[str, int]
) -> dict[str, Any]:
    body = {"request_id": f"b{uuid.uuid4().hex[:10]}", "cluster": "lab", **shape}
    sent = time.time()
    answer = await api.post("/v1/spares", json={**body, "ttl_seconds": 3600})
    answer.raise_for_status()
    accepted = answer.json()
    spare_id = accepted["spare_id"]

    async def ready() -> float | None:
        events = (await receiver.get("/events", params={"spare_id": spare_id})).json()
        arrived = [e["received_at"] for e in events if e["type"] == "spare.ready"]
        return arrived[0] if arrived else None

    at = await until(ready)
    await api.post(f"/v1/spares/{spare_id}/release", json={"reason": "bench"})
    return {
        "kind": "warm" if accepted.get("warm") else "cold",
        "spare_id": spare_id,
        "post_to_ready_seconds": round(at - sent, 4),
        "post_answer_seconds": round(answer.elapsed.total_seconds(), 4),
    }


async def main(spares: int, ready_delay: float) -> None:
    with tempfile.TemporaryDirectory(prefix="virtflow-warm-bench-") as tmp:
        state = Path(tmp)
        ports = free_ports()
        base = Settings(temporal_address=f"127.0.0.1:{ports.temporal}", state_dir=state)
        secret = generate_secret()
        async with contextlib.AsyncExitStack() as stack:
            server = TemporalDevServer(ports, state)
            stack.push_async_callback(server.stop)
            client = await server.start(base)
            lab = LabStack(load_inventory_file(DEFAULT_INVENTORY), ready_delay=ready_delay)
            stack.push_async_callback(lab.stop)
            await lab.start(state / "lab")
            receiver_url = await stack.enter_async_context(
                serve_app(create_receiver_app([secret], state / "receiver.sqlite"))
            )
            spec = WarmPoolSpec(name=POOL, cluster="lab", size=1, **WARM)
            settings = base.model_copy(
                update={
                    "inventories": {"default": f"{lab.hypervisor_url}/inventory"},
                    "kubeconfig": lab.kubeconfig,
                    "ansible_extravars": {"lab_hypervisor_url": lab.hypervisor_url},
                    "graceful_shutdown_seconds": 0,
                    "receivers": {
                        "upgradectrl": ReceiverConfig(
                            url=f"{receiver_url}/webhooks", secrets=[secret]
                        )
                    },
                    "warm_pools": [spec],
                }
            )
            await stack.enter_async_context(running_worker(settings, client))
            api_url = await stack.enter_async_context(
                serve_app(create_app(settings, client_factory=lambda: _same(client)))
            )
            api = await stack.enter_async_context(httpx.AsyncClient(base_url=api_url))
            receiver = await stack.enter_async_context(httpx.AsyncClient(base_url=receiver_url))
            await apply_warm_pools(client, settings)
            pool = client.get_workflow_handle(pool_id(POOL))

            async def pool_full() -> bool:
                view = await pool.query(POOL_QUERY, result_type=WarmPoolView)
                return view.ready == spec.size

            results = []
            for shape in (COLD, WARM):
                for _ in range(spares):
                    await until(pool_full)
                    result = await one_spare(api, receiver, shape)
                    print(json.dumps(result), flush=True)
                    results.append(result)
    for kind in ("cold", "warm"):
        times = sorted(r["post_to_ready_seconds"] for r in results if r["kind"] == kind)
        if not times:
            continue
        p95 = quantiles(times, n=20, method="inclusive")[-1] if len(times) >= 2 else times[0]
        print(
            f"{kind}: {len(times)} spares, POST -> spare.ready p50 {median(times):.3f} s, "
            f"p95 {p95:.3f} s (ready delay {ready_delay} s)",
            file=sys.stderr,
        )


async def _same(client: Any) -> Any:
    return client


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spares", type=int, default=10, help="cold spares, then warm hits")
    parser.add_argument(
        "--ready-delay", type=float, default=5.0, help="lab kubelet: boot to Ready, seconds"
    )
    args = parser.parse_args()
    asyncio.run(main(args.spares, args.ready_delay))
