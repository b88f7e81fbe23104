"""A loopback Kubernetes API over https, so the product's real client, an unmodified kubectl
and their kubeconfig have something honest to talk to when no cluster exists (the lab, the
tests, the demo).

Runs uvicorn inside the caller's asyncio loop (`start`/`stop`) or in a thread of its own
(`start_in_thread`/`stop_thread`) for synchronous callers. Chaos knobs: `fail_next`,
`drop_watches`, `block_eviction`, `compact_history`.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import secrets
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import yaml

from lab.kube_app import build_app, namespace_object
from lab.kube_auth import Authenticator
from lab.kube_pods import PodTerminator
from lab.kube_store import KubeError, KubeStore
from lab.kube_tls import LabCertificates, make_certificates
from webhooks.serve import EmbeddedServer

T = TypeVar("T")

# The label by which a `block_eviction` budget selects its one pod (the lab kubelet sets it).
POD_NAME_LABEL = "lab.virtflow.io/pod"
NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def block_budget_name(pod: str) -> str:
    return f"lab-block-{pod}"


class KubeApiServer:
    def __init__(self, token: str | None = None, history_limit: int = 5000) -> None:
        self.store = KubeStore(history_limit)
        self.auth = Authenticator(token or secrets.token_urlsafe(16), self.store)
        self.pods = PodTerminator(self.store)
        self.certificates: LabCertificates = make_certificates()
        self.app = build_app(self)
        for namespace in NAMESPACES:
            self.store.create("namespaces", "", namespace_object(namespace))
        self._fail_lock = threading.Lock()
        self._fail_remaining = 0
        self._fail_status = 500
        self._server: EmbeddedServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self.advertised_host = "127.0.0.1"
        # Every request it was sent, (method, path), the latest last: whose API a test saw.
        self.calls: collections.deque[tuple[str, str]] = collections.deque(maxlen=history_limit)

    def record(self, method: str, path: str) -> None:
        self.calls.append((method, path))

    @property
    def token(self) -> str:
        """The kubeconfig's bearer token; setting it rotates it (old clients get 401)."""
        return self.auth.token

    @token.setter
    def token(self, value: str) -> None:
        self.auth.token = value

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("KubeApiServer is not started")
        return self._port

    @property
    def url(self) -> str:
        return f"https://{self.advertised_host}:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        """The lab CA clients must trust (the kubeconfig carries it)."""
        return self.certificates.ca_pem

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError("KubeApiServer is not started")
        return self._loop

    async def start(
        self, port: int = 0, host: str = "127.0.0.1", advertised_host: str = "127.0.0.1"
    ) -> None:
        """Bind 127.0.0.1 ourselves (port 0 = any free port) so the port is known at once;
        `host` and `advertised_host` (one of the certificate's names, such as `kubernetes`)
        serve a container network instead.

        The wait is bounded (uvicorn starts in milliseconds on loopback): a server that is
        not up within 10 s raises `ServerStartError` ("the lab Kubernetes API did not start").
        uvicorn reads the certificate files once at start: they live only that long.
        """
        tls_dir = Path(tempfile.mkdtemp(prefix="virtflow-kube-tls-"))
        try:
            certfile, keyfile = self.certificates.write(tls_dir)
            server = EmbeddedServer(
                self.app,
                host,
                port,
                name="the lab Kubernetes API",
                startup_timeout=10.0,
                log_config=None,
                access_log=False,
                timeout_graceful_shutdown=2,
                ssl_certfile=str(certfile),
                ssl_keyfile=str(keyfile),
            )
            self._loop = asyncio.get_running_loop()
            await server.start()
        finally:
            shutil.rmtree(tls_dir, ignore_errors=True)
        self._server = server
        self._port = server.port
        self.advertised_host = advertised_host

    async def stop(self) -> None:
        """End open watches cleanly first: uvicorn waits for in-flight responses on exit."""
        if self._server is None:
            return
        self.store.drop_subscriptions(abrupt=False)
        self.pods.stop()
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
        self.pods.stop()
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
        """A normal kubeconfig (https with the lab CA inline, bearer token), written 0600."""
        cluster = {
            "server": self.url,
            "certificate-authority-data": base64.b64encode(self.ca_pem).decode(),
        }
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": cluster}],
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
        path.touch(mode=0o600)
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
        """A PodDisruptionBudget that allows no disruption of this one pod (selected by the
        lab's pod-name label): its evictions answer 429 naming the budget."""
        budget = {
            "metadata": {"name": block_budget_name(name), "namespace": namespace},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {POD_NAME_LABEL: name}}},
        }

        def create() -> None:
            with contextlib.suppress(KubeError):  # blocked already
                self.store.create("poddisruptionbudgets", namespace, budget)

        self._in_loop(create)

    def unblock_eviction(self, namespace: str, name: str) -> None:
        def delete() -> None:
            with contextlib.suppress(KubeError):  # not blocked
                self.store.delete("poddisruptionbudgets", namespace, block_budget_name(name))

        self._in_loop(delete)
