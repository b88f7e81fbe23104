"""Temporal's standard connection settings (TEMPORAL_*, temporal.toml) fill the `temporal_*`
settings; virtflow's own (VIRTFLOW_*, its file, its secrets) still win; `config check` says
where each value came from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from cli.main import app
from runtime.connect import tls_config
from runtime.settings import Settings
from runtime.temporal_profile import TemporalProfileError

PROFILE = """
[profile.default]
address = "file.example:7233"
namespace = "from-file"

[profile.prod]
address = "prod.example:7233"
namespace = "prod"
api_key = "key-prod-7e6d5c"

[profile.prod.tls]
server_name = "temporal.prod"
client_cert_path = "{cert}"
client_key_path = "{key}"
"""


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in list(os.environ):
        if name.startswith(("VIRTFLOW_", "TEMPORAL_")):
            monkeypatch.delenv(name)
    cert, key = tmp_path / "client.pem", tmp_path / "client.key"
    cert.write_text("pem of the cert")
    key.write_text("pem of the key")
    toml = tmp_path / "temporal.toml"
    toml.write_text(PROFILE.format(cert=cert, key=key))
    # Never the home directory's profile of whoever runs the tests.
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(tmp_path / "absent.toml"))
    return toml


def test_temporal_environment_variables_fill_the_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", "env.example:7233")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "spares")
    monkeypatch.setenv("TEMPORAL_API_KEY", "key-env-1a2b3c")
    settings = Settings()
    assert settings.temporal_address == "env.example:7233"
    assert settings.temporal_namespace == "spares"
    assert settings.temporal_api_key == SecretStr("key-env-1a2b3c")
    # An API key means TLS, as the CLI and the SDK do it.
    assert tls_config(settings) is True
    monkeypatch.setenv("TEMPORAL_TLS", "false")
    assert tls_config(Settings()) is False


def test_virtflow_settings_win_over_the_standard_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", "env.example:7233")
    monkeypatch.setenv("VIRTFLOW_TEMPORAL_ADDRESS", "virtflow.example:7233")
    assert Settings().temporal_address == "virtflow.example:7233"


def test_a_profile_of_temporal_toml_is_read_and_the_environment_wins_over_it(
    monkeypatch: pytest.MonkeyPatch, clean_env: Path, tmp_path: Path
) -> None:
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(clean_env))
    assert Settings().temporal_address == "file.example:7233"
    monkeypatch.setenv("TEMPORAL_PROFILE", "prod")
    settings = Settings()
    assert settings.temporal_namespace == "prod"
    assert settings.temporal_api_key == SecretStr("key-prod-7e6d5c")
    mtls = tls_config(settings)
    assert not isinstance(mtls, bool)
    assert (mtls.domain, mtls.client_cert) == ("temporal.prod", b"pem of the cert")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "override")
    assert Settings().temporal_namespace == "override"


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"TEMPORAL_PROFILE": "absent"}, "Profile 'absent' not found"),
        (
            {"TEMPORAL_TLS_CLIENT_CERT_DATA": "-----BEGIN CERTIFICATE-----"},
            "set TEMPORAL_TLS_CLIENT_CERT_PATH",
        ),
    ],
)
def test_an_unusable_standard_configuration_says_why(
    monkeypatch: pytest.MonkeyPatch, clean_env: Path, env: dict[str, str], said: str
) -> None:
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(clean_env))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(TemporalProfileError, match=said):
        Settings()
    result = CliRunner().invoke(app, ["config", "check"])
    assert result.exit_code == 2
    assert said in " ".join(result.stderr.split())


def test_config_check_says_where_each_value_came_from(
    monkeypatch: pytest.MonkeyPatch, clean_env: Path, tmp_path: Path
) -> None:
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(clean_env))
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "spares")
    monkeypatch.setenv("VIRTFLOW_LOG_LEVEL", "DEBUG")
    config = tmp_path / "virtflow.yaml"
    config.write_text("task_queue: spares-a\n")
    result = CliRunner().invoke(app, ["config", "check", str(config)])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert f"#   temporal_address: {clean_env} (profile default)" in lines
    assert "#   temporal_namespace: environment TEMPORAL_NAMESPACE" in lines
    assert "#   log_level: environment VIRTFLOW_LOG_LEVEL" in lines
    assert f"#   task_queue: file {config}" in lines


def test_the_worker_controllers_variables_make_the_worker_a_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().worker_versioning is False
    monkeypatch.setenv("TEMPORAL_DEPLOYMENT_NAME", "spares")
    monkeypatch.setenv("TEMPORAL_WORKER_BUILD_ID", "2026.11.3")
    settings = Settings()
    assert (settings.worker_versioning, settings.worker_deployment_name) == (True, "spares")
    assert settings.worker_build_id == "2026.11.3"
    result = CliRunner().invoke(app, ["config", "check"])
    assert "#   worker_build_id: environment TEMPORAL_WORKER_BUILD_ID" in result.stdout
    assert "#   worker_versioning: environment TEMPORAL_WORKER_BUILD_ID" in result.stdout
