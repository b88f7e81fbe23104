"""The workload clusters virtflow prepares spares for, by name, and what each may use.

One virtflow serves many clusters (docs/OPERATIONS.md, Many clusters): each has its own
credentials (a kubeconfig file, or Cluster API's `<cluster>-kubeconfig` Secret with key
`value` in the cluster virtflow runs in), the API server and CA its VMs join, the receivers
its events go to, the inventories and pools it may use, and its surge budget. A request for a
cluster that is not registered is refused before anything starts, with one message wherever
it is refused (API, command line, workflow).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, FilePath, field_validator, model_validator


class ClusterConfig(BaseModel):
    """One registered workload cluster (setting `clusters`). Never enters workflow history."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    kubeconfig: Path | None = None
    """Kubeconfig file of the cluster; with neither this nor `kubeconfig_secret_namespace`,
    the in-cluster service account (in a Pod), else `KUBECONFIG`, else `~/.kube/config`."""
    kubeconfig_secret_namespace: str | None = Field(default=None, min_length=1, max_length=63)
    """Read the kubeconfig from the Secret `<cluster>-kubeconfig`, key `value` (Cluster API's
    form), in this namespace of the cluster virtflow runs in (`seed_kubeconfig`)."""
    join_api_server: str | None = None
    """The cluster's API server as its VMs reach it (`https://host:port`); unset: the server
    of the cluster's kubeconfig."""
    join_api_server_ca: FilePath | None = None
    """PEM file of the CA of `join_api_server`; unset: the CA of the cluster's kubeconfig."""
    receivers: list[str] | None = None
    """Receivers this cluster's events go to (a request may pick among them); unset: every
    receiver no other cluster names (a receiver a cluster names hears only that cluster)."""
    inventories: list[str] | None = None
    """Inventories this cluster's spares may be placed in; unset: all."""
    pools: list[str] | None = None
    """Pools this cluster's spares may ask for; unset: any (and none)."""
    max_spares: int | None = Field(default=None, ge=0)
    """Surge budget: this cluster's spares not yet released (warm ones not counted); a
    request past it does not fit (`count: N`: 409 `cluster_budget_exceeded`; with
    `wait_for_capacity` it waits for a spare of the cluster to be released). Kept by the
    ledger of the cluster's one inventory: a budgeted cluster must have exactly one
    (`inventories: [name]`, or a site of one inventory), else the settings are refused.
    Unset: no budget."""

    @field_validator("join_api_server")
    @classmethod
    def _https(cls, server: str | None) -> str | None:
        if server is not None and not server.startswith("https://"):
            raise ValueError(f"{server!r} is not an https:// URL")
        return server

    @model_validator(mode="after")
    def _one_source(self) -> ClusterConfig:
        if self.kubeconfig is not None and self.kubeconfig_secret_namespace is not None:
            raise ValueError("set kubeconfig or kubeconfig_secret_namespace, not both")
        return self


class NotAllowed(ValueError):
    """A request names what its cluster may not use (or a cluster that is not registered)."""

    def __init__(self, field: str, reason: str, unknown_cluster: bool = False) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
        self.unknown_cluster = unknown_cluster


def unknown_cluster_reason(name: str, registered: Iterable[str]) -> str:
    """The one sentence every door says for an unregistered cluster."""
    known = ", ".join(sorted(registered)) or "none"
    return f"unknown cluster '{name}' (registered: {known})"


class ClusterRegistry:
    """The registered clusters by name, and the checks a request passes against its own."""

    def __init__(self, clusters: Mapping[str, ClusterConfig]) -> None:
        self._clusters = dict(clusters)

    @property
    def names(self) -> list[str]:
        return sorted(self._clusters)

    def items(self) -> list[tuple[str, ClusterConfig]]:
        return sorted(self._clusters.items())

    def __contains__(self, name: object) -> bool:
        return name in self._clusters

    def get(self, name: str) -> ClusterConfig:
        config = self._clusters.get(name)
        if config is None:
            raise NotAllowed("cluster", unknown_cluster_reason(name, self._clusters), True)
        return config

    def check(
        self,
        cluster: str,
        inventory: str | None = None,
        pool: str | None = None,
        receivers: list[str] | None = None,
    ) -> ClusterConfig:
        """The cluster's configuration, or NotAllowed naming the first field at fault."""
        config = self.get(cluster)
        allowed_inventories = config.inventories or []
        if config.inventories is not None and inventory not in (None, *allowed_inventories):
            allowed = ", ".join(allowed_inventories) or "none"
            raise NotAllowed(
                "inventory",
                f"cluster '{cluster}' may not use inventory '{inventory}' (allowed: {allowed})",
            )
        if pool is not None and config.pools is not None and pool not in config.pools:
            allowed = ", ".join(config.pools) or "none"
            raise NotAllowed(
                "pool", f"cluster '{cluster}' may not use pool '{pool}' (allowed: {allowed})"
            )
        for name in receivers or []:
            if self.may_tell(cluster, name):
                continue
            if config.receivers is not None:
                its = ", ".join(config.receivers) or "none"
                reason = f"receiver '{name}' is not one of cluster '{cluster}''s (its: {its})"
            else:
                owners = [n for n, c in self.items() if name in (c.receivers or [])]
                reason = (
                    f"receiver '{name}' is cluster {', '.join(repr(o) for o in owners)}'s, "
                    f"not cluster '{cluster}''s"
                )
            raise NotAllowed("receivers", reason)
        return config

    def inventories_of(self, clusters: Iterable[str], configured: Iterable[str]) -> set[str]:
        """The configured inventories any of `clusters` may use (all, for a cluster that names
        none)."""
        every = set(configured)
        used: set[str] = set()
        for name in clusters:
            allowed = self.get(name).inventories if name in self else []
            used |= every if allowed is None else every & set(allowed)
        return used

    def may_tell(self, cluster: str, receiver: str) -> bool:
        """Whether `receiver` may hear of `cluster`'s spares: one of its receivers, or, for a
        cluster that names none, a receiver no other cluster names."""
        own = self.get(cluster).receivers
        if own is not None:
            return receiver in own
        return not any(
            receiver in (c.receivers or []) for n, c in self._clusters.items() if n != cluster
        )

    def receivers_of(self, cluster: str, configured: Iterable[str]) -> list[str]:
        """The receivers a request that names none notifies: its cluster's, else every
        configured one no other cluster names."""
        own = self.get(cluster).receivers
        if own is not None:
            return list(own)
        return [name for name in sorted(configured) if self.may_tell(cluster, name)]
