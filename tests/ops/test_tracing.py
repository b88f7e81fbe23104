"""With `otel_endpoint` set, spans of the API and of Temporal calls reach an OTLP collector."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid

import httpx
import pytest
from fastapi import FastAPI, Request, Response
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from temporalio.client import Client

from api.app import create_app
from contracts.spare import SpareRequest
from runtime.connect import connect
from runtime.http_client import HttpClient
from runtime.logging_setup import JsonFormatter
from runtime.settings import Settings
from runtime.telemetry import flush_traces, tracer_provider, tracing_interceptors
from webhooks.serve import serve_app
from workflows.prepare_spare import PrepareSpare


def collector(received: list[ExportTraceServiceRequest]) -> FastAPI:
    """The OTLP/HTTP trace endpoint of a collector, on the real wire format (protobuf)."""
    app = FastAPI()

    @app.post("/v1/traces")
    async def traces(request: Request) -> Response:
        export = ExportTraceServiceRequest()
        export.ParseFromString(await request.body())
        received.append(export)
        return Response(status_code=200, media_type="application/x-protobuf")

    return app


def spans(received: list[ExportTraceServiceRequest]) -> dict[str, set[str]]:
    """Span names by service.name."""
    found: dict[str, set[str]] = {}
    for export in received:
        for resource in export.resource_spans:
            service = next(
                a.value.string_value
                for a in resource.resource.attributes
                if a.key == "service.name"
            )
            for scope in resource.scope_spans:
                found.setdefault(service, set()).update(s.name for s in scope.spans)
    return found


def test_tracing_is_off_without_an_endpoint() -> None:
    assert tracing_interceptors(Settings()) == []


async def test_api_and_workflow_start_spans_are_exported(client: Client) -> None:
    received: list[ExportTraceServiceRequest] = []
    service = f"virtflow-test-{uuid.uuid4().hex[:6]}"
    async with serve_app(collector(received)) as collector_url:
        settings = Settings(
            temporal_address=client.service_client.config.target_host,
            otel_endpoint=collector_url,
            otel_service_name=service,
        )
        traced = await connect(settings)

        async def same_client() -> Client:
            return traced

        api = create_app(settings, client_factory=same_client)
        transport = httpx.ASGITransport(app=api)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
            assert (await http.get("/healthz")).status_code == 200
        request = SpareRequest.model_validate(
            {"request_id": "trace-1", "cluster": "lab", "cpu": 2, "memory_mb": 2048}
        )
        handle = await traced.start_workflow(
            PrepareSpare.run,
            request,
            id=f"spare-trace-{uuid.uuid4().hex[:8]}",
            task_queue=f"tq-{uuid.uuid4()}",
        )
        await handle.terminate("only the start was traced")
        await asyncio.to_thread(flush_traces, settings)

    names = spans(received).get(service, set())
    assert "GET /healthz" in names, names
    assert "StartWorkflow:PrepareSpare" in names, names


def _export_one_span(settings: Settings, name: str) -> None:
    provider = tracer_provider(settings)
    assert provider is not None, "tracing is off"
    with provider.get_tracer("test").start_as_current_span(name):
        pass
    provider.force_flush()


async def test_the_standard_otel_variables_turn_tracing_on_and_name_the_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    received: list[ExportTraceServiceRequest] = []
    async with serve_app(collector(received)) as collector_url:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector_url)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "from-otel-env")
        await asyncio.to_thread(_export_one_span, Settings(), "env-span")
    assert "env-span" in spans(received).get("from-otel-env", set()), spans(received)


async def test_virtflows_own_settings_override_the_otel_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    received: list[ExportTraceServiceRequest] = []
    async with serve_app(collector(received)) as collector_url:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "from-otel-env")
        settings = Settings(otel_endpoint=collector_url, otel_service_name="from-settings")
        await asyncio.to_thread(_export_one_span, settings, "override-span")
    assert "override-span" in spans(received).get("from-settings", set()), spans(received)


def test_otel_sdk_disabled_turns_the_variables_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert tracer_provider(Settings()) is None


async def test_outbound_calls_carry_the_current_span_as_traceparent() -> None:
    seen: list[str | None] = []
    app = FastAPI()

    @app.get("/vms/x")
    async def vm(request: Request) -> Response:
        seen.append(request.headers.get("traceparent"))
        return Response(status_code=404)

    provider = TracerProvider()
    http = HttpClient()
    try:
        async with serve_app(app) as url:
            await http.request("GET", f"{url}/vms/x")  # no span: nothing to propagate
            with provider.get_tracer("test").start_as_current_span("create_vm") as span:
                await http.request("GET", f"{url}/vms/x")
                trace_id = trace.format_trace_id(span.get_span_context().trace_id)
    finally:
        await http.aclose()
    assert seen[0] is None
    assert seen[1] is not None and seen[1].split("-")[1] == trace_id, seen


def test_json_log_lines_carry_the_trace_id() -> None:
    record = logging.LogRecord("virtflow", logging.INFO, __file__, 1, "inside", None, None)
    with TracerProvider().get_tracer("test").start_as_current_span("step") as span:
        line = json.loads(JsonFormatter().format(record))
    assert line["trace_id"] == trace.format_trace_id(span.get_span_context().trace_id)
    assert "trace_id" not in json.loads(JsonFormatter().format(record))
