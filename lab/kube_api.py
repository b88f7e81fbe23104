"""A loopback Kubernetes API for Nodes and Pods, so the product's real client and kubeconfig
have something honest to talk to when no cluster exists (the lab, the tests, the demo).

Runs uvicorn inside the caller's asyncio loop (`start`/`stop`) or in a thread of its own
(`start_in_thread`/`stop_thread`) for synchronous callers. Chaos knobs: `fail_next`,
`drop_watches`, `block_eviction`, `compact_history`.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import yaml

from lab.kube_app import build_app
from lab.kube_store import KubeStore, Obj
from webhooks.serve import EmbeddedServer

T = TypeVar("T")

PDB_BLOCKED = "lab.virtflow.io/pdb-blocked"


class KubeApiServer:
    def __init__(self, token: str | None = None, history_limit: int = 5000) -> None:
        self.store = KubeStore(history_limit)
        self.token = token or secrets.token_urlsafe(16)
        self.app = build_app(self)
        self._blocked: set[tuple[str, str]] = set()
        self._fail_lock = threading.Lock()
        self._fail_remaining = 0
        self._fail_status = 500
        self._server: EmbeddedServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("KubeApiServer is not started")
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError("KubeApiServer is not started")
        return self._loop

    async def start(self, port: int = 0) -> None:
        """Bind 127.0.0.1 ourselves (port 0 = any free port) so the port is known at once.

        The wait is bounded (uvicorn starts in milliseconds on loopback): a server that is
        not up within 10 s raises `ServerStartError` ("the lab Kubernetes API did not start").
        """
        server = EmbeddedServer(
            self.app,
            "127.0.0.1",
            port,
            name="the lab Kubernetes API",
            startup_timeout=10.0,
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=2,
        )
        self._loop = asyncio.get_running_loop()
        await server.start()
        self._server = server
        self._port = server.port

    async def stop(self) -> None:
        """End open watches cleanly first: uvicorn waits for in-flight responses on exit."""
        if self._server is None:
            return
        self.store.drop_subscriptions(abrupt=False)
        await self._server.stop()
        self._server = None

    async def __aenter__(self) -> KubeApiServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def start_in_thread(self, port: int = 0) -> str:
        """Serve from a background thread with its own loop; returns the URL once bound."""
        ready = threading.Event()
        failure: list[BaseException] = []

        async def main() -> None:
            try:
                await self.start(port)
            except BaseException as exc:
                failure.append(exc)
                raise
            finally:
                ready.set()
            assert self._server is not None
            await self._server.wait()

        self._thread = threading.Thread(
            target=lambda: asyncio.run(main()), name="lab-kube-api", daemon=True
        )
        self._thread.start()
        ready.wait(timeout=30)
        if failure or self._server is None:
            raise RuntimeError("the lab Kubernetes API did not start") from (
                failure[0] if failure else None
            )
        return self.url

    def stop_thread(self, timeout: float = 10) -> None:
        if self._thread is None:
            return
        self.loop.call_soon_threadsafe(self._begin_stop)
        self._thread.join(timeout)
        self._thread = None

    def _begin_stop(self) -> None:
        self.store.drop_subscriptions(abrupt=False)
        if self._server is not None:
            self._server.request_stop()

    async def run_in_loop(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run a coroutine in the server's loop, whichever loop or thread the caller is in."""
        if asyncio.get_running_loop() is self.loop:
            return await make()

        async def wrapped() -> T:
            return await make()

        future = asyncio.run_coroutine_threadsafe(wrapped(), self.loop)
        return await asyncio.wrap_future(future)

    def _in_loop(self, fn: Callable[[], Any]) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self._loop is None or running is self._loop:
            fn()
        else:
            self._loop.call_soon_threadsafe(fn)

    # -- client configuration ------------------------------------------------------------

    def write_kubeconfig(self, path: Path, context: str = "virtflow-lab") -> Path:
        """A normal kubeconfig (plain http on loopback, bearer token) any client can load."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": self.url}}],
            "users": [{"name": context, "user": {"token": self.token}}],
            "contexts": [
                {
                    "name": context,
                    "context": {"cluster": context, "user": context, "namespace": "default"},
                }
            ],
            "current-context": context,
            "preferences": {},
        }
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path

    # -- chaos knobs ---------------------------------------------------------------------

    def fail_next(self, n: int, status: int = 500) -> None:
        """The next `n` requests (any route) fail with `status` and a Status body."""
        with self._fail_lock:
            self._fail_remaining = n
            self._fail_status = status

    @property
    def failures_left(self) -> int:
        """Injected failures not yet served: 0 once clients have met them all."""
        with self._fail_lock:
            return self._fail_remaining

    def take_failure(self) -> int | None:
        with self._fail_lock:
            if self._fail_remaining <= 0:
                return None
            self._fail_remaining -= 1
            return self._fail_status

    def drop_watches(self, abrupt: bool = True) -> None:
        """Close every open watch; abrupt = cut mid-stream, as a crashed apiserver would."""
        self._in_loop(lambda: self.store.drop_subscriptions(abrupt))

    def compact_history(self) -> None:
        """Forget past events: a watch resuming from an old resourceVersion now gets 410."""
        self._in_loop(self.store.compact)

    def block_eviction(self, namespace: str, name: str) -> None:
        """Evictions of this pod answer 429, as if a PodDisruptionBudget forbade them."""
        self._blocked.add((namespace, name))

    def unblock_eviction(self, namespace: str, name: str) -> None:
        self._blocked.discard((namespace, name))

    def eviction_blocked(self, pod: Obj) -> bool:
        meta = pod.get("metadata", {})
        marks = {**(meta.get("labels") or {}), **(meta.get("annotations") or {})}
        return (meta.get("namespace", ""), meta.get("name", "")) in self._blocked or (
            marks.get(PDB_BLOCKED) == "true"
        )
