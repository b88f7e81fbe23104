"""One Proxmox cluster (fakepve behind the lab front) for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import SECRET_SCAN
from tests.proxmox.cluster import PveCluster, start_cluster, stop_cluster


@pytest.fixture(scope="session")
def pve_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PveCluster]:
    pytest.importorskip("fakepve", reason="fakepve is not installed: pip install -e '.[test]'")
    pytest.importorskip("proxmoxer", reason="proxmoxer is not installed: pip install -e '.[test]'")
    cluster, thread = start_cluster(tmp_path_factory.mktemp("pve"))
    # The API token must never reach a workflow history or a log line.
    SECRET_SCAN.add("proxmox api token", cluster.token_secret)
    try:
        yield cluster
    finally:
        stop_cluster(cluster, thread)


@pytest.fixture
def pve(pve_cluster: PveCluster, monkeypatch: pytest.MonkeyPatch) -> PveCluster:
    """The cluster, trusted by requests (proxmoxer, the modules) through REQUESTS_CA_BUNDLE."""
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(pve_cluster.ca_file))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    pve_cluster.front.stats_delay = 0.0
    return pve_cluster
