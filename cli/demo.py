"""`virtflow demo`: provision and release one spare end to end on the lab, then exit.

It uses only what an upgrade controller has: the HTTP API, through the typed client generated
from openapi.json, and the webhooks it receives. It runs on its own state dir and free ports,
so it works next to a running `virtflow dev`.
"""

from __future__ import annotations

import asyncio
import shutil
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
from rich.console import Console

from runtime.settings import Settings
from virtflow_client import AuthenticatedClient
from virtflow_client.api.spares import get_spare, prepare_spare, release_spare
from virtflow_client.models import (
    PrepareAccepted,
    PrepareBody,
    Problem,
    ReleaseRequest,
    SpareStatus,
    SpareView,
)
from virtflow_client.types import Response

from .dev import LAB_RECEIVER, free_ports, lab_stack, on_signals

DEMO_TIMEOUT_SECONDS = 300.0
POLL_SECONDS = 0.5
# A short kubelet delay keeps the demo quick while still showing the wait for Ready.
KUBELET_READY_DELAY = 1.5
TERMINAL_FAILURES = {"failed", "cancelled", "compensating"}


T = TypeVar("T")


class DemoFailed(Exception):
    pass


def _expect(response: Response[Any], expected: type[T], what: str) -> T:
    if isinstance(response.parsed, expected):
        return response.parsed
    if isinstance(response.parsed, Problem):
        problem = response.parsed
        raise DemoFailed(f"{what} answered {problem.status} {problem.code}: {problem.detail}")
    raise DemoFailed(f"{what} answered {response.status_code}: {response.content[:300]!r}")


class Demo:
    """The demo's steps; `stage` names what it waits for, so a timeout can say where."""

    def __init__(self, api: AuthenticatedClient, receiver: httpx.AsyncClient, console: Console):
        self.api = api
        self.receiver = receiver
        self.console = console
        self.stage = "starting"
        self._shown_steps = 0
        self._shown_waiting: list[str] = []

    async def _until(self, check: Callable[[], Awaitable[Any]]) -> Any:
        """Poll `check` until it returns something truthy (the overall timeout bounds it)."""
        while True:
            found = await check()
            if found:
                return found
            await asyncio.sleep(POLL_SECONDS)

    def _show(self, status: dict[str, Any]) -> None:
        steps = status.get("steps", [])
        for step in steps[self._shown_steps :]:
            detail = f" - {step['detail']}" if step.get("detail") else ""
            self.console.print(f"  [cyan]{step['phase']:<17}[/]{detail}")
        self._shown_steps = len(steps)
        waiting = status.get("waiting_for") or []
        if waiting and waiting != self._shown_waiting:
            self.console.print(f"  {'':<17}waiting for: {', '.join(waiting)}")
        self._shown_waiting = waiting

    async def _status(self, spare_id: str) -> dict[str, Any]:
        response = await get_spare.asyncio_detailed(spare_id, client=self.api)
        status = _expect(response, SpareView, f"GET /v1/spares/{spare_id}").to_dict()
        self._show(status)
        return status

    async def _follow(self, spare_id: str, goal: str) -> dict[str, Any]:
        async def reached() -> dict[str, Any] | None:
            status = await self._status(spare_id)
            if status["phase"] == goal:
                return status
            if status["phase"] in TERMINAL_FAILURES:
                raise DemoFailed(f"spare {spare_id} {status['phase']}: {status.get('error')}")
            return None

        result: dict[str, Any] = await self._until(reached)
        return result

    async def _event(self, spare_id: str, event_type: str) -> dict[str, Any]:
        async def received() -> dict[str, Any] | None:
            response = await self.receiver.get(
                "/events", params={"spare_id": spare_id, "type": event_type}
            )
            response.raise_for_status()
            events: list[dict[str, Any]] = response.json()
            return events[0] if events else None

        event: dict[str, Any] = await self._until(received)
        self.console.print(f"  [green]webhook[/] {event_type} received and verified")
        return event

    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        self.stage = "POST /v1/spares"
        response = await prepare_spare.asyncio_detailed(
            client=self.api, body=PrepareBody.from_dict(request)
        )
        accepted = _expect(response, PrepareAccepted, "POST /v1/spares")
        spare_id = accepted.spare_id
        self.console.print(
            f"[bold]spare {spare_id}[/] accepted; history at {accepted.ui_url}", soft_wrap=True
        )

        self.stage = "the spare to become Ready"
        ready = await self._follow(spare_id, "ready")
        self.stage = "the spare.ready webhook"
        await self._event(spare_id, "spare.ready")

        self.stage = "POST /v1/spares/{id}/release"
        released = await release_spare.asyncio_detailed(
            spare_id, client=self.api, body=ReleaseRequest(reason="demo finished")
        )
        _expect(released, SpareStatus, "release")
        self.stage = "the spare to be released"
        await self._follow(spare_id, "released")
        self.stage = "the spare.released webhook"
        await self._event(spare_id, "spare.released")
        return {"spare_id": spare_id, "ui_url": accepted.ui_url, "ready": ready}


async def run_demo(settings: Settings, console: Console) -> int:
    """0 when one spare went through prepare -> ready -> release; 1 with the reason otherwise."""
    state_dir = settings.state_dir / "demo"
    # A fresh lab each time: the demo shows one spare, not the leftovers of the last run.
    shutil.rmtree(state_dir, ignore_errors=True)
    ports = free_ports()
    request = {
        "request_id": f"demo-{uuid.uuid4().hex[:6]}",
        "cluster": "lab",
        "cpu": 2,
        "memory_mb": 4096,
        "receivers": [LAB_RECEIVER],
    }
    started = time.monotonic()
    demo: Demo | None = None
    main = asyncio.current_task()
    if main is not None:
        on_signals(main.cancel)  # unwinds the stack: the lab and Temporal stop cleanly
    try:
        async with asyncio.timeout(DEMO_TIMEOUT_SECONDS):
            console.print(f"starting the lab in {state_dir} ...")
            async with (
                lab_stack(settings, ports, state_dir, KUBELET_READY_DELAY) as running,
                # The lab API has authentication off: no token, no Authorization value.
                AuthenticatedClient(
                    base_url=running.api_url, token="", prefix="", timeout=httpx.Timeout(30)
                ) as api,
                httpx.AsyncClient(base_url=running.receiver_url, timeout=30) as receiver,
            ):
                console.print(
                    f"lab up: API {running.api_url}, Temporal {running.settings.temporal_address}"
                )
                for name, cluster in running.settings.cluster_registry.items():
                    console.print(
                        f"  cluster {name}: kubectl --kubeconfig {cluster.kubeconfig} get nodes",
                        soft_wrap=True,
                    )
                demo = Demo(api, receiver, console)
                summary = await demo.run(request)
    except asyncio.CancelledError:
        console.print("[red]demo interrupted[/]")
        return 1
    except TimeoutError:
        where = demo.stage if demo else "the lab to start"
        console.print(f"[red]demo failed:[/] timed out after 5 minutes waiting for {where}")
        return 1
    except (DemoFailed, httpx.HTTPError, RuntimeError, OSError) as err:
        console.print(f"[red]demo failed:[/] {err}")
        return 1
    ready = summary["ready"]
    vm = ready.get("vm") or {}
    console.print(
        "\n[bold green]demo passed[/] in "
        f"{time.monotonic() - started:.1f} s: spare {summary['spare_id']} was placed on "
        f"{ready.get('host')} (vmid {ready.get('vmid') or vm.get('vmid')}), joined as a Ready node"
        f"{' at ' + str(vm.get('ip')) if vm.get('ip') else ''}, was announced by a signed "
        "spare.ready webhook, and was released (spare.released).",
        soft_wrap=True,
    )
    return 0
