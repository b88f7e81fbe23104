"""Run the reference receiver: in-process (lab, tests) or as its own process.

    WEBHOOK_SECRETS="whsec_... whsec_..." python -m webhooks.serve --db events.sqlite --port 8088

Several secrets (space- or comma-separated) are all accepted, which is how a key rotates.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from .receiver import create_receiver_app

SECRETS_ENV = "WEBHOOK_SECRETS"
_STARTUP_TIMEOUT_SECONDS = 10.0


class _EmbeddedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # In-process servers must leave Ctrl-C to their host program.
        yield


@contextlib.asynccontextmanager
async def serve_app(app: FastAPI, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Serve `app` on the running loop; yields its base URL (port 0 picks a free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound_port = sock.getsockname()[1]
    server = _EmbeddedServer(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(_STARTUP_TIMEOUT_SECONDS):
            while not server.started:
                if task.done():
                    task.result()  # surfaces the start-up error
                    raise RuntimeError("the webhook receiver stopped during start-up")
                await asyncio.sleep(0.005)
        yield f"http://{host}:{bound_port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


def _secrets_from_env() -> list[str]:
    raw = os.environ.get(SECRETS_ENV, "")
    return [s for s in raw.replace(",", " ").split() if s]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="virtflow reference webhook receiver")
    parser.add_argument("--db", type=Path, default=Path(".virtflow/receiver.sqlite"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8088)
    args = parser.parse_args(argv)
    secrets = _secrets_from_env()
    if not secrets:
        parser.error(f"set {SECRETS_ENV} to the receiver's whsec_ secret(s)")
    app = create_receiver_app(secrets, args.db)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
