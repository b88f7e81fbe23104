"""The whole lab in one object: Kubernetes API, simulated kubelet, lab hypervisor, lab GitLab.

A VM that the hypervisor starts boots as a Node through the kubelet; a destroyed VM's Node
goes away. The product reaches all of it over HTTP only: the kubeconfig and the URLs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from contracts.spare import CLUSTER_LABEL
from playbooks import PLAYBOOK_DIR

from .gitlab import LabGitLab
from .hypervisor import LabHypervisor, LabVm, load_inventory_file
from .kube_api import KubeApiServer
from .kubelet import Kubelet

DEFAULT_INVENTORY = Path(__file__).with_name("inventory.yaml")


# The lab's first cluster; every further one is a Kubernetes API of its own, with its own CA.
LAB_CLUSTER = "lab"
SECOND_CLUSTER = "lab-b"


class LabCluster:
    """One lab cluster: its API server, its kubelet, its kubeconfig."""

    def __init__(self, name: str, ready_delay: float) -> None:
        self.name = name
        self.kube = KubeApiServer()
        self.kubelet = Kubelet(self.kube, ready_delay=ready_delay)
        self.kubeconfig = Path()


def cluster_kubeconfig(state_dir: Path, cluster: str) -> Path:
    """Where the lab writes a cluster's kubeconfig: `lab`'s where it always was."""
    if cluster == LAB_CLUSTER:
        return state_dir / "kubeconfig"
    return state_dir / "clusters" / cluster / "kubeconfig"


class LabStack:
    def __init__(
        self,
        inventory_doc: dict[str, Any] | None = None,
        ready_delay: float = 1.0,
        extra_clusters: tuple[str, ...] = (),
    ) -> None:
        self.inventory_doc = inventory_doc or load_inventory_file(DEFAULT_INVENTORY)
        self.ready_delay = ready_delay
        self.clusters = {
            name: LabCluster(name, ready_delay) for name in (LAB_CLUSTER, *extra_clusters)
        }
        first = self.clusters[LAB_CLUSTER]
        self.kube = first.kube
        self.kubelet = first.kubelet
        self.hypervisor: LabHypervisor
        self.gitlab: LabGitLab | None = None
        self.kubeconfig = Path()

    def _cluster_of(self, labels: dict[str, str] | None) -> LabCluster:
        """The cluster a VM joins: the one its spare's label names (the lab's stand-in for
        the API server its user data names), else the first."""
        named = (labels or {}).get(CLUSTER_LABEL, LAB_CLUSTER)
        return self.clusters.get(named, self.clusters[LAB_CLUSTER])

    async def _boot(self, vm: LabVm) -> None:
        kubelet = self._cluster_of(vm.labels).kubelet
        await kubelet.vm_started(
            vm.name,
            vm.ip,
            vm.labels,
            vm.cpu,
            vm.memory_mb,
            taints=[t.model_dump() for t in vm.taints],
        )

    async def _halt(self, name: str) -> None:
        for cluster in self.clusters.values():
            await cluster.kubelet.vm_stopped(name)

    async def start(
        self,
        state_dir: Path,
        kube_port: int = 0,
        hypervisor_port: int = 0,
        ready_delay: float | None = None,
        gitlab_port: int = 0,
        host: str = "127.0.0.1",
        kube_advertised_host: str = "127.0.0.1",
        cluster_ports: dict[str, int] | None = None,
    ) -> None:
        """Start on fixed ports for `virtflow dev`, or free ones (0) for tests; `host` and
        `kube_advertised_host` serve a container network (`virtflow lab`). `kube_port` is the
        first cluster's API, `cluster_ports` the others' by name (free ones where unnamed)."""
        if ready_delay is not None:
            for cluster in self.clusters.values():
                cluster.kubelet.ready_delay = ready_delay
        state_dir.mkdir(parents=True, exist_ok=True)
        ports = {LAB_CLUSTER: kube_port, **(cluster_ports or {})}
        for cluster in self.clusters.values():
            await cluster.kube.start(
                port=ports.get(cluster.name, 0), host=host, advertised_host=kube_advertised_host
            )
            path = cluster_kubeconfig(state_dir, cluster.name)
            path.parent.mkdir(parents=True, exist_ok=True)
            cluster.kubeconfig = cluster.kube.write_kubeconfig(
                path, context=f"virtflow-{cluster.name}"
            )
        self.kubeconfig = self.clusters[LAB_CLUSTER].kubeconfig
        doc = self.inventory_doc
        self.hypervisor = LabHypervisor(
            doc["hosts"],
            state_file=state_dir / "hypervisor.json",
            on_start=self._boot,
            on_stop=self._halt,
            existing_vms=doc.get("existing_vms"),
            used_vmids=doc.get("used_vmids"),
            next_vmid=doc.get("next_vmid"),
        )
        await self.hypervisor.start(host=host, port=hypervisor_port)
        # Its pipeline runs the lab playbook against this hypervisor, as a site's would.
        self.gitlab = LabGitLab(
            PLAYBOOK_DIR,
            {
                "VIRTFLOW_HYPERVISOR": "lab",
                "VIRTFLOW_EXTRAVARS": json.dumps({"lab_hypervisor_url": self.hypervisor.url}),
            },
            workdir=state_dir / "gitlab",
        )
        await self.gitlab.start(port=gitlab_port)

    @property
    def hypervisor_url(self) -> str:
        return self.hypervisor.url

    @property
    def kube_url(self) -> str:
        return self.kube.url

    async def stop(self) -> None:
        # The servers stop side by side: each waits for uvicorn's next tick (0.1 s) or more.
        for cluster in self.clusters.values():
            await cluster.kubelet.stop()
        servers = [self.hypervisor.stop(), *(c.kube.stop() for c in self.clusters.values())]
        if self.gitlab is not None:
            servers.append(self.gitlab.stop())
        await asyncio.gather(*servers)
