"""Metrics and traces of a virtflow process.

Metrics: one SDK runtime per process serves Prometheus on `metrics_port`; the SDK's own
metrics and virtflow's (`activities/metrics.py`, recorded through the SDK meters) share it.
Traces: the SDK's OpenTelemetry interceptor (workflow, activity, client spans) and the
FastAPI instrumentation, exported over OTLP/HTTP when `otel_endpoint` is set, off otherwise.
"""

from __future__ import annotations

import logging
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

from activities import metrics

from .settings import Settings


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
            # Seconds, with buckets for minutes-long phases (activities/metrics.py).
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
    """The SDK runtime for this process: core logs forwarded to Python logging, and a
    Prometheus endpoint when one is configured."""
    return _runtime(metrics_address(settings))


@cache
def _tracer_provider(endpoint: str, service_name: str) -> Any:
    # Imported here: a process without tracing does not load the exporter.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service_name}))
    exporter = OTLPSpanExporter(endpoint=f"{endpoint.rstrip('/')}/v1/traces")
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def tracer_provider(settings: Settings) -> Any | None:
    """The process's tracer provider, or None when tracing is off."""
    if not settings.otel_endpoint:
        return None
    return _tracer_provider(settings.otel_endpoint, settings.otel_service_name)


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
