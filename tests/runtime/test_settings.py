"""Settings come from the environment over a YAML file, and never print a secret."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from pydantic import SecretStr, ValidationError

from contracts.common import TASK_QUEUE
from runtime.settings import CONFIG_ENV, Settings, get_settings
from webhooks.signing import generate_secret


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import os

    for name in list(os.environ):
        if name.startswith("VIRTFLOW_"):
            monkeypatch.delenv(name)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_defaults_run_the_lab() -> None:
    settings = Settings()
    assert settings.task_queue == TASK_QUEUE
    assert settings.temporal_address == "localhost:7233"
    assert settings.inventories == {"default": "http://127.0.0.1:8091/inventory"}
    # In a Pod the service account, elsewhere KUBECONFIG: only `dev`/`demo` name the lab's.
    assert settings.kubeconfig is None
    assert settings.provisioner == "ansible"
    assert (settings.playbook_dir.parent / "pyproject.toml").is_file()
    assert settings.api_tokens == {}


def test_environment_sets_flat_and_nested_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = generate_secret()
    monkeypatch.setenv("VIRTFLOW_TEMPORAL_ADDRESS", "temporal.example:7233")
    monkeypatch.setenv("VIRTFLOW_STATE_DIR", "/var/lib/virtflow")
    monkeypatch.setenv("VIRTFLOW_INVENTORIES", '{"site-a": "/etc/virtflow/site-a.yaml"}')
    monkeypatch.setenv("VIRTFLOW_RECEIVERS__UPGRADECTRL__URL", "https://ctrl.example/hooks")
    monkeypatch.setenv("VIRTFLOW_RECEIVERS__UPGRADECTRL__SECRETS", f'["{secret}"]')
    settings = Settings()
    assert settings.temporal_address == "temporal.example:7233"
    assert settings.inventories == {"site-a": "/etc/virtflow/site-a.yaml"}
    receiver = settings.receivers["upgradectrl"]
    assert receiver.url == "https://ctrl.example/hooks"
    assert receiver.secrets[0].get_secret_value() == secret


def test_yaml_file_is_read_and_environment_wins(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "virtflow.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "temporal_namespace": "spares",
                "task_queue": "from-file",
                "provisioner": "gitlab",
                "ansible_extravars": {"lab_hypervisor_url": "http://hv:1"},
            }
        )
    )
    monkeypatch.setenv(CONFIG_ENV, str(config))
    monkeypatch.setenv("VIRTFLOW_TASK_QUEUE", "from-env")
    settings = get_settings()
    assert settings.temporal_namespace == "spares"
    assert settings.provisioner == "gitlab"
    assert settings.ansible_extravars == {"lab_hypervisor_url": "http://hv:1"}
    assert settings.task_queue == "from-env"
    assert get_settings() is settings


def test_a_missing_config_file_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONFIG_ENV, "/nonexistent/virtflow.yaml")
    with pytest.raises(FileNotFoundError, match="VIRTFLOW_CONFIG"):
        Settings()


def test_an_unknown_setting_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "virtflow.yaml"
    config.write_text("temporal_adress: typo:7233\n")
    monkeypatch.setenv(CONFIG_ENV, str(config))
    with pytest.raises(ValidationError, match="temporal_adress"):
        Settings()


def test_secrets_never_show_in_repr_or_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = generate_secret()
    token = "tok-3f9a0c1d2e"
    monkeypatch.setenv("VIRTFLOW_API_TOKENS", f'{{"{token}": "operator"}}')
    monkeypatch.setenv("VIRTFLOW_RECEIVER_SECRETS", f'["{secret}"]')
    settings = Settings()
    assert settings.api_tokens == {SecretStr(token): "operator"}
    for shown in (repr(settings), str(settings), settings.model_dump_json()):
        assert token not in shown
        assert secret not in shown
        assert "**********" in shown


@pytest.mark.parametrize("placeholder", ["changeme", "secret", "<your token>"])
def test_placeholder_tokens_are_refused(placeholder: str) -> None:
    with pytest.raises(ValidationError, match="placeholder"):
        Settings(api_tokens={placeholder: "operator"})


@pytest.mark.parametrize(
    ("setting", "value", "called"),
    [
        ("receiver_secrets", ["changeme"], "a receiver secret"),
        ("codec_server_tokens", ["<token>"], "a codec server token"),
        ("gitlab_trigger_token", "token", "a GitLab token"),
        ("gitlab_api_token", "TODO", "a GitLab token"),
    ],
)
def test_every_secret_setting_refuses_a_placeholder(
    setting: str, value: object, called: str
) -> None:
    with pytest.raises(ValidationError, match=f"{setting}\n.*{called} is a placeholder"):
        Settings.model_validate({setting: value})


def test_the_ui_link_names_namespace_and_workflow() -> None:
    settings = Settings(temporal_ui_url="http://ui:8233/", temporal_namespace="ns")
    assert (
        settings.workflow_ui_url("spare-a-b") == "http://ui:8233/namespaces/ns/workflows/spare-a-b"
    )


def test_a_worker_without_a_workflow_cache_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIRTFLOW_MAX_CACHED_WORKFLOWS", "0")
    with pytest.raises(
        ValidationError, match=r"max_cached_workflows\n.*greater than or equal to 1"
    ):
        Settings()
    monkeypatch.setenv("VIRTFLOW_MAX_CACHED_WORKFLOWS", "40")
    assert Settings().max_cached_workflows == 40
