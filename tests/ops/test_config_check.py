"""`virtflow config check` names the bad key, masks secrets; secrets come from files too."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import SecretStr
from typer.testing import CliRunner

from cli.config import MASK, settings_reference
from cli.main import app
from runtime.connect import tls_config
from runtime.settings import REPO_ROOT, SECRETS_DIR_ENV, Settings
from webhooks.signing import generate_secret

runner = CliRunner()


def check(path: Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["config", "check", str(path)])
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path: Path, doc: dict[str, object]) -> Path:
    path = tmp_path / "virtflow.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize(
    ("doc", "named"),
    [
        ({"temporal_adress": "typo:7233"}, "temporal_adress: Extra inputs are not permitted"),
        ({"api_port": 99999}, "api_port (VIRTFLOW_API_PORT): Input should be less than"),
        ({"log_format": "xml"}, "log_format (VIRTFLOW_LOG_FORMAT): Input should be"),
        (
            {"receivers": {"ctrl": {"url": "https://ctrl.example/hooks", "secrets": []}}},
            "receivers.ctrl.secrets (VIRTFLOW_RECEIVERS): List should have at least 1 item",
        ),
        ({"temporal_tls_server_root_ca": "/nonexistent/ca.pem"}, "temporal_tls_server_root_ca"),
    ],
)
def test_a_bad_key_is_named_and_exits_2(tmp_path: Path, doc: dict[str, object], named: str) -> None:
    code, out, err = check(write(tmp_path, doc))
    assert code == 2
    assert named in " ".join(err.split())
    assert out == ""


def test_a_client_cert_without_its_key_is_refused(tmp_path: Path) -> None:
    cert = tmp_path / "client.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    code, _, err = check(write(tmp_path, {"temporal_tls_client_cert": str(cert)}))
    assert code == 2
    assert "temporal_tls_client_cert and temporal_tls_client_key" in err


def test_a_missing_file_and_broken_yaml_exit_2(tmp_path: Path) -> None:
    assert check(tmp_path / "absent.yaml")[0] == 2
    broken = tmp_path / "broken.yaml"
    broken.write_text("receivers: [unclosed\n")
    code, _, err = check(broken)
    assert code == 2
    assert "broken.yaml" in err


def test_a_valid_configuration_prints_with_every_secret_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whsec, token, api_key = generate_secret(), "tok-5b1e0c9d7f", "key-0d9c8b7a6f5e"
    path = write(
        tmp_path,
        {
            "temporal_namespace": "spares",
            "receivers": {"ctrl": {"url": "https://ctrl.example/hooks", "secrets": [whsec]}},
            "api_tokens": {token: "operator"},
        },
    )
    monkeypatch.setenv("VIRTFLOW_TEMPORAL_API_KEY", api_key)
    code, out, _ = check(path)
    assert code == 0
    shown = yaml.safe_load(out)
    assert shown["temporal_namespace"] == "spares"
    assert shown["temporal_api_key"] == MASK
    assert shown["receivers"]["ctrl"]["secrets"] == [MASK]
    assert shown["api_tokens"] == [f"{MASK} (operator)"]
    for secret in (whsec, token, api_key):
        assert secret not in out


def test_secrets_are_read_from_one_file_per_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "virtflow_temporal_api_key").write_text("key-from-a-file\n")
    (secrets / "virtflow_api_tokens").write_text('{"tok-file-0a1b2c": "operator"}')
    monkeypatch.setenv(SECRETS_DIR_ENV, str(secrets))
    settings = Settings()
    assert settings.temporal_api_key == SecretStr("key-from-a-file")
    assert settings.api_tokens == {SecretStr("tok-file-0a1b2c"): "operator"}
    # The environment still wins over a file.
    monkeypatch.setenv("VIRTFLOW_TEMPORAL_API_KEY", "key-from-env")
    assert Settings().temporal_api_key == SecretStr("key-from-env")


def test_tls_follows_the_settings(tmp_path: Path) -> None:
    ca, cert, key = (tmp_path / n for n in ("ca.pem", "client.pem", "client.key"))
    for path in (ca, cert, key):
        path.write_bytes(f"pem of {path.name}".encode())
    assert tls_config(Settings()) is False
    assert tls_config(Settings(temporal_api_key=SecretStr("k-1f2e3d"))) is True
    assert tls_config(Settings(temporal_api_key=SecretStr("k-1f2e3d"), temporal_tls=False)) is False
    mtls = tls_config(
        Settings(
            temporal_tls_server_root_ca=ca,
            temporal_tls_client_cert=cert,
            temporal_tls_client_key=key,
            temporal_tls_server_name="temporal.internal",
        )
    )
    assert not isinstance(mtls, bool)
    assert mtls.server_root_ca_cert == b"pem of ca.pem"
    assert mtls.client_cert == b"pem of client.pem"
    assert mtls.client_private_key == b"pem of client.key"
    assert mtls.domain == "temporal.internal"


def test_the_settings_reference_page_is_up_to_date() -> None:
    page = REPO_ROOT / "docs" / "SETTINGS.md"
    assert page.read_text() == settings_reference(), (
        "docs/SETTINGS.md is stale: run `virtflow config docs -o docs/SETTINGS.md`"
    )


def test_a_nested_secret_file_fills_one_key_of_a_receiver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whsec = generate_secret()
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "virtflow_receivers__ctrl__secrets").write_text(f'["{whsec}"]')
    monkeypatch.setenv(SECRETS_DIR_ENV, str(secrets))
    monkeypatch.setenv("VIRTFLOW_RECEIVERS__CTRL__URL", "https://ctrl.example/hooks")
    receiver = Settings().receivers["ctrl"]
    assert receiver.url == "https://ctrl.example/hooks"
    assert receiver.secrets == [SecretStr(whsec)]


JOINING: dict[str, object] = {
    "vm_templates": {"default": {"user_data": "token: {{ join_token }}\n"}}
}


def test_in_a_pod_the_join_needs_its_own_api_server_and_check_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    code, out, err = check(write(tmp_path, JOINING))
    assert code == 2 and out == ""
    said = " ".join(err.split())
    assert "join_api_server: must be set when the worker runs in a Pod" in said
    assert "VIRTFLOW_JOIN_API_SERVER" in said and "10.96.0.1" in said

    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    advertised = {"join_api_server": "https://cp.example:6443", "join_api_server_ca": str(ca)}
    code, out, _ = check(write(tmp_path, {**JOINING, **advertised}))
    assert code == 0, out
    assert "join_api_server: https://cp.example:6443" in out


def test_outside_a_pod_the_join_defaults_to_the_workers_api_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    code, _, err = check(write(tmp_path, JOINING))
    assert code == 0, err


def test_check_says_a_value_came_from_the_secrets_directory_not_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "virtflow_temporal_api_key").write_text("key-from-a-file\n")
    (secrets / "virtflow_receivers__ctrl__secrets").write_text(f'["{generate_secret()}"]')
    monkeypatch.setenv(SECRETS_DIR_ENV, str(secrets))
    monkeypatch.setenv("VIRTFLOW_TASK_QUEUE", "from-env")
    config = write(tmp_path, {"receivers": {"ctrl": {"url": "https://ctrl.example/hooks"}}})
    code, out, err = check(config)
    assert code == 0, err
    said = {
        key: where
        for key, _, where in (
            line.removeprefix("#   ").partition(": ")
            for line in out.splitlines()
            if line.startswith("#   ")
        )
    }
    assert said["temporal_api_key"] == f"secrets file {secrets / 'virtflow_temporal_api_key'}"
    assert said["task_queue"] == "environment VIRTFLOW_TASK_QUEUE"
    # The YAML file names the receiver; the file of its nested key is read as well.
    assert said["receivers"] == f"file {config}"
