"""What the API keeps between requests, so a burst of `POST /v1/spares` is admitted without an
inventory read and two Temporal calls per request.

- **Inventory snapshots** for the request checks (names of pools and labels, the VM `near`
  names): one read serves every request for SNAPSHOT_SECONDS (5 s), and requests that arrive
  during a read wait for it instead of reading again. A refusal is confirmed on a fresh read,
  so a stale snapshot never refuses what the inventory now has; a stale acceptance only lets
  the spare ask the ledger, which judges room on its own fresh read (nothing here can
  over-commit).
- **Each spare's request hash**: a spare's memo never changes, and its id never names another
  spare (the start's REJECT_DUPLICATE), so a repeat of a known request_id is answered at once:
  202 with the same body, 409 with another. Bounded (KNOWN_SPARES, least recently used out).
  With it, the spare's word on whether a warm pool serves it, which does not change either.
- **One start per spare id at a time**: concurrent POSTs of one request_id wait for the first
  one's start and its memo, instead of each starting and describing the workflow.
- **One question to a ledger at a time**: concurrent POSTs that ask an inventory's ledger
  whether it holds bookings share the one query in flight (each query is a workflow task on
  the ledger, which answers one at a time).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import NamedTuple, TypeVar

from contracts.warm import WarmInfo
from placement.models import ExistingVm, Host

SNAPSHOT_SECONDS = 5.0
KNOWN_SPARES = 10_000

Snapshot = tuple[list[Host], list[ExistingVm]]
T = TypeVar("T")


class Started(NamedTuple):
    """What a POST learns of its spare when it starts or finds it."""

    # None: the spare was not started through virtflow's door.
    request_hash: str | None
    # Set when a warm pool serves the spare (it is Ready already), as the spare said.
    warm: WarmInfo | None = None


async def _once_at_a_time(
    running: dict[str, asyncio.Future[T]], key: str, work: Callable[[], Awaitable[T]]
) -> T:
    """`work`'s answer; callers that ask for `key` while it runs wait for that run instead
    of starting another (shielded: one caller's cancellation does not cancel the others')."""
    future = running.get(key)
    if future is None:
        future = asyncio.ensure_future(work())
        running[key] = future
        future.add_done_callback(lambda _: running.pop(key, None))
    return await asyncio.shield(future)


class Admission:
    def __init__(
        self, snapshot_seconds: float = SNAPSHOT_SECONDS, known_spares: int = KNOWN_SPARES
    ) -> None:
        self.snapshot_seconds = snapshot_seconds
        self._snapshots: dict[str, tuple[float, Snapshot]] = {}
        self._reading: dict[str, asyncio.Future[Snapshot]] = {}
        self._known_spares = known_spares
        self._known: OrderedDict[str, Started] = OrderedDict()
        self._starting: dict[str, asyncio.Future[Started]] = {}
        self._asking: dict[str, asyncio.Future[bool]] = {}

    async def snapshot(
        self, inventory: str, read: Callable[[], Awaitable[Snapshot]], fresh: bool = False
    ) -> tuple[Snapshot, bool]:
        """The inventory's hosts and VMs, and whether they were read for this call."""
        now = asyncio.get_running_loop().time()
        kept = self._snapshots.get(inventory)
        if not fresh and kept is not None and now - kept[0] < self.snapshot_seconds:
            return kept[1], False
        found = await _once_at_a_time(self._reading, inventory, read)
        self._snapshots[inventory] = (now, found)
        return found, True

    def knows(self, spare_id: str) -> bool:
        """Whether a POST of this spare was answered already (a repeat of its request_id)."""
        return spare_id in self._known

    async def has_bookings(self, inventory: str, ask: Callable[[], Awaitable[bool]]) -> bool:
        """`ask`'s answer, shared by every caller asking about `inventory` meanwhile."""
        return await _once_at_a_time(self._asking, inventory, ask)

    async def started(self, spare_id: str, start: Callable[[], Awaitable[Started]]) -> Started:
        """What is known of spare `spare_id`, or what `start` learns (it starts the spare or
        finds it, and reads its memo), run once however many ask at the same time."""
        known = self._known.get(spare_id)
        if known is not None:
            self._known.move_to_end(spare_id)
            return known
        started = await _once_at_a_time(self._starting, spare_id, start)
        if started.request_hash is None:
            return started
        self._known[spare_id] = started
        while len(self._known) > self._known_spares:
            self._known.popitem(last=False)
        return started
