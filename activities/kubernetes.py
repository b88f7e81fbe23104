"""Kubernetes activities: wait for a Node to be Ready, cordon, drain, delete, list spares.

One lightkube AsyncClient per worker, built lazily from a kubeconfig (None = the in-cluster
service account, else `KUBECONFIG`, else `~/.kube/config`), so the same code talks to the lab
API and to a real cluster.
Connection failures and 5xx are plain exceptions (Temporal retries them); other 4xx except
404, 409, 410 and 429 (`_TOLERATED`: gone, exists, expired, throttled) are non-retryable
ApplicationErrors typed `Kubernetes<Reason>`.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, cast

import httpx2
import msgspec
from lightkube import ApiError, AsyncClient, ConfigError, KubeConfig
from lightkube.models.core_v1 import EventSource, ObjectReference
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Event, Node
from lightkube.types import PatchType
from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts import metrics
from contracts.drain import DrainNodeInput, DrainNodeResult, DrainOutcome, DrainPolicy
from contracts.kubernetes import (
    CheckNodeReadyInput,
    ClusterSparesInput,
    NodeAdoption,
    NodeHealthResult,
    NodeNameInput,
    NodeReadyResult,
    UnhealthySparesResult,
    WaitNodeReadyInput,
    WatchNodeHealthInput,
)
from contracts.spare import CLUSTER_LABEL, RELEASING_ANNOTATION, SPARE_LABEL

from .heartbeats import QuietHeartbeat, heartbeat_interval
from .kube_drain import drain_node
from .kube_health import NodeWatchHub, watch_node_health
from .node_conditions import health_problems, readiness_gaps

# The `source.component` of the Events virtflow records on its Nodes.
EVENT_SOURCE = "virtflow"
# Where a Pod's service account token, CA and namespace are mounted.
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
# The Event recorded on the Node after a drain: reason and type.
_DRAIN_EVENTS = {
    DrainOutcome.DRAINED: ("Drained", "Normal"),
    DrainOutcome.FORCED: ("DrainForced", "Warning"),
    DrainOutcome.BLOCKED: ("DrainBlocked", "Warning"),
}
# The first re-list after a failure; later ones back off up to the poll hint.
FIRST_RETRY_SECONDS = 0.1
# Codes a caller can act on (gone, exists, throttled, expired): never a permanent failure.
_TOLERATED = {404, 409, 410, 429}


class NodeAdopter(Protocol):
    """The site's side of a join (activities/vm_join.py): adopt a Ready Node, forget a spare."""

    async def adopt(self, node_name: str, adoption: NodeAdoption) -> None: ...

    async def forget(self, node_name: str) -> None: ...


def _status_code(exc: BaseException) -> int | None:
    if isinstance(exc, ApiError) and exc.status is not None and exc.status.code:
        return exc.status.code
    if isinstance(exc, httpx2.HTTPStatusError):
        return exc.response.status_code
    return None


def _permanent(exc: httpx2.HTTPStatusError) -> ApplicationError | None:
    """4xx the caller cannot fix by retrying (bad request, forbidden, invalid...)."""
    code = _status_code(exc)
    if code is None or not 400 <= code < 500 or code in _TOLERATED:
        return None
    reason = exc.status.reason if isinstance(exc, ApiError) and exc.status else None
    message = exc.status.message if isinstance(exc, ApiError) and exc.status else str(exc)
    return ApplicationError(
        f"Kubernetes API answered {code}: {message}",
        type=f"Kubernetes{reason or code}",
        non_retryable=True,
    )


@contextlib.contextmanager
def _classified(ignore: frozenset[int] = frozenset()) -> Iterator[None]:
    """Swallow the codes in `ignore`; turn permanent 4xx into non-retryable errors."""
    try:
        yield
    except httpx2.HTTPStatusError as exc:
        if _status_code(exc) in ignore:
            return
        if (permanent := _permanent(exc)) is not None:
            raise permanent from exc
        raise


class _Progress:
    """What is still missing; shared by the watcher and the heartbeat task."""

    def __init__(self) -> None:
        self.gaps = ["node not registered"]
        self.api_error: str | None = None
        self.beats = QuietHeartbeat()

    @property
    def missing(self) -> list[str]:
        extra = [f"kubernetes API unavailable: {self.api_error}"] if self.api_error else []
        return self.gaps + extra

    def observe(self, node: Node | None) -> bool:
        self.gaps = readiness_gaps(node)
        self.api_error = None
        self.report()
        return not self.gaps

    def report(self) -> None:
        self.beats.beat(self.missing)


def kube_config(kubeconfig: Path | None, service_account: Path = SERVICE_ACCOUNT_DIR) -> KubeConfig:
    """The named kubeconfig; unset: the Pod's service account when in a cluster, else the
    file `KUBECONFIG` names, else `~/.kube/config` (the order kubectl and client-go follow)."""
    if kubeconfig is not None:
        return KubeConfig.from_file(kubeconfig)
    return KubeConfig.from_env(service_account=service_account)


class KubernetesActivities:
    # A watch session is re-established from a fresh list this often, in case a
    # connection hangs half-open without an error.
    resync_seconds = 300

    def __init__(
        self,
        kubeconfig: Path | None,
        adopter: NodeAdopter | None = None,
        service_account: Path = SERVICE_ACCOUNT_DIR,
        drain_policy: DrainPolicy = DrainPolicy.FAIL,
    ) -> None:
        self._kubeconfig = kubeconfig
        self._service_account = service_account
        # The site's answer to a drain that cannot finish, unless the request says otherwise.
        self._drain_policy = drain_policy
        self._client: AsyncClient | None = None
        # Held spares' Nodes, watched once for the whole worker.
        self._hub = NodeWatchHub(self._kube, {SPARE_LABEL: "true"})
        self._hub.permanent = _permanent
        # Set where spares join from site templates (bootstrap tokens, labels, taints).
        self.adopter = adopter

    def _kube(self) -> AsyncClient:
        if self._client is None:
            try:
                config = kube_config(self._kubeconfig, self._service_account)
                self._client = AsyncClient(config=config)
            except (ConfigError, OSError) as exc:
                # A wrong kubeconfig does not heal by retrying: fail where operators look.
                raise ApplicationError(
                    f"cannot load Kubernetes configuration ({exc}): set kubeconfig "
                    "(VIRTFLOW_KUBECONFIG) or KUBECONFIG, or run in a Pod with a service account",
                    type="KubernetesConfigError",
                    non_retryable=True,
                ) from exc
        return self._client

    def client(self) -> AsyncClient:
        """The worker's one Kubernetes client (the site's join steps share it)."""
        return self._kube()

    async def close(self) -> None:
        self._hub.stop()
        if self._client is not None:
            await self._client.close()
            self._client = None

    @activity.defn
    async def wait_node_ready(self, inp: WaitNodeReadyInput) -> NodeReadyResult:
        """Never returns ready=True unless a Node object just observed has no gaps."""
        progress = _Progress()
        every = heartbeat_interval(inp.poll_hint_seconds)
        beat = asyncio.create_task(progress.beats.keep_beating(every, lambda: progress.missing))
        try:
            if inp.max_wait_seconds is None:
                await self._until_ready(inp, progress)
            else:
                try:
                    async with asyncio.timeout(inp.max_wait_seconds):
                        await self._until_ready(inp, progress)
                except TimeoutError:
                    return NodeReadyResult(
                        node_name=inp.node_name, ready=False, missing=progress.missing
                    )
        finally:
            beat.cancel()
        await self._adopt(inp.node_name, inp.adopt)
        return NodeReadyResult(node_name=inp.node_name, ready=True, missing=[])

    @activity.defn
    async def check_node_ready(self, inp: CheckNodeReadyInput) -> NodeReadyResult:
        """One look at the Node, without waiting: run as a local activity right after the VM
        is created, so a Node that is Ready by then needs no readiness probe."""
        with _classified():
            listing = self._kube().list(Node, fields={"metadata.name": inp.node_name})
            nodes = [node async for node in listing]
        gaps = readiness_gaps(nodes[0] if nodes else None)
        if not gaps:
            await self._adopt(inp.node_name, inp.adopt)
        return NodeReadyResult(node_name=inp.node_name, ready=not gaps, missing=gaps)

    async def _adopt(self, node_name: str, adoption: NodeAdoption | None) -> None:
        if self.adopter is not None and adoption is not None:
            with _classified():
                await self.adopter.adopt(node_name, adoption)

    async def _until_ready(self, inp: WaitNodeReadyInput, progress: _Progress) -> None:
        """List, then watch from the list's version; on any failure re-list after a backoff."""
        delay = FIRST_RETRY_SECONDS
        while True:
            try:
                if await self._watch_session(inp.node_name, progress):
                    return
                continue  # resync: re-list at once
            except httpx2.HTTPStatusError as exc:
                if (permanent := _permanent(exc)) is not None:
                    raise permanent from exc
                if _status_code(exc) == 410:
                    continue  # our version is too old: the re-list is the fix
                error = f"HTTP {_status_code(exc)}"
            except msgspec.ValidationError as exc:
                # A Node this client cannot decode will not decode next time either.
                raise ApplicationError(
                    f"cannot decode the Node from the Kubernetes API: {exc}",
                    type="KubernetesDecodeError",
                    non_retryable=True,
                ) from exc
            except (httpx2.HTTPError, OSError, ValueError) as exc:
                # Transport failures, dropped watches, a line cut mid-JSON: all transient.
                error = type(exc).__name__
            if progress.api_error is None:
                # The API answered since the last failure: a new outage backs off from the start.
                delay = FIRST_RETRY_SECONDS
            progress.api_error = error
            progress.report()
            await asyncio.sleep(delay)
            delay = min(delay * 2, inp.poll_hint_seconds)

    async def _watch_session(self, name: str, progress: _Progress) -> bool:
        """True once Ready; False when the session timed out and should be re-listed."""
        client = self._kube()
        listing = client.list(Node, fields={"metadata.name": name})
        nodes = [node async for node in listing]
        if progress.observe(nodes[0] if nodes else None):
            return True
        watch = cast(
            AsyncGenerator[tuple[str, Node], None],
            client.watch(
                Node,
                fields={"metadata.name": name},
                resource_version=listing.resourceVersion,
                server_timeout=self.resync_seconds,
            ),
        )
        try:
            async with asyncio.timeout(self.resync_seconds + 30), contextlib.aclosing(watch):
                async for event, node in watch:
                    if progress.observe(None if event == "DELETED" else node):
                        return True
        except TimeoutError:
            return False
        return False

    @activity.defn
    async def cordon_node(self, inp: NodeNameInput) -> None:
        """Idempotent; a Node that is already gone is as cordoned as it gets. The annotation
        ends the held spare's watch at once (activities/kube_health.py)."""
        cordon = {
            "metadata": {"annotations": {RELEASING_ANNOTATION: "true"}},
            "spec": {"unschedulable": True},
        }
        with _classified(ignore=frozenset({404})):
            await self._kube().patch(Node, inp.node_name, cordon, patch_type=PatchType.MERGE)

    @activity.defn
    async def drain_node(self, inp: DrainNodeInput) -> DrainNodeResult:
        """Evict every pod but DaemonSet and mirror pods and wait until they are gone; retry
        refusals until the timeout, then apply the drain policy (see activities/kube_drain)."""
        with _classified():
            result = await drain_node(self._kube(), inp, self._drain_policy)
        reason, kind = _DRAIN_EVENTS[result.outcome]
        await self._record_event(inp.node_name, reason, f"virtflow: {result.summary()}", kind)
        return result

    @activity.defn
    async def watch_node_health(self, inp: WatchNodeHealthInput) -> NodeHealthResult:
        """While a spare is held: return once its Node has been unhealthy for the configured
        time (or, with until="healthy", once it is healthy again). Heartbeats meanwhile;
        cancelled when the hold ends."""
        result = await watch_node_health(self._hub, inp)
        if not result.healthy:
            metrics.spare_unhealthy(activity.metric_meter())
            await self._record_event(
                inp.node_name,
                "SpareUnhealthy",
                f"virtflow: unhealthy for {inp.unhealthy_after_seconds:g} s: {result.reason}",
                "Warning",
            )
        return result

    @activity.defn
    async def count_unhealthy_spares(self, inp: ClusterSparesInput) -> UnhealthySparesResult:
        """The cluster's spare Nodes that are unhealthy right now (the max_unhealthy guard)."""
        with _classified():
            listing = self._kube().list(
                Node, labels={SPARE_LABEL: "true", CLUSTER_LABEL: inp.cluster}
            )
            nodes = [n async for n in listing]
        unhealthy = sorted(
            n.metadata.name for n in nodes if n.metadata and n.metadata.name and health_problems(n)
        )
        return UnhealthySparesResult(cluster=inp.cluster, total=len(nodes), unhealthy=unhealthy)

    async def _record_event(
        self, node_name: str, reason: str, message: str, kind: str = "Normal"
    ) -> None:
        """An Event on the Node, so `kubectl describe node` shows what virtflow did. Best
        effort: an Event that cannot be written never fails the step it describes."""
        now = datetime.now(UTC)
        event = Event(
            metadata=ObjectMeta(name=f"{node_name}.{uuid.uuid4().hex[:16]}", namespace="default"),
            involvedObject=ObjectReference(kind="Node", name=node_name, apiVersion="v1"),
            reason=reason,
            message=message[:1024],
            type=kind,
            source=EventSource(component=EVENT_SOURCE),
            firstTimestamp=now,
            lastTimestamp=now,
            count=1,
            reportingComponent=EVENT_SOURCE,
            reportingInstance=activity.info().activity_id if activity.in_activity() else "",
        )
        with contextlib.suppress(ApiError, httpx2.HTTPError, OSError):
            await self._kube().create(event)

    @activity.defn
    async def delete_node(self, inp: NodeNameInput) -> None:
        """Idempotent: 404 means an earlier attempt (or someone else) already did it."""
        with _classified(ignore=frozenset({404})):
            await self._kube().delete(Node, inp.node_name)
        if self.adopter is not None:
            # A spare that never became Ready still has its join token: it goes with the Node.
            with _classified():
                await self.adopter.forget(inp.node_name)

    @activity.defn
    async def list_spare_nodes(self) -> list[str]:
        """Nodes virtflow labelled as spares, for the orphan sweep."""
        with _classified():
            nodes = [n async for n in self._kube().list(Node, labels={SPARE_LABEL: "true"})]
        return sorted(n.metadata.name for n in nodes if n.metadata and n.metadata.name)
