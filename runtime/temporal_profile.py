"""Temporal's standard connection settings as a settings source under `VIRTFLOW_*`.

The `temporal` CLI, the SDKs and the Temporal Worker Controller configure a client with
`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS_*` and a profile of
`temporal.toml` (`TEMPORAL_CONFIG_FILE`, `TEMPORAL_PROFILE`). The SDK's `temporalio.envconfig`
reads them (environment over file, as the CLI does); this source hands the result to the
settings, below virtflow's own environment, file and secrets, so `VIRTFLOW_*` still wins. The
Worker Controller's `TEMPORAL_DEPLOYMENT_NAME` and `TEMPORAL_WORKER_BUILD_ID` are read here
too: a Pod given a build id runs as that version.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource
from temporalio.envconfig import ClientConfigProfile, DataSource

DEFAULT_FILE = Path("~/.config/temporalio/temporal.toml")

# Setting -> the standard environment variable that sets it (the profile key is alike).
ENV_NAMES: Mapping[str, str] = {
    "temporal_address": "TEMPORAL_ADDRESS",
    "temporal_namespace": "TEMPORAL_NAMESPACE",
    "temporal_api_key": "TEMPORAL_API_KEY",
    "temporal_tls": "TEMPORAL_TLS",
    "temporal_tls_server_root_ca": "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
    "temporal_tls_client_cert": "TEMPORAL_TLS_CLIENT_CERT_PATH",
    "temporal_tls_client_key": "TEMPORAL_TLS_CLIENT_KEY_PATH",
    "temporal_tls_server_name": "TEMPORAL_TLS_SERVER_NAME",
    # What the Temporal Worker Controller injects into the Pods of a version.
    "worker_deployment_name": "TEMPORAL_DEPLOYMENT_NAME",
    "worker_build_id": "TEMPORAL_WORKER_BUILD_ID",
}


class TemporalProfileError(ValueError):
    """The standard Temporal configuration cannot be used as it is; the message says why."""


def profile_file(environ: Mapping[str, str]) -> Path:
    """The `temporal.toml` the CLI and the SDK read (it need not exist)."""
    return Path(environ.get("TEMPORAL_CONFIG_FILE") or DEFAULT_FILE).expanduser()


def _path(source: DataSource | None, env: str) -> Path | None:
    if source is None or isinstance(source, Path):
        return source
    # Certificates are read from files by the settings (so `config check` can name them).
    raise TemporalProfileError(
        f"{env.removesuffix('_PATH')}_DATA (or the profile's *_data) is not supported: "
        f"write the PEM to a file and set {env}"
    )


def load_profile(environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings the standard Temporal configuration gives, by setting name."""
    try:
        profile = ClientConfigProfile.load(
            profile=environ.get("TEMPORAL_PROFILE"), override_env_vars=dict(environ)
        )
    except Exception as error:  # the bridge's ConfigError is not importable as a type
        raise TemporalProfileError(
            f"Temporal connection profile ({profile_file(environ)}): {error}"
        ) from None
    values: dict[str, Any] = {
        "temporal_address": profile.address,
        "temporal_namespace": profile.namespace,
        "temporal_api_key": profile.api_key,
    }
    if (tls := profile.tls) is not None:
        values |= {
            "temporal_tls": None if tls.disabled is None else not tls.disabled,
            "temporal_tls_server_name": tls.server_name,
            "temporal_tls_server_root_ca": _path(
                tls.server_root_ca_cert, ENV_NAMES["temporal_tls_server_root_ca"]
            ),
            "temporal_tls_client_cert": _path(
                tls.client_cert, ENV_NAMES["temporal_tls_client_cert"]
            ),
            "temporal_tls_client_key": _path(
                tls.client_private_key, ENV_NAMES["temporal_tls_client_key"]
            ),
        }
    if build := environ.get(ENV_NAMES["worker_build_id"]):
        values |= {"worker_build_id": build, "worker_versioning": True}
    values["worker_deployment_name"] = environ.get(ENV_NAMES["worker_deployment_name"])
    return {key: value for key, value in values.items() if value is not None}


def origin(key: str, environ: Mapping[str, str]) -> str:
    """Where the standard configuration took `key` from: its variable or the profile file."""
    env = ENV_NAMES.get(key, ENV_NAMES["worker_build_id"])  # versioning is on with a build id
    if env in environ:
        return f"environment {env}"
    name = environ.get("TEMPORAL_PROFILE") or "default"
    return f"{profile_file(environ)} (profile {name})"


class TemporalProfileSource(PydanticBaseSettingsSource):
    """The `temporal_*` settings from `TEMPORAL_*` and `temporal.toml`."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str] | None = None):
        super().__init__(settings_cls)
        self.environ = os.environ if environ is None else environ

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads the whole profile at once

    def __call__(self) -> dict[str, Any]:
        return load_profile(self.environ)
