"""The whole lab in one object: Kubernetes API, simulated kubelet, lab hypervisor, lab GitLab.

A VM that the hypervisor starts boots as a Node through the kubelet; a destroyed VM's Node
goes away. The product reaches all of it over HTTP only: the kubeconfig and the URLs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from playbooks import PLAYBOOK_DIR

from .gitlab import LabGitLab
from .hypervisor import LabHypervisor, LabVm, load_inventory_file
from .kube_api import KubeApiServer
from .kubelet import Kubelet

DEFAULT_INVENTORY = Path(__file__).with_name("inventory.yaml")


class LabStack:
    def __init__(
        self, inventory_doc: dict[str, Any] | None = None, ready_delay: float = 1.0
    ) -> None:
        self.inventory_doc = inventory_doc or load_inventory_file(DEFAULT_INVENTORY)
        self.ready_delay = ready_delay
        self.kube = KubeApiServer()
        self.kubelet = Kubelet(self.kube, ready_delay=ready_delay)
        self.hypervisor: LabHypervisor
        self.gitlab: LabGitLab | None = None
        self.kubeconfig = Path()

    async def _boot(self, vm: LabVm) -> None:
        await self.kubelet.vm_started(
            vm.name,
            vm.ip,
            vm.labels,
            vm.cpu,
            vm.memory_mb,
            taints=[t.model_dump() for t in vm.taints],
        )

    async def _halt(self, name: str) -> None:
        await self.kubelet.vm_stopped(name)

    async def start(
        self,
        state_dir: Path,
        kube_port: int = 0,
        hypervisor_port: int = 0,
        ready_delay: float | None = None,
        gitlab_port: int = 0,
        host: str = "127.0.0.1",
        kube_advertised_host: str = "127.0.0.1",
    ) -> None:
        """Start on fixed ports for `virtflow dev`, or free ones (0) for tests; `host` and
        `kube_advertised_host` serve a container network (`virtflow lab`)."""
        if ready_delay is not None:
            self.kubelet.ready_delay = ready_delay
        state_dir.mkdir(parents=True, exist_ok=True)
        await self.kube.start(port=kube_port, host=host, advertised_host=kube_advertised_host)
        self.kubeconfig = self.kube.write_kubeconfig(state_dir / "kubeconfig")
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
                "VIRTFLOW_PROVIDER": "lab",
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
        await self.kubelet.stop()
        servers = [self.hypervisor.stop(), self.kube.stop()]
        if self.gitlab is not None:
            servers.append(self.gitlab.stop())
        await asyncio.gather(*servers)
