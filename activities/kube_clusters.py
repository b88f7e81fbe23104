"""One Kubernetes client per workload cluster, kept as Cluster API's ClusterCache keeps them.

A cluster's client is built on first use from its kubeconfig: a file, or the Secret
`<cluster>-kubeconfig` (key `value`) in the cluster virtflow runs in (the seed). It is built
again when the file or the Secret changes, so credentials rotate without a restart; the file
is looked at on every use (one stat), the Secret at most every `secret_refresh_seconds` and
at once after the cluster refused the old credentials. Each cluster's reachability is kept
from the calls made to it: one whose API stops answering is reported with its last error and
since when, and holds up only its own spares.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import yaml
from lightkube import ApiError, AsyncClient, ConfigError, KubeConfig
from lightkube.resources.core_v1 import Node
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure
from runtime.clusters import ClusterRegistry

from .kubeconfig_secrets import read_kubeconfig_secret

# Where a Pod's service account token, CA and namespace are mounted.
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
# A probe that takes longer than this is as good as no answer.
PROBE_SECONDS = 5.0
# The Node a probe asks for: never there, so the answer is a cheap 404.
PROBE_NODE = "virtflow-probe-absent"


@dataclass(frozen=True)
class ClusterAccess:
    """How the worker reaches one cluster and what its VMs are told to join."""

    kubeconfig: Path | None = None
    # Read the kubeconfig from the seed's Secret `<cluster>-kubeconfig` in this namespace.
    secret_namespace: str | None = None
    join_api_server: str | None = None
    join_api_server_ca: Path | None = None


@dataclass
class Reachability:
    """What the last calls to a cluster's API said."""

    reachable: bool = True
    last_error: str | None = None
    # Since when it has not answered (unreachable) or answered last (reachable).
    since: datetime | None = None

    def describe(self, cluster: str) -> str:
        """What a spare waiting on this cluster shows: which cluster, since when, and why."""
        when = self.since.strftime("%Y-%m-%dT%H:%M:%SZ") if self.since else "?"
        who = f"cluster {cluster}'s Kubernetes API" if cluster else "the Kubernetes API"
        return f"{who} unreachable since {when}: {self.last_error}"


@dataclass
class _Built:
    client: AsyncClient
    config: KubeConfig
    fingerprint: object
    checked: float = field(default_factory=time.monotonic)
    # The Secret was read again after the cluster refused these credentials, and was the
    # same: a further refusal is final.
    confirmed_after_refusal: bool = False


def kube_config(kubeconfig: Path | None, service_account: Path = SERVICE_ACCOUNT_DIR) -> KubeConfig:
    """The named kubeconfig; unset: the Pod's service account when in a cluster, else the
    file `KUBECONFIG` names, else `~/.kube/config` (the order kubectl and client-go follow)."""
    if kubeconfig is not None:
        return KubeConfig.from_file(kubeconfig)
    return KubeConfig.from_env(service_account=service_account)


def _config_error(cluster: str, exc: Exception) -> ApplicationError:
    # A wrong kubeconfig does not heal by retrying: fail where operators look.
    return ApplicationError(
        f"cannot load the Kubernetes configuration of cluster {cluster} ({exc}): set its "
        "kubeconfig (clusters.<name>.kubeconfig, or VIRTFLOW_KUBECONFIG for a single "
        "cluster) or KUBECONFIG, or run in a Pod with a service account",
        type=Failure.KUBERNETES_CONFIG_ERROR,
        non_retryable=True,
    )


class ClusterClients:
    """The registered clusters' clients, each built on first use and rebuilt on change."""

    def __init__(
        self,
        clusters: Mapping[str, ClusterAccess],
        seed_kubeconfig: Path | None = None,
        service_account: Path = SERVICE_ACCOUNT_DIR,
        secret_refresh_seconds: float = 10.0,
        any_name: bool = False,
    ) -> None:
        self._clusters = dict(clusters)
        self._seed_kubeconfig = seed_kubeconfig
        self._service_account = service_account
        self.secret_refresh_seconds = secret_refresh_seconds
        # One cluster answering for every name: a single-cluster worker built from a path.
        self._any_name = any_name and len(self._clusters) == 1
        self._built: dict[str, _Built] = {}
        self._retired: list[AsyncClient] = []
        self._seed: AsyncClient | None = None
        self._reach: dict[str, Reachability] = {}

    @classmethod
    def from_registry(
        cls, registry: ClusterRegistry, seed_kubeconfig: Path | None = None
    ) -> ClusterClients:
        """One client per registered cluster, each built on first use."""
        return cls(
            {
                name: ClusterAccess(
                    kubeconfig=cluster.kubeconfig,
                    secret_namespace=cluster.kubeconfig_secret_namespace,
                    join_api_server=cluster.join_api_server,
                    join_api_server_ca=cluster.join_api_server_ca,
                )
                for name, cluster in registry.items()
            },
            seed_kubeconfig=seed_kubeconfig,
        )

    @classmethod
    def single(
        cls, kubeconfig: Path | None, service_account: Path = SERVICE_ACCOUNT_DIR
    ) -> ClusterClients:
        """One cluster's client whatever cluster an input names (tests, tools)."""
        return cls({"": ClusterAccess(kubeconfig=kubeconfig)}, None, service_account, any_name=True)

    @property
    def names(self) -> list[str]:
        return sorted(self._clusters)

    def _name(self, cluster: str | None) -> str:
        if self._any_name:
            return next(iter(self._clusters))
        if cluster is None and len(self._clusters) == 1:
            return next(iter(self._clusters))
        if cluster is None or cluster not in self._clusters:
            known = ", ".join(sorted(self._clusters)) or "none"
            raise ApplicationError(
                f"unknown cluster '{cluster}' (registered: {known})",
                type=Failure.UNKNOWN_CLUSTER,
                non_retryable=True,
            )
        return cluster

    def access_name(self, cluster: str | None) -> str:
        """The registered name that answers for `cluster` (refused when none does)."""
        return self._name(cluster)

    def access(self, cluster: str | None) -> ClusterAccess:
        return self._clusters[self._name(cluster)]

    async def client(self, cluster: str | None) -> AsyncClient:
        """The cluster's client, built again if its kubeconfig changed since the last use."""
        return (await self._current(cluster)).client

    async def config(self, cluster: str | None) -> KubeConfig:
        return (await self._current(cluster)).config

    async def _current(self, cluster: str | None) -> _Built:
        name = self._name(cluster)
        access = self._clusters[name]
        built = self._built.get(name)
        if access.secret_namespace is not None:
            fresh = built is not None and (
                time.monotonic() - built.checked < self.secret_refresh_seconds
            )
            if built is not None and fresh:
                return built
            text = await self._read_secret(name, access.secret_namespace)
            fingerprint: object = hashlib.sha256(text.encode()).hexdigest()
            if built is not None and built.fingerprint == fingerprint:
                if built.checked == float("-inf"):
                    built.confirmed_after_refusal = True
                built.checked = time.monotonic()
                return built
            try:
                config = KubeConfig.from_dict(yaml.safe_load(text))
            except (ConfigError, ValueError, TypeError, AttributeError, yaml.YAMLError) as exc:
                raise _config_error(name, exc) from exc
        else:
            fingerprint = _file_fingerprint(access.kubeconfig)
            if built is not None and built.fingerprint == fingerprint:
                return built
            try:
                config = kube_config(access.kubeconfig, self._service_account)
            except (ConfigError, OSError) as exc:
                raise _config_error(name, exc) from exc
        if built is not None:
            # Calls in flight (a watch) finish on the old one; it closes with the worker.
            self._retired.append(built.client)
        self._built[name] = _Built(AsyncClient(config=config), config, fingerprint)
        return self._built[name]

    def refused(self, cluster: str | None) -> bool:
        """The cluster refused the credentials (401): whether the call is worth making again,
        with the credentials as they are now. A file rewritten since the client was built: yes.
        A Secret: read again at the next use, so yes, unless it was read again after an
        earlier refusal and was the same (credentials that no longer work: a person's turn)."""
        name = self._name(cluster)
        built = self._built.get(name)
        if built is None:
            return True
        access = self._clusters[name]
        if access.secret_namespace is None:
            return _file_fingerprint(access.kubeconfig) != built.fingerprint
        if built.confirmed_after_refusal:
            return False
        built.checked = float("-inf")
        return True

    async def _read_secret(self, cluster: str, namespace: str) -> str:
        if self._seed is None:
            try:
                self._seed = AsyncClient(
                    config=kube_config(self._seed_kubeconfig, self._service_account)
                )
            except (ConfigError, OSError) as exc:
                raise _config_error(f"{cluster} (its Secret's seed)", exc) from exc
        return await read_kubeconfig_secret(self._seed, cluster, namespace)

    # --- reachability ---------------------------------------------------------------------

    def reached(self, cluster: str | None) -> None:
        name = self._name(cluster)
        seen = self._reach.setdefault(name, Reachability())
        if not seen.reachable or seen.since is None:
            seen.reachable, seen.last_error = True, None
        seen.since = datetime.now(UTC)

    def unreachable(self, cluster: str | None, error: str) -> Reachability:
        name = self._name(cluster)
        seen = self._reach.setdefault(name, Reachability())
        if seen.reachable:
            seen.reachable, seen.since = False, datetime.now(UTC)
        seen.last_error = error
        return seen

    def reachability(self, cluster: str | None) -> Reachability:
        return self._reach.get(self._name(cluster), Reachability(since=None))

    async def probe(self, cluster: str, timeout: float = PROBE_SECONDS) -> Reachability:
        """Ask the cluster's API server for a Node that is never there: any answer, the 404
        included, means it answers (and needs no more than the `get nodes` the worker has)."""
        try:
            kube = await self.client(cluster)
            async with asyncio.timeout(timeout):
                await kube.get(Node, PROBE_NODE)
        except ApiError as err:
            if err.status.code != 404:
                return self.unreachable(cluster, f"HTTP {err.status.code}: {err.status.message}")
        except TimeoutError:
            return self.unreachable(cluster, f"no answer within {timeout:g} s")
        except ApplicationError as err:
            return self.unreachable(cluster, err.message)
        except (httpx2.HTTPError, OSError) as err:
            text = str(err).strip()
            return self.unreachable(cluster, f"{type(err).__name__}: {text}"[:300])
        self.reached(cluster)
        return self.reachability(cluster)

    async def close(self) -> None:
        clients = [b.client for b in self._built.values()] + self._retired
        if self._seed is not None:
            clients.append(self._seed)
        self._built, self._retired, self._seed = {}, [], None
        for client in clients:
            await client.close()


def _file_fingerprint(path: Path | None) -> object:
    """What changes when a kubeconfig file is rewritten or replaced (a Secret volume's
    symlink swap included); None for the environment's or service account's."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    return (st.st_mtime_ns, st.st_size, st.st_ino)
