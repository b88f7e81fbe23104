"""With `otel_endpoint` set, spans of the API and of Temporal calls reach an OTLP collector."""

from __future__ import annotations

import asyncio
import uuid

import httpx
from fastapi import FastAPI, Request, Response
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from temporalio.client import Client

from api.app import create_app
from contracts.spare import SpareRequest
from runtime.connect import connect
from runtime.settings import Settings
from runtime.telemetry import flush_traces, tracing_interceptors
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
