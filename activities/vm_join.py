"""How a spare's VM joins the cluster: the site template filled in, and the Node adopted.

`prepare` runs inside the create activity: it picks the site's template, makes a bootstrap
token, and renders the user data (node name, labels, taints, API server, its CA, the token)
into the VM spec handed to the provisioner. The taints are the ones the Node registers with
(kubeadm's `nodeRegistration.taints`, a kubelet's `--register-with-taints`): the template's,
and a warm spare's `virtflow.io/warm`, so that Node is never schedulable before its claim.
`adopt` runs once the Node is Ready: virtflow applies the spare's labels and the template's
taints itself (as Cluster API syncs Machine labels to Nodes), so they never depend on the
guest, and deletes the spare's tokens.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lightkube import AsyncClient, KubeConfig
from lightkube.resources.core_v1 import Node
from lightkube.types import PatchType
from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure
from contracts.spare import CLUSTER_LABEL
from contracts.vm import VmSpec
from placement.models import Taint
from runtime.vm_templates import SiteTemplates, render_user_data

from .bootstrap_tokens import TokenTaken, create_token, delete_token
from .kube_clusters import ClusterClients
from .kubernetes import NodeAdoption, spare_cluster


class ClusterEndpoint(BaseModel):
    server: str
    ca_data: str = ""


def cluster_endpoint(kubeconfig: Path | None) -> ClusterEndpoint:
    """The API server and its CA (base64 PEM, as in a kubeconfig) the product talks to."""
    config = KubeConfig.from_file(kubeconfig) if kubeconfig else KubeConfig.from_env()
    return config_endpoint(config, f"kubeconfig {kubeconfig}")


def config_endpoint(config: KubeConfig, where: object = "kubeconfig") -> ClusterEndpoint:
    """The API server and CA of a loaded kubeconfig's current context."""
    context = config.get()
    if context is None:
        raise ValueError(f"{where}: no current context")
    cluster = context.cluster
    ca = cluster.certificate_auth_data or ""
    if not ca and cluster.certificate_auth:
        ca = base64.b64encode(Path(cluster.certificate_auth).read_bytes()).decode()
    return ClusterEndpoint(server=cluster.server, ca_data=ca)


def join_endpoint(
    server: str | None, ca_file: Path | None, kubeconfig: Path | KubeConfig | None
) -> ClusterEndpoint:
    """What a guest's join is told: the advertised server and its CA (a cluster's
    `join_api_server`, `join_api_server_ca`), each falling back to its kubeconfig's."""
    ca = base64.b64encode(ca_file.read_bytes()).decode() if ca_file else None
    if server is not None and ca is not None:
        return ClusterEndpoint(server=server, ca_data=ca)
    own = (
        config_endpoint(kubeconfig)
        if isinstance(kubeconfig, KubeConfig)
        else cluster_endpoint(kubeconfig)
    )
    return ClusterEndpoint(server=server or own.server, ca_data=own.ca_data if ca is None else ca)


async def cluster_join_endpoint(clusters: ClusterClients, cluster: str | None) -> ClusterEndpoint:
    """The join of one registered cluster: its own settings over its kubeconfig's."""
    access = clusters.access(cluster)
    return join_endpoint(
        access.join_api_server, access.join_api_server_ca, await clusters.config(cluster)
    )


class Joiner:
    """The site's join for every registered cluster: a spare's token, Node and join endpoint
    are its own cluster's (the cluster its VM spec's labels name)."""

    def __init__(
        self,
        templates: SiteTemplates,
        kube: Callable[[str | None], Awaitable[AsyncClient]],
        endpoint: Callable[[str | None], Awaitable[ClusterEndpoint]],
        clusters: list[str] | None = None,
    ) -> None:
        self.templates = templates
        self._kube = kube
        self._endpoint = endpoint
        self._clusters = clusters or []

    @classmethod
    def for_one(
        cls, templates: SiteTemplates, kube: AsyncClient, endpoint: ClusterEndpoint
    ) -> Joiner:
        """One cluster's join, whatever cluster a spare names (tests, tools)."""

        async def client(cluster: str | None) -> AsyncClient:
            return kube

        async def joined(cluster: str | None) -> ClusterEndpoint:
            return endpoint

        return cls(templates, client, joined)

    def _cluster(self, spec: VmSpec) -> str | None:
        named = spec.labels.get(CLUSTER_LABEL)
        return named if named is not None else spare_cluster(self._clusters, spec.name)

    async def prepare(self, spec: VmSpec) -> VmSpec:
        """The spec with the template's image, network and rendered user data filled in where
        the spec has none (a request's null never overrides a site value)."""
        chosen = self.templates.choose(spec.template, spec.pool)
        if chosen is None:
            return spec
        name, template = chosen
        update: dict[str, Any] = {
            "image": spec.image or template.image,
            "network": spec.network or template.network,
        }
        text = template.user_data_text()
        if text is not None:
            cluster = self._cluster(spec)
            endpoint = await self._endpoint(cluster)
            server = template.api_server or endpoint.server
            try:
                token = await create_token(
                    await self._kube(cluster),
                    spec.name,
                    timedelta(seconds=template.token_ttl_seconds),
                )
            except TokenTaken as err:
                # The name stays taken while the other spare lives: retrying would not help.
                raise ApplicationError(
                    str(err), type=Failure.TOKEN_TAKEN, non_retryable=True
                ) from None
            update["user_data"] = render_user_data(
                name,
                text,
                {
                    "node_name": spec.name,
                    "labels": {**template.labels, **spec.labels},
                    "taints": registration_taints(template.taints, spec.taints),
                    "api_server": server,
                    "api_server_name": template.api_server_name
                    or urlsplit(endpoint.server).hostname,
                    "ca_data": endpoint.ca_data,
                    "join_token": token,
                },
            )
        return spec.model_copy(update=update)

    async def adopt(self, cluster: str | None, node_name: str, adoption: NodeAdoption) -> None:
        chosen = self.templates.choose(adoption.template, adoption.pool)
        template_labels = chosen[1].labels if chosen else {}
        taints = [t.model_dump() for t in chosen[1].taints] if chosen else []
        kube = await self._kube(cluster)
        await adopt_node(kube, node_name, {**template_labels, **adoption.labels}, taints)
        await delete_token(kube, node_name)

    async def forget(self, cluster: str | None, node_name: str) -> None:
        await delete_token(await self._kube(cluster), node_name)


def registration_taints(template: list[Taint], spare: list[Taint]) -> list[dict[str, str]]:
    """What the join registers the Node with (`--register-with-taints`): the template's
    taints and the spare's own (a warm spare's), each key and effect once."""
    taints: dict[tuple[str, str], Taint] = {}
    for taint in [*template, *spare]:
        taints.setdefault((taint.key, taint.effect), taint)
    return [t.model_dump() for t in taints.values()]


async def adopt_node(
    kube: AsyncClient, name: str, labels: dict[str, str], taints: list[dict[str, str]]
) -> None:
    """Labels merged in; taints added unless the Node has them (a JSON merge patch would
    replace the whole list, dropping what others put there)."""
    node = await kube.get(Node, name)
    have = [t.to_dict() for t in (node.spec.taints if node.spec and node.spec.taints else [])]
    keys = {(t.get("key"), t.get("effect")) for t in have}
    missing = [t for t in taints if (t["key"], t["effect"]) not in keys]
    current = (node.metadata.labels if node.metadata else None) or {}
    patch: dict[str, Any] = {}
    if any(current.get(k) != v for k, v in labels.items()):
        patch["metadata"] = {"labels": labels}
    if missing:
        patch["spec"] = {"taints": have + missing}
    if patch:
        await kube.patch(Node, name, patch, patch_type=PatchType.MERGE)
