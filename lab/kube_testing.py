"""Test helpers for the lab Kubernetes API: a started API + kubelet + kubeconfig in one
context manager, and a bounded poll for conditions that have no event to await."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from lab.kube_api import KubeApiServer
from lab.kubelet import Kubelet


@dataclass
class KubeLab:
    api: KubeApiServer
    kubelet: Kubelet
    kubeconfig: Path


@asynccontextmanager
async def kube_lab(directory: Path, ready_delay: float = 0.2) -> AsyncIterator[KubeLab]:
    """A fresh API server (own port, own store) and kubelet, stopped on exit."""
    api = KubeApiServer()
    await api.start()
    kubelet = Kubelet(api, ready_delay=ready_delay)
    try:
        yield KubeLab(api, kubelet, api.write_kubeconfig(directory / "kubeconfig"))
    finally:
        await kubelet.stop()
        await api.stop()


async def eventually(
    check: Callable[[], bool | Awaitable[bool]], timeout: float = 10, interval: float = 0.02
) -> None:
    """Poll `check` until it is true; fail after `timeout` seconds instead of hanging."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = check()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await asyncio.sleep(interval)
