"""One long-lived Temporal client per process, connected on first use.

The SDK's native runtime dislikes short-lived clients, and an API that refuses to start while
Temporal is down is worse than one that answers 503 until it comes back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from runtime.connect import connect
from runtime.settings import Settings

from .errors import TemporalUnavailable

ClientFactory = Callable[[], Awaitable[Client]]

# Codes that mean "the engine is not there right now", not "your request is wrong".
_UNAVAILABLE_CODES = {
    RPCStatusCode.UNAVAILABLE,
    RPCStatusCode.DEADLINE_EXCEEDED,
    RPCStatusCode.RESOURCE_EXHAUSTED,
}


def is_unavailable(err: BaseException) -> bool:
    if isinstance(err, RPCError):
        return err.status in _UNAVAILABLE_CODES
    # Client.connect reports a refused or failed connection as a bare RuntimeError.
    return isinstance(err, RuntimeError) and "client connect" in str(err).lower()


def is_no_worker(err: RPCError) -> bool:
    """A query or update nobody took up: the call's own deadline passed (the SDK reports its
    rpc_timeout as CANCELLED, or the server saw it pass first: DEADLINE_EXCEEDED "query timed
    out before a worker could process it"), or the server saw no poller on the task queue
    lately."""
    if err.status == RPCStatusCode.CANCELLED:
        return True
    if err.status == RPCStatusCode.DEADLINE_EXCEEDED and "worker" in err.message:
        return True
    return err.status == RPCStatusCode.FAILED_PRECONDITION and "no poller" in err.message


def connect_factory(settings: Settings) -> ClientFactory:
    """A factory that connects to the Temporal service named in the settings."""

    async def factory() -> Client:
        return await connect(settings)

    return factory


class ClientProvider:
    """Connects lazily, keeps the client, and retries the connection on the next call if it
    failed (so the API recovers by itself once Temporal is up)."""

    def __init__(self, factory: ClientFactory) -> None:
        self._factory = factory
        self._client: Client | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> Client:
        if self._client is not None:
            return self._client
        async with self._lock:
            if self._client is None:
                try:
                    self._client = await self._factory()
                except Exception as err:
                    if is_unavailable(err):
                        raise TemporalUnavailable(str(err)) from err
                    raise
            return self._client
