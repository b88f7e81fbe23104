"""Metrics and traces of a virtflow process.

Metrics: one SDK runtime per process serves Prometheus on `metrics_port`; the SDK's own
metrics and virtflow's (`contracts/metrics.py`, recorded through the SDK meters) share it.
Traces: the SDK's OpenTelemetry interceptor (workflow, activity, client spans) and the
FastAPI instrumentation, exported over OTLP/HTTP when `otel_endpoint` is set, off otherwise.
"""

from __future__ import annotations

import logging
import os
from functools import cache
from typing import Any

from temporalio.client import Interceptor
from temporalio.runtime import (
    LogForwardingConfig,
    LoggingConfig,
    PrometheusConfig,
    Runtime,
    TelemetryConfig,
    TelemetryFilter,
)

from contracts import metrics

from .settings import Settings

DEFAULT_SERVICE_NAME = "virtflow"


def metrics_address(settings: Settings) -> str | None:
    if settings.metrics_port is None:
        return None
    return f"{settings.metrics_host}:{settings.metrics_port}"


@cache
def _runtime(bind_address: str | None) -> Runtime:
    # Cached: a second Runtime on the same address would fail to bind.
    # The SDK core's own log lines go through Python logging, so they share the log format.
    forwarding = LogForwardingConfig(logger=logging.getLogger("temporalio.core"))
    return Runtime(
        telemetry=TelemetryConfig(
            logging=LoggingConfig(
                filter=TelemetryFilter(core_level="WARN", other_level="ERROR"),
                forwarding=forwarding,
            ),
            # Seconds, with buckets for minutes-long phases (contracts/metrics.py).
            metrics=PrometheusConfig(
                bind_address=bind_address,
                durations_as_seconds=True,
                histogram_bucket_overrides=metrics.BUCKETS,
            )
            if bind_address
            else None,
        )
    )


def process_runtime(settings: Settings) -> Runtime:
    """The SDK runtime of a serving process (worker, API, dev): core logs forwarded to Python
    logging, and a Prometheus endpoint when one is configured."""
    return _runtime(metrics_address(settings))


def command_runtime() -> Runtime:
    """The SDK runtime of an operator command (`replay`, `inventory`, `explain`): core logs
    forwarded, no Prometheus endpoint. Such a command often runs inside a worker's Pod, whose
    worker already holds `metrics_port`, and it lives too briefly to be scraped."""
    return _runtime(None)


@cache
def _tracer_provider(
    endpoint: str | None, service_name: str | None, otel_env: tuple[tuple[str, str], ...]
) -> Any:
    """One provider per configuration (`otel_env`: the OTEL_* variables it was built from)."""
    # Imported here: a process without tracing does not load the exporter.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # Resource.create reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME; the sampler comes
    # from OTEL_TRACES_SAMPLER, the exporter's headers, timeout and TLS from OTEL_EXPORTER_OTLP_*.
    resource = Resource.create({SERVICE_NAME: service_name} if service_name else {})
    provider = TracerProvider(resource=resource)
    exporter = OTLPSpanExporter(endpoint=endpoint) if endpoint else OTLPSpanExporter()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _traces_endpoint(settings: Settings) -> tuple[bool, str | None]:
    """(tracing on, the endpoint to pass; None: the exporter reads the OTEL_* variables)."""
    if settings.otel_endpoint:
        return True, f"{settings.otel_endpoint.rstrip('/')}/v1/traces"
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False, None
    env = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    return bool(env), None


def _service_name(settings: Settings) -> str | None:
    """virtflow's setting, else OTEL_SERVICE_NAME (or a service.name in
    OTEL_RESOURCE_ATTRIBUTES), else `virtflow`; None lets the SDK read the variables."""
    if settings.otel_service_name:
        return settings.otel_service_name
    if os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    ):
        return None
    return DEFAULT_SERVICE_NAME


def tracer_provider(settings: Settings) -> Any | None:
    """The process's tracer provider, or None when tracing is off: on with `otel_endpoint`, or
    with the standard OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT (unless OTEL_SDK_DISABLED)."""
    on, endpoint = _traces_endpoint(settings)
    if not on:
        return None
    otel_env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("OTEL_")))
    return _tracer_provider(endpoint, _service_name(settings), otel_env)


def tracing_interceptors(settings: Settings) -> list[Interceptor]:
    """The SDK's tracing interceptor when tracing is on; it serves client and worker alike."""
    provider = tracer_provider(settings)
    if provider is None:
        return []
    from temporalio.contrib.opentelemetry import TracingInterceptor

    return [TracingInterceptor(provider.get_tracer("virtflow"))]


def instrument_api(app: Any, settings: Settings) -> None:
    """HTTP server spans for the API, when tracing is on."""
    provider = tracer_provider(settings)
    if provider is None:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    FastAPIInstrumentor.instrument_app(app, tracer_provider=provider)


def flush_traces(settings: Settings) -> None:
    """Export buffered spans before the process ends."""
    provider = tracer_provider(settings)
    if provider is not None:
        provider.force_flush()
