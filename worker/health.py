"""The worker's `/healthz` and `/readyz`, for Kubernetes probes and compose health checks.

The worker serves no HTTP of its own otherwise (the SDK core serves `/metrics`), so a small
aiohttp server answers: `/healthz` while the process's event loop runs, `/readyz` while the
worker polls, Temporal answers a health check and (with Worker Versioning) some build of the
worker's deployment is current, so new workflows reach a worker; from SIGTERM on, `/readyz` is
503 while running activities finish.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from enum import StrEnum

from aiohttp import web
from temporalio.client import Client

# A probe that waits longer than this is a failed probe anyway.
CHECK_TIMEOUT_SECONDS = 3.0


class WorkerState(StrEnum):
    STARTING = "starting"
    POLLING = "polling"
    STOPPING = "stopping"


# Why new workflows would reach no worker (worker/versioning.py), or None.
RoutingCheck = Callable[[], Awaitable[str | None]]


async def _always_routed() -> None:
    return None


class WorkerHealth:
    def __init__(self, client: Client, routing: RoutingCheck = _always_routed) -> None:
        self.client = client
        self.routing = routing
        self.state = WorkerState.STARTING

    async def healthz(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "worker": self.state.value})

    async def readyz(self, request: web.Request) -> web.Response:
        if self.state is not WorkerState.POLLING:
            return web.json_response({"status": "unavailable", "worker": self.state}, status=503)
        try:
            async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
                healthy = await self.client.service_client.check_health()
                problem = await self.routing() if healthy else None
        except Exception as err:  # any failure to answer is "not ready", with the reason
            detail = f"Temporal did not answer: {type(err).__name__}: {err}"
            return web.json_response({"status": "unavailable", "detail": detail}, status=503)
        if not healthy:
            return web.json_response(
                {"status": "unavailable", "detail": "Temporal is not serving"}, status=503
            )
        if problem is not None:
            return web.json_response({"status": "unavailable", "detail": problem}, status=503)
        return web.json_response({"status": "ready"})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/healthz", self.healthz)
        app.router.add_get("/readyz", self.readyz)
        return app


@contextlib.asynccontextmanager
async def serving_health(health: WorkerHealth, host: str, port: int | None) -> AsyncIterator[None]:
    """Serve the probes while the block runs; nothing when no port is configured."""
    if port is None:
        yield
        return
    runner = web.AppRunner(health.app(), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        yield
    finally:
        await runner.cleanup()
