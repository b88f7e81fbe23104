"""Kubernetes activities: wait for a Node to be Ready, cordon, drain, delete, list spares.

Every call goes to the spare's own cluster: one lightkube AsyncClient per registered cluster
(activities/kube_clusters.py), built on first use and rebuilt when its kubeconfig changes, so
the same code talks to the lab APIs and to real clusters. An input names its cluster; one that
does not (an orphan's release) is the cluster its Node's name, the spare id
`spare-<cluster>-<request_id>`, begins with. A cluster that stops answering holds up only the
calls to it, which say which cluster and since when.
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
from lightkube import ApiError, AsyncClient
from lightkube.models.core_v1 import EventSource, ObjectReference
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Event, Node
from lightkube.types import PatchType
from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts import metrics
from contracts.drain import DrainNodeInput, DrainNodeResult, DrainOutcome, DrainPolicy
from contracts.failures import Failure, kubernetes_refusal
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
from contracts.spare import CLUSTER_LABEL, RELEASING_ANNOTATION, SPARE_ID_PREFIX, SPARE_LABEL

from .heartbeats import QuietHeartbeat, heartbeat_interval
from .kube_clusters import SERVICE_ACCOUNT_DIR, ClusterClients, kube_config
from .kube_drain import drain_node
from .kube_health import NodeWatchHub, watch_node_health
from .node_conditions import health_problems, readiness_gaps

# The `source.component` of the Events virtflow records on its Nodes.
EVENT_SOURCE = "virtflow"
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

    async def adopt(self, cluster: str | None, node_name: str, adoption: NodeAdoption) -> None: ...

    async def forget(self, cluster: str | None, node_name: str) -> None: ...


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
        type=kubernetes_refusal(reason or code),
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


def _rotated(cluster: str | None, refusal: ApplicationError) -> ApplicationError:
    """A 401 to credentials that have changed since (or are being read again): retried."""
    return ApplicationError(
        f"{refusal.message}; cluster {cluster or ''}'s kubeconfig is read again and the call "
        "retried with it",
        type=Failure.KUBERNETES_CREDENTIALS_ROTATED,
    )


class _ReachabilityChanged(Exception):
    """A bounded probe ends early: the cluster's API stopped answering, or answered again,
    unlike what the spare's status says."""


class _Progress:
    """What is still missing; shared by the watcher and the heartbeat task."""

    def __init__(self) -> None:
        self.gaps = ["node not registered"]
        self.api_error: str | None = None
        self.beats = QuietHeartbeat()

    @property
    def missing(self) -> list[str]:
        extra = [self.api_error] if self.api_error else []
        return self.gaps + extra

    def observe(self, node: Node | None) -> bool:
        self.gaps = readiness_gaps(node)
        self.api_error = None
        self.report()
        return not self.gaps

    def report(self) -> None:
        self.beats.beat(self.missing)


__all__ = [
    "SERVICE_ACCOUNT_DIR",
    "ClusterClients",
    "DrainNodeInput",
    "DrainNodeResult",
    "KubernetesActivities",
    "kube_config",
]


class KubernetesActivities:
    # A watch session is re-established from a fresh list this often, in case a
    # connection hangs half-open without an error.
    resync_seconds = 300

    def __init__(
        self,
        clusters: ClusterClients | Path | None,
        adopter: NodeAdopter | None = None,
        service_account: Path = SERVICE_ACCOUNT_DIR,
        drain_policy: DrainPolicy = DrainPolicy.FAIL,
    ) -> None:
        # A bare kubeconfig (or None): one cluster, whatever cluster an input names.
        self.clusters = (
            clusters
            if isinstance(clusters, ClusterClients)
            else ClusterClients.single(clusters, service_account)
        )
        # The site's answer to a drain that cannot finish, unless the request says otherwise.
        self._drain_policy = drain_policy
        # Held spares' Nodes, watched once per cluster for the whole worker.
        self._hubs: dict[str, NodeWatchHub] = {}
        # Set where spares join from site templates (bootstrap tokens, labels, taints).
        self.adopter = adopter

    def cluster_of(self, cluster: str | None, node_name: str) -> str | None:
        """The input's cluster, else the registered cluster the spare id names."""
        return cluster if cluster is not None else spare_cluster(self.clusters.names, node_name)

    async def _kube(self, cluster: str | None) -> AsyncClient:
        return await self.clusters.client(cluster)

    async def client(self, cluster: str | None = None) -> AsyncClient:
        """The cluster's client (the site's join steps share it)."""
        return await self._kube(cluster)

    def _hub(self, cluster: str | None) -> NodeWatchHub:
        name = self.clusters.access_name(cluster)
        hub = self._hubs.get(name)
        if hub is None:
            hub = NodeWatchHub(lambda: self._kube(name), {SPARE_LABEL: "true"})
            hub.permanent = _permanent
            hub.on_error = lambda error: self.clusters.unreachable(name, error).describe(name)
            hub.on_answer = lambda: self.clusters.reached(name)
            self._hubs[name] = hub
        return hub

    async def close(self) -> None:
        for hub in self._hubs.values():
            hub.stop()
        await self.clusters.close()

    @contextlib.contextmanager
    def _calling(self, cluster: str | None, ignore: frozenset[int] = frozenset()) -> Iterator[None]:
        """`_classified`, and what the call says of the cluster's reachability."""
        try:
            with _classified(ignore):
                yield
        except httpx2.HTTPStatusError as exc:
            if _status_code(exc) == 401:
                self.clusters.refused(cluster)  # rotated credentials: read them again
            raise
        except (httpx2.HTTPError, OSError) as exc:
            self.clusters.unreachable(cluster, _transport_error(exc))
            raise
        except ApplicationError as exc:
            if exc.type == Failure.KUBERNETES_UNAUTHORIZED and self.clusters.refused(cluster):
                raise _rotated(cluster, exc) from exc
            raise
        self.clusters.reached(cluster)

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
                except (TimeoutError, _ReachabilityChanged):
                    return NodeReadyResult(
                        node_name=inp.node_name,
                        ready=False,
                        missing=progress.missing,
                        api_error=progress.api_error,
                    )
        finally:
            beat.cancel()
        await self._adopt(self.cluster_of(inp.cluster, inp.node_name), inp.node_name, inp.adopt)
        return NodeReadyResult(node_name=inp.node_name, ready=True, missing=[])

    @activity.defn
    async def check_node_ready(self, inp: CheckNodeReadyInput) -> NodeReadyResult:
        """One look at the Node, without waiting: run as a local activity right after the VM
        is created, so a Node that is Ready by then needs no readiness probe."""
        cluster = self.cluster_of(inp.cluster, inp.node_name)
        with self._calling(cluster):
            listing = (await self._kube(cluster)).list(
                Node, fields={"metadata.name": inp.node_name}
            )
            nodes = [node async for node in listing]
        gaps = readiness_gaps(nodes[0] if nodes else None)
        if not gaps:
            await self._adopt(cluster, inp.node_name, inp.adopt)
        return NodeReadyResult(node_name=inp.node_name, ready=not gaps, missing=gaps)

    async def _adopt(
        self, cluster: str | None, node_name: str, adoption: NodeAdoption | None
    ) -> None:
        if self.adopter is not None and adoption is not None:
            with self._calling(cluster):
                await self.adopter.adopt(cluster, node_name, adoption)

    async def _until_ready(self, inp: WaitNodeReadyInput, progress: _Progress) -> None:
        """List, then watch from the list's version; on any failure re-list after a backoff."""
        cluster = self.cluster_of(inp.cluster, inp.node_name)
        delay = FIRST_RETRY_SECONDS
        while True:
            try:
                if await self._watch_session(cluster, inp, progress):
                    return
                continue  # resync: re-list at once
            except httpx2.HTTPStatusError as exc:
                rotated = _status_code(exc) == 401 and self.clusters.refused(cluster)
                if not rotated and (permanent := _permanent(exc)) is not None:
                    raise permanent from exc
                if _status_code(exc) == 410:
                    continue  # our version is too old: the re-list is the fix
                error = f"HTTP {_status_code(exc)}"
            except msgspec.ValidationError as exc:
                # A Node this client cannot decode will not decode next time either.
                raise ApplicationError(
                    f"cannot decode the Node from the Kubernetes API: {exc}",
                    type=Failure.KUBERNETES_DECODE_ERROR,
                    non_retryable=True,
                ) from exc
            except (httpx2.HTTPError, OSError, ValueError) as exc:
                # Transport failures, dropped watches, a line cut mid-JSON: all transient.
                error = _transport_error(exc)
            if progress.api_error is None:
                # The API answered since the last failure: a new outage backs off from the start.
                delay = FIRST_RETRY_SECONDS
            # Which cluster does not answer, and since when: the spare's phase detail says it.
            name = self.clusters.access_name(cluster)
            progress.api_error = self.clusters.unreachable(name, error).describe(name)
            progress.report()
            if inp.max_wait_seconds is not None and not inp.api_down_shown:
                raise _ReachabilityChanged
            await asyncio.sleep(delay)
            delay = min(delay * 2, inp.poll_hint_seconds)

    async def _watch_session(
        self, cluster: str | None, inp: WaitNodeReadyInput, progress: _Progress
    ) -> bool:
        """True once Ready; False when the session timed out and should be re-listed."""
        name = inp.node_name
        client = await self._kube(cluster)
        listing = client.list(Node, fields={"metadata.name": name})
        nodes = [node async for node in listing]
        self.clusters.reached(cluster)
        if progress.observe(nodes[0] if nodes else None):
            return True
        if inp.max_wait_seconds is not None and inp.api_down_shown:
            raise _ReachabilityChanged  # it answers again: the status should say so now
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
        cluster = self.cluster_of(inp.cluster, inp.node_name)
        with self._calling(cluster, ignore=frozenset({404})):
            await (await self._kube(cluster)).patch(
                Node, inp.node_name, cordon, patch_type=PatchType.MERGE
            )

    @activity.defn
    async def drain_node(self, inp: DrainNodeInput) -> DrainNodeResult:
        """Evict every pod but DaemonSet and mirror pods and wait until they are gone; retry
        refusals until the timeout, then apply the drain policy (see activities/kube_drain)."""
        cluster = self.cluster_of(inp.cluster, inp.node_name)
        with self._calling(cluster):
            result = await drain_node(await self._kube(cluster), inp, self._drain_policy)
        reason, kind = _DRAIN_EVENTS[result.outcome]
        await self._record_event(
            cluster, inp.node_name, reason, f"virtflow: {result.summary()}", kind
        )
        return result

    @activity.defn
    async def watch_node_health(self, inp: WatchNodeHealthInput) -> NodeHealthResult:
        """While a spare is held: return once its Node has been unhealthy for the configured
        time (or, with until="healthy", once it is healthy again). Heartbeats meanwhile;
        cancelled when the hold ends."""
        cluster = self.cluster_of(inp.cluster, inp.node_name)
        result = await watch_node_health(self._hub(cluster), inp)
        if not result.healthy:
            # A registered cluster's name: an unregistered one is refused before the watch.
            metrics.spare_unhealthy(activity.metric_meter(), cluster or metrics.UNCONFIRMED)
            await self._record_event(
                cluster,
                inp.node_name,
                "SpareUnhealthy",
                f"virtflow: unhealthy for {inp.unhealthy_after_seconds:g} s: {result.reason}",
                "Warning",
            )
        return result

    @activity.defn
    async def count_unhealthy_spares(self, inp: ClusterSparesInput) -> UnhealthySparesResult:
        """The cluster's spare Nodes that are unhealthy right now (the max_unhealthy guard)."""
        with self._calling(inp.cluster):
            listing = (await self._kube(inp.cluster)).list(
                Node, labels={SPARE_LABEL: "true", CLUSTER_LABEL: inp.cluster}
            )
            nodes = [n async for n in listing]
        unhealthy = sorted(
            n.metadata.name for n in nodes if n.metadata and n.metadata.name and health_problems(n)
        )
        return UnhealthySparesResult(cluster=inp.cluster, total=len(nodes), unhealthy=unhealthy)

    async def _record_event(
        self, cluster: str | None, node_name: str, reason: str, message: str, kind: str = "Normal"
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
        with contextlib.suppress(ApiError, httpx2.HTTPError, OSError, ApplicationError):
            await (await self._kube(cluster)).create(event)

    @activity.defn
    async def delete_node(self, inp: NodeNameInput) -> None:
        """Idempotent: 404 means an earlier attempt (or someone else) already did it."""
        cluster = self.cluster_of(inp.cluster, inp.node_name)
        with self._calling(cluster, ignore=frozenset({404})):
            await (await self._kube(cluster)).delete(Node, inp.node_name)
        if self.adopter is not None:
            # A spare that never became Ready still has its join token: it goes with the Node.
            with self._calling(cluster):
                await self.adopter.forget(cluster, inp.node_name)

    @activity.defn
    async def list_spare_nodes(self) -> list[str]:
        """Nodes virtflow labelled as spares, in every registered cluster, for the orphan
        sweep. A cluster that does not answer is left out of this sweep (its Nodes are not
        orphans for not being seen), so it never holds up the others'."""
        names: set[str] = set()
        clusters = self.clusters.names
        for cluster in clusters:
            try:
                with self._calling(cluster):
                    listing = (await self._kube(cluster)).list(Node, labels={SPARE_LABEL: "true"})
                    names.update(
                        [n.metadata.name async for n in listing if n.metadata and n.metadata.name]
                    )
            except (httpx2.HTTPError, OSError) as exc:
                if len(clusters) == 1:
                    raise
                activity.logger.warning("orphan sweep: cluster %s not listed: %s", cluster, exc)
        return sorted(names)


def spare_cluster(registered: list[str], node_name: str) -> str | None:
    """The registered cluster a spare id (`spare-<cluster>-<request_id>`) names: the longest
    that fits; None when none does (the cache then answers for its only cluster, or refuses)."""
    fits = [c for c in registered if node_name.startswith(f"{SPARE_ID_PREFIX}{c}-")]
    return max(fits, key=len) if fits else None


def _transport_error(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}"[:200] if text else type(exc).__name__
