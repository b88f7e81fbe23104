"""The virtflow worker for the orchestration benchmark, in its own process (so its RSS is
its own): every virtflow workflow and activity, plus the engine-only baseline, on one task
queue with the same worker settings. Settings come from VIRTFLOW_CONFIG.

Prints one line `ready` once polling; stops cleanly on SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from orchestration_baseline import MinimalWorkflow, trivial

from api.temporal_client import connect_factory
from runtime.settings import Settings
from worker.worker import running_worker


async def serve() -> None:
    settings = Settings()
    client = await connect_factory(settings)()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with running_worker(
        settings, client, extra_workflows=[MinimalWorkflow], extra_activities=[trivial]
    ):
        print("ready", flush=True)
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(serve())
