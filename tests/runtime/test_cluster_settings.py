"""The `clusters` setting: a single-cluster site keeps its settings; a broken registry is
refused at start-up, naming the key at fault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from runtime.clusters import NotAllowed
from runtime.settings import Settings


def test_a_site_without_clusters_registers_its_one_cluster(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    settings = Settings(kubeconfig=kubeconfig, cluster_name="prod")
    registry = settings.cluster_registry
    assert registry.names == ["prod"]
    assert registry.get("prod").kubeconfig == kubeconfig
    assert registry.get("prod").max_spares is None


def test_registered_clusters_are_the_only_ones() -> None:
    settings = Settings(clusters={"a": {}, "b": {"kubeconfig_secret_namespace": "capi"}})
    assert settings.cluster_registry.names == ["a", "b"]
    with pytest.raises(NotAllowed) as refused:
        settings.cluster_registry.get("lab")
    assert refused.value.reason == "unknown cluster 'lab' (registered: a, b)"
    assert refused.value.unknown_cluster


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"clusters": {"a": {}}, "kubeconfig": "/k"},
            "kubeconfig: describe the one cluster of a site without `clusters`",
        ),
        (
            {"clusters": {"a": {"receivers": ["nobody"]}}},
            "clusters.a.receivers: unknown name 'nobody' (configured: none)",
        ),
        (
            {"clusters": {"a": {"inventories": ["elsewhere"]}}},
            "clusters.a.inventories: unknown name 'elsewhere' (configured: default)",
        ),
        (
            {"clusters": {"A_b": {}}},
            "clusters.A_b: a cluster name is a DNS label",
        ),
        (
            {"clusters": {"a": {"kubeconfig": "/k", "kubeconfig_secret_namespace": "capi"}}},
            "set kubeconfig or kubeconfig_secret_namespace, not both",
        ),
        (
            {"clusters": {"a": {"join_api_server": "http://x:6443"}}},
            "'http://x:6443' is not an https:// URL",
        ),
        (
            {
                "clusters": {"a": {}},
                "warm_pools": [{"name": "w", "cluster": "lab", "cpu": 1, "memory_mb": 512}],
            },
            "warm_pools.w.cluster: unknown cluster 'lab' (registered: a)",
        ),
        (
            {
                "clusters": {"a": {"max_spares": 2}},
                "inventories": {"dc1": "http://127.0.0.1:1/i", "dc2": "http://127.0.0.1:2/i"},
            },
            "clusters.a.max_spares: the surge budget is kept by one inventory's ledger; give "
            "the cluster one inventory (`inventories: [name]`), not 2",
        ),
    ],
)
def test_a_broken_registry_is_refused_naming_the_key(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings.model_validate(config)
    assert message in str(refused.value)


def test_a_budget_is_kept_by_the_one_inventory_its_cluster_may_use() -> None:
    two = {"dc1": "http://127.0.0.1:1/i", "dc2": "http://127.0.0.1:2/i"}
    named = Settings.model_validate(
        {"inventories": two, "clusters": {"a": {"max_spares": 2, "inventories": ["dc1"]}}}
    )
    assert named.cluster_registry.get("a").max_spares == 2
    # A site of one inventory needs no name for it.
    only = Settings.model_validate({"clusters": {"a": {"max_spares": 2}}})
    assert only.cluster_registry.get("a").max_spares == 2
