"""An unmodified kubectl against the lab, as `make dev` starts it and through the kubeconfig
it writes: the commands a newcomer tries first all exit 0 and show what a cluster shows."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from cli.dev import LAB_RECEIVER, RunningStack, free_ports, lab_stack
from runtime.settings import Settings
from tests.helpers import assert_eventually

# VIRTFLOW_KUBECTL picks another binary (for instance Debian's, unpacked elsewhere).
KUBECTL = os.environ.get("VIRTFLOW_KUBECTL") or shutil.which("kubectl")
pytestmark = pytest.mark.skipif(
    KUBECTL is None,
    reason="kubectl is not installed: `make test` installs Debian's kubernetes-client as root",
)


@dataclass
class Run:
    code: int
    out: str
    err: str


@dataclass
class DevLab:
    running: RunningStack
    kubeconfig: Path
    node: str

    async def kubectl(self, *args: str) -> Run:
        assert KUBECTL is not None
        proc = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--kubeconfig",
            str(self.kubeconfig),
            "--request-timeout=20s",
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(self.kubeconfig.parent)},
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode is not None
        return Run(proc.returncode, out.decode(), err.decode())


@pytest.fixture(scope="module")
async def dev_lab(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DevLab]:
    """`virtflow dev`'s stack on free ports, with one Ready spare."""
    state_dir = tmp_path_factory.mktemp("dev")
    settings = Settings(state_dir=state_dir)
    async with (
        lab_stack(settings, free_ports(), state_dir, 0.2) as running,
        httpx.AsyncClient(base_url=running.api_url, timeout=30) as api,
    ):
        request = {
            "request_id": f"kubectl-{uuid.uuid4().hex[:6]}",
            "cluster": "lab",
            "cpu": 2,
            "memory_mb": 4096,
            "receivers": [LAB_RECEIVER],
        }
        accepted = await api.post("/spare/prepare", json=request)
        assert accepted.status_code == 202, accepted.text
        spare_id = accepted.json()["spare_id"]

        async def ready() -> None:
            status = (await api.get(f"/spare/{spare_id}")).json()
            assert status.get("phase") == "ready", status

        await assert_eventually(ready, timeout=120)
        # The spare's id is its VM's and its Node's name.
        yield DevLab(running, running.settings.kubeconfig or state_dir / "kubeconfig", spare_id)


async def test_the_kubeconfig_carries_the_lab_ca(dev_lab: DevLab) -> None:
    text = dev_lab.kubeconfig.read_text()
    assert "certificate-authority-data" in text
    assert "server: https://127.0.0.1:" in text


async def test_get_nodes_shows_the_ready_spare_in_the_status_column(dev_lab: DevLab) -> None:
    run = await dev_lab.kubectl("get", "nodes", "-o", "wide")
    assert run.code == 0, run.err
    header, *rows = run.out.splitlines()
    assert header.split()[:6] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP"]
    row = next(r.split() for r in rows if r.split()[0] == dev_lab.node)
    assert row[1] == "Ready"
    assert row[4] == "v1.31.0"
    assert "couldn't get resource list" not in run.err


async def test_describe_node_shows_capacity_and_the_lease(dev_lab: DevLab) -> None:
    run = await dev_lab.kubectl("describe", "node", dev_lab.node)
    assert run.code == 0, run.err
    assert "Capacity:" in run.out and "memory:" in run.out
    assert "-9223372036854775808" not in run.out
    assert f"HolderIdentity:  {dev_lab.node}" in run.out
    assert "Failed to get lease" not in run.out + run.err
    assert "NodeReady" in run.out


async def test_api_resources_lists_every_group(dev_lab: DevLab) -> None:
    run = await dev_lab.kubectl("api-resources")
    assert run.code == 0, run.err
    names = {line.split()[0] for line in run.out.splitlines()[1:]}
    assert {"nodes", "pods", "events", "leases", "poddisruptionbudgets", "daemonsets"} <= names


async def test_get_events_and_budgets_and_namespaces(dev_lab: DevLab) -> None:
    events = await dev_lab.kubectl("get", "events")
    assert events.code == 0, events.err
    assert "NodeReady" in events.out
    budgets = await dev_lab.kubectl("get", "pdb", "-A")
    assert budgets.code == 0, budgets.err
    namespaces = await dev_lab.kubectl("get", "ns")
    assert namespaces.code == 0, namespaces.err
    assert "kube-node-lease" in namespaces.out


async def test_drain_of_a_spare_without_force_finishes(dev_lab: DevLab) -> None:
    run = await dev_lab.kubectl(
        "drain", dev_lab.node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s"
    )
    assert run.code == 0, run.out + run.err
    # kubectl 1.20 (Debian 12) says "evicted" where later versions say "drained".
    assert re.search(rf"^node/{dev_lab.node} (drained|evicted)$", run.out, re.MULTILINE), run.out
    pods = await dev_lab.kubectl(
        "get", "pods", "-A", "--field-selector", f"spec.nodeName={dev_lab.node}", "-o", "name"
    )
    assert pods.out.split() == [f"pod/kube-proxy-{dev_lab.node}"]
    nodes = await dev_lab.kubectl("get", "node", dev_lab.node)
    assert "Ready,SchedulingDisabled" in nodes.out
