"""The one way every virtflow process (worker, API, CLI, dev) connects to Temporal.

Namespace, TLS or mTLS, API key, payload encryption, the process's telemetry runtime
(Prometheus) and the tracing interceptor all come from the settings here, so no entry point
can forget one of them.
"""

from __future__ import annotations

from temporalio.client import Client
from temporalio.runtime import Runtime
from temporalio.service import TLSConfig

from .encryption import codec_from, data_converter
from .settings import Settings
from .telemetry import process_runtime, tracing_interceptors


def tls_config(settings: Settings) -> TLSConfig | bool:
    """TLS as configured: a TLSConfig when any file or server name is given, else on/off."""
    ca = settings.temporal_tls_server_root_ca
    cert = settings.temporal_tls_client_cert
    key = settings.temporal_tls_client_key
    if settings.temporal_tls is False:
        return False
    if ca is None and cert is None and settings.temporal_tls_server_name is None:
        # An API key is a bearer token: not sent in the clear unless TLS is explicitly off.
        return settings.temporal_tls is True or settings.temporal_api_key is not None
    return TLSConfig(
        server_root_ca_cert=ca.read_bytes() if ca else None,
        domain=settings.temporal_tls_server_name,
        client_cert=cert.read_bytes() if cert else None,
        client_private_key=key.read_bytes() if key else None,
    )


async def connect(settings: Settings, runtime: Runtime | None = None) -> Client:
    """A client for the configured Temporal service; `runtime` defaults to the process's."""
    api_key = settings.temporal_api_key
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        api_key=api_key.get_secret_value() if api_key else None,
        tls=tls_config(settings),
        data_converter=data_converter(
            codec_from(settings.payload_keys, settings.payload_encryption_key_id)
        ),
        interceptors=tracing_interceptors(settings),
        runtime=runtime or process_runtime(settings),
    )
