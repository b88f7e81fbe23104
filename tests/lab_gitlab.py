"""A lab GitLab in front of a one-host lab hypervisor, running the real lab playbook."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from lab.gitlab import LabGitLab
from lab.hypervisor import LabHypervisor

PLAYBOOKS = Path(__file__).resolve().parents[1] / "playbooks"


@asynccontextmanager
async def running_lab_gitlab(workdir: Path) -> AsyncIterator[tuple[LabGitLab, LabHypervisor]]:
    hv = LabHypervisor([{"name": "bm-1", "cpu_capacity": 16, "memory_mb_capacity": 65536}])
    await hv.start()
    server = LabGitLab(
        PLAYBOOKS,
        {
            "VIRTFLOW_HYPERVISOR": "lab",
            "VIRTFLOW_EXTRAVARS": json.dumps({"lab_hypervisor_url": hv.url}),
        },
        workdir=workdir,
    )
    await server.start()
    try:
        yield server, hv
    finally:
        await server.stop()
        await hv.stop()
