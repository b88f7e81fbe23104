"""The commands that run virtflow's processes: `dev` and `demo` (everything on this machine),
`lab` (the stand-in site alone), `worker`, `api`, `receiver` and `codec-server`."""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Annotated

import typer

from api.temporal_client import ClientProvider, connect_factory
from runtime.logging_setup import configure_logging

from .common import EXIT_BAD_INPUT, console, fail, run, settings

log = logging.getLogger("virtflow")


def _need_lab() -> None:
    """`dev` and `demo` run the lab, whose parts are the `lab` extra, not the product's."""
    import importlib.util

    missing = [m for m in ("cryptography",) if importlib.util.find_spec(m) is None]
    if missing:
        fail(f"the lab needs {', '.join(missing)}: pip install 'virtflow[lab]'", EXIT_BAD_INPUT)


def dev(
    ready_delay: Annotated[
        float, typer.Option(help="Seconds the lab kubelet takes to be Ready")
    ] = 5.0,
) -> None:
    """Run Temporal, the lab, the worker, the API and the receiver until Ctrl-C."""
    _need_lab()
    from .dev import run_dev

    config = settings()
    configure_logging(config)
    raise typer.Exit(asyncio.run(run_dev(config, console, ready_delay)))


def lab(
    host: Annotated[str, typer.Option(help="Address the lab servers listen on")] = "0.0.0.0",
    kube_name: Annotated[
        str, typer.Option(help="Host name the kubeconfig gives the lab Kubernetes API")
    ] = "kubernetes",
) -> None:
    """Serve only the lab site (hypervisor, Kubernetes API, kubelet) until SIGTERM, writing its
    kubeconfig under state_dir: the stand-in site of docker-compose.yml."""
    _need_lab()
    from .dev import run_lab

    config = settings()
    configure_logging(config)
    raise typer.Exit(asyncio.run(run_lab(config.state_dir, host, kube_name, console)))


def demo() -> None:
    """Provision and release one spare end to end on a fresh lab, then exit."""
    _need_lab()
    from .demo import run_demo

    raise typer.Exit(asyncio.run(run_demo(settings(), console)))


def worker() -> None:
    """Run a worker on the configured Temporal service until SIGINT/SIGTERM."""
    from runtime.telemetry import flush_traces
    from worker.worker import run_worker

    config = settings()
    configure_logging(config)

    async def serve() -> None:
        # The worker's own runtime: it serves Prometheus on metrics_port.
        client = await ClientProvider(connect_factory(config)).get()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        log.info(
            "worker on task queue %s at %s (namespace %s)",
            config.task_queue,
            config.temporal_address,
            config.temporal_namespace,
        )
        await run_worker(config, client, stop)

    try:
        run(serve())
    finally:
        flush_traces(config)


def api() -> None:
    """Serve the HTTP API (OpenAPI at /docs)."""
    import uvicorn

    from api.app import create_app
    from runtime.telemetry import flush_traces

    config = settings()
    configure_logging(config)
    try:
        uvicorn.run(
            create_app(config),
            host=config.api_host,
            port=config.api_port,
            log_config=None,
            **config.http_limits.uvicorn_options(),
        )
    finally:
        # uvicorn returns after SIGTERM: the spans of the last requests still go out.
        flush_traces(config)


def receiver() -> None:
    """Serve the reference webhook receiver with VIRTFLOW_RECEIVER_SECRETS."""
    import uvicorn

    from webhooks.bounded import BodyDeadline
    from webhooks.receiver import create_receiver_app

    config = settings()
    configure_logging(config)
    secrets = [s.get_secret_value() for s in config.receiver_secrets]
    if not secrets:
        fail("set VIRTFLOW_RECEIVER_SECRETS (a JSON list of whsec_ secrets)", EXIT_BAD_INPUT)
    config.state_dir.mkdir(parents=True, exist_ok=True)
    try:
        receiver_app = create_receiver_app(secrets, config.state_dir / "receiver.sqlite")
    except ValueError as err:
        fail(f"bad receiver secret: {err}", EXIT_BAD_INPUT)
    limits = config.http_limits
    uvicorn.run(
        BodyDeadline(receiver_app, limits.body_seconds),
        host=config.api_host,
        port=config.receiver_port,
        log_config=None,
        **limits.uvicorn_options(),
    )


def codec_server() -> None:
    """Serve the codec server the web UI and `temporal` CLI call to decode payloads."""
    import uvicorn

    from api.codec_server import create_codec_app
    from runtime.encryption import EncryptionCodec, PayloadKeyError

    config = settings()
    configure_logging(config)
    if not config.payload_keys:
        fail(
            "set payload_keys (files virtflow_payload_keys__<id> in the secrets directory)",
            EXIT_BAD_INPUT,
        )
    try:
        codec = EncryptionCodec(config.payload_keys, config.payload_encryption_key_id)
    except PayloadKeyError as err:
        fail(str(err), EXIT_BAD_INPUT)
    codec_app = create_codec_app(codec, config.codec_server_tokens, config.codec_origins)
    uvicorn.run(codec_app, host=config.api_host, port=config.codec_server_port, log_config=None)
