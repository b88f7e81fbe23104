"""Process settings: environment (VIRTFLOW_*) over an optional YAML file (VIRTFLOW_CONFIG).

The defaults run the embedded lab, so `virtflow dev` needs no configuration at all. Secrets are
`SecretStr`: they show as `**********` in reprs and logs and are read only where they are used.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from activities.notify import ReceiverConfig
from workflows.names import TASK_QUEUE

CONFIG_ENV = "VIRTFLOW_CONFIG"
REPO_ROOT = Path(__file__).resolve().parents[1]

Role = Literal["operator", "upgrade-controller"]

# Values people paste from examples; a deployment that keeps them has no secret at all.
_PLACEHOLDERS = {"", "changeme", "change-me", "secret", "password", "token", "xxx", "todo"}


def _reject_placeholder(value: str, what: str) -> None:
    if value.strip().lower() in _PLACEHOLDERS or value.startswith("<"):
        raise ValueError(f"{what} is a placeholder, set a real value")


class Settings(BaseSettings):
    """Everything a virtflow process (worker, API, receiver, dev, demo) reads at start-up."""

    model_config = SettingsConfigDict(
        env_prefix="VIRTFLOW_",
        env_nested_delimiter="__",
        extra="forbid",
    )

    temporal_address: str = "localhost:7233"
    temporal_namespace: str = "default"
    task_queue: str = TASK_QUEUE
    temporal_ui_url: str = "http://localhost:8233"

    state_dir: Path = Path(".virtflow")
    # Inventory name -> file path or URL of the placement JSON form.
    inventories: dict[str, str] = Field(
        default_factory=lambda: {"default": "http://127.0.0.1:8091/inventory"}
    )
    policy_path: Path | None = None
    # None means state_dir/kubeconfig: the file the lab writes.
    kubeconfig: Path | None = None

    provisioner: Literal["ansible", "gitlab"] = "ansible"
    ansible_provider: str = "lab"
    playbook_dir: Path = REPO_ROOT / "playbooks"
    ansible_extravars: dict[str, str] = Field(
        default_factory=lambda: {"lab_hypervisor_url": "http://127.0.0.1:8091"}
    )

    # Webhook receivers by name; a request may only pick among these, never give a URL.
    receivers: dict[str, ReceiverConfig] = Field(default_factory=dict)
    # Secrets the reference receiver (`virtflow receiver`) verifies signatures with.
    receiver_secrets: list[SecretStr] = Field(default_factory=list)

    api_host: str = "127.0.0.1"
    api_port: int = Field(default=8080, ge=1, le=65535)
    receiver_port: int = Field(default=8090, ge=1, le=65535)
    # Bearer token -> role. Empty disables authentication (the lab); the API logs it.
    api_tokens: dict[SecretStr, Role] = Field(default_factory=dict)

    @field_validator("receiver_secrets")
    @classmethod
    def _real_secrets(cls, secrets: list[SecretStr]) -> list[SecretStr]:
        for secret in secrets:
            _reject_placeholder(secret.get_secret_value(), "a receiver secret")
        return secrets

    @field_validator("api_tokens")
    @classmethod
    def _real_tokens(cls, tokens: dict[SecretStr, Role]) -> dict[SecretStr, Role]:
        for token in tokens:
            _reject_placeholder(token.get_secret_value(), "an API token")
        return tokens

    @model_validator(mode="after")
    def _lab_kubeconfig(self) -> Settings:
        if self.kubeconfig is None:
            self.kubeconfig = self.state_dir / "kubeconfig"
        return self

    def workflow_ui_url(self, workflow_id: str) -> str:
        """Where an operator sees this workflow's history in the Temporal web UI."""
        base = self.temporal_ui_url.rstrip("/")
        return f"{base}/namespaces/{self.temporal_namespace}/workflows/{workflow_id}"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Read when settings are built, not at import, so tests can point VIRTFLOW_CONFIG anywhere.
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        config_file = os.environ.get(CONFIG_ENV)
        if config_file:
            if not Path(config_file).is_file():
                raise FileNotFoundError(f"{CONFIG_ENV}={config_file}: no such file")
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=config_file))
        sources.append(file_secret_settings)
        return tuple(sources)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, built once on first use."""
    return Settings()
