"""Which cluster the worker talks to: the named kubeconfig, else the Pod's service account,
else `KUBECONFIG` (the order kubectl and client-go follow)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.kubernetes import KubernetesActivities, kube_config
from contracts.kubernetes import NodeNameInput


def _current(kubeconfig: Path | None, service_account: Path) -> Any:
    """The context lightkube would use."""
    config = kube_config(kubeconfig, service_account).get()
    assert config is not None
    return config


def _kubeconfig(path: Path, server: str) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


def _service_account(directory: Path) -> Path:
    directory.mkdir()
    (directory / "token").write_text("pod-token")
    (directory / "namespace").write_text("virtflow")
    (directory / "ca.crt").write_text("")
    return directory


@pytest.fixture
def in_cluster_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")


def test_a_named_kubeconfig_wins_over_the_service_account(
    tmp_path: Path, in_cluster_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = _kubeconfig(tmp_path / "named", "https://named.example:6443")
    monkeypatch.setenv("KUBECONFIG", str(_kubeconfig(tmp_path / "env", "https://env.example")))
    config = _current(named, _service_account(tmp_path / "sa"))
    assert config.cluster.server == "https://named.example:6443"


def test_unset_means_the_pods_service_account_first(
    tmp_path: Path, in_cluster_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(_kubeconfig(tmp_path / "env", "https://env.example")))
    config = _current(None, _service_account(tmp_path / "sa"))
    assert config.cluster.server == "https://10.96.0.1:443"
    assert config.user.token == "pod-token"
    assert config.namespace == "virtflow"


def test_outside_a_pod_unset_means_the_kubeconfig_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(_kubeconfig(tmp_path / "env", "https://env.example")))
    config = _current(None, tmp_path / "no-service-account")
    assert config.cluster.server == "https://env.example"


async def test_no_configuration_at_all_fails_at_once_saying_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    acts = KubernetesActivities(None, service_account=tmp_path / "no-service-account")
    with pytest.raises(ApplicationError) as failed:
        await ActivityEnvironment().run(acts.delete_node, NodeNameInput(node_name="vm1"))
    assert failed.value.non_retryable
    assert failed.value.type == "KubernetesConfigError"
    assert "VIRTFLOW_KUBECONFIG" in str(failed.value)
