"""`GET /v1/bookings?from=&to=`: each host's bookings over time, for people and the page.

Where the answer comes from, and why:

- **The ledgers** (one `reservations` query per configured inventory) say which bookings hold
  room, on which host, from which lead start to which window end, and for which window start
  (the hold carries it). A ledger decides every reservation under its lock, so it is the truth
  of what is held where; a query reads its state at once, while visibility lags behind a
  booking that was just made or moved. One query per inventory, not one per booking: a
  thousand bookings cost as much as one.
- **Temporal visibility** (the spares' search attributes, one list call per 100 bookings) adds
  each booking's cluster, phase and workflow status, which a ledger does not keep. A token
  scoped to some clusters sees only their bookings: the list asks for those clusters alone, so
  a booking visibility does not know yet is shown to unscoped callers only (without cluster
  and phase). Measured on the dev server with 300 bookings: the ledger query about 20 ms,
  visibility about 200 ms (its rows, not the number of calls: one call for all costs as much).

A ledger forgets a booking when its spare is released, so the answer is what is held now over
`[from, to)`: windows that ended and were released are gone.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from typing import Annotated, NamedTuple

from fastapi import APIRouter, Depends, Query
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field
from temporalio.client import Client

from contracts.common import CLUSTER, PHASE
from contracts.ledger import Reservation
from contracts.spare import PREPARE_SPARE
from runtime.settings import Settings

from .auth import ANY_ROLE, CurrentCaller
from .errors import Code, InvalidInput, TemporalUnavailable
from .inventory_view import ledger_reservations
from .problems import TEMPORAL_ROUTE_WITH_INPUT, responses
from .spare import AppSettings, TemporalClient
from .temporal_calls import temporal_errors

# RFC 3339's date-time: a date, a time and an offset (Z or +hh:mm), nothing looser.
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$")
# The default span from now: every booking starts within the horizon, so this meets each one
# and shows a month-long window whole. Also the longest span, which bounds the answer's work.
LONGEST_WINDOW = timedelta(days=31)
# Spare ids go into the visibility query quoted; only these characters, so none can change it.
SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,255}$")
VISIBILITY_BATCH = 100
# The page draws from this API alone: nothing from elsewhere may load, whatever it would say.
PAGE_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self'"
)


class BookedSpare(BaseModel):
    """One booking on its host: its window, when its spare is made, where it stands."""

    spare_id: str
    cluster: str | None = Field(description="Absent while visibility has not seen the spare")
    phase: str | None = Field(description="The spare's phase (VirtflowPhase)")
    workflow_status: str | None = Field(
        description="The spare's workflow: `running`, or how it ended while its ledger still "
        "holds the room (`terminated`, ...: the reconciler or an operator frees it)"
    )
    window_start: datetime | None = Field(
        description="When the spare is Ready (absent for a booking held before it was kept)"
    )
    window_end: datetime
    lead_start: datetime = Field(description="When its spare is made; its room is held from then")


class HostBookings(BaseModel):
    inventory: str
    host: str
    bookings: list[BookedSpare] = Field(description="By lead start")


class UnansweredLedger(BaseModel):
    """An inventory whose ledger did not answer (no worker polls its task queue): its
    bookings are missing from the answer, the others' are whole."""

    inventory: str
    detail: str


class BookingsView(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: datetime = Field(alias="from")
    to: datetime
    hosts: list[HostBookings] = Field(description="Hosts holding bookings, by inventory and name")
    unanswered: list[UnansweredLedger] = Field(
        default_factory=list,
        description="Inventories whose bookings are missing: their ledger did not answer",
    )


def parse_time(name: str, text: str) -> datetime:
    """An RFC 3339 time named by query parameter `name`, or 422 naming it."""
    if not RFC3339.match(text):
        raise InvalidInput(name, f"{text!r} is not an RFC 3339 time with an offset", source="query")
    try:
        return datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError as err:
        raise InvalidInput(name, f"{text!r}: {err}", source="query") from err


def span(settings: Settings, start: str | None, end: str | None) -> tuple[datetime, datetime]:
    """`[from, to)`: from now and over every booking that can exist, unless told; `to` after
    `from`, and no longer than the horizon plus the longest window."""
    longest = timedelta(days=settings.booking_horizon_days) + LONGEST_WINDOW
    begin = parse_time("from", start) if start is not None else datetime.now(UTC)
    until = parse_time("to", end) if end is not None else begin + longest
    if until <= begin:
        raise InvalidInput("to", "must be after from", source="query")
    if until - begin > longest:
        raise InvalidInput(
            "to",
            f"at most {longest.days} days after from (booking_horizon_days plus "
            f"{LONGEST_WINDOW.days})",
            Code.RANGE_TOO_LONG,
            source="query",
        )
    return begin, until


def booked_within(
    reservations: Iterable[Reservation], begin: datetime, until: datetime
) -> list[Reservation]:
    """The bookings (holds that start later than they were made) holding room in the span."""
    return [
        r
        for r in reservations
        if r.hold.start is not None
        and r.hold.start < until
        and (r.hold.end is None or r.hold.end > begin)
    ]


class Seen(NamedTuple):
    """What visibility knows of a booked spare."""

    cluster: str | None = None
    phase: str | None = None
    workflow_status: str | None = None


async def spares_seen(
    client: Client, spare_ids: list[str], scope: frozenset[str] | None
) -> dict[str, Seen]:
    """Cluster, phase and status by spare id, as visibility knows them (only `scope`'s
    clusters)."""
    ids = [s for s in spare_ids if SAFE_ID.match(s)]
    seen: dict[str, Seen] = {}
    for first in range(0, len(ids), VISIBILITY_BATCH):
        batch = ids[first : first + VISIBILITY_BATCH]
        clauses = [
            f"WorkflowType = '{PREPARE_SPARE}'",
            f"WorkflowId IN ({', '.join(repr(s) for s in batch)})",
        ]
        if scope is not None:
            clauses.append(f"{CLUSTER.name} IN ({', '.join(repr(c) for c in sorted(scope))})")
        with temporal_errors("bookings"):
            async for execution in client.list_workflows(
                " AND ".join(clauses), page_size=len(batch)
            ):
                attributes = execution.typed_search_attributes
                status = execution.status
                seen[execution.id] = Seen(
                    attributes.get(CLUSTER),
                    attributes.get(PHASE),
                    status.name.lower() if status else "running",
                )
    return seen


async def bookings_view(
    client: Client,
    settings: Settings,
    begin: datetime,
    until: datetime,
    scope: frozenset[str] | None = None,
) -> BookingsView:
    names = sorted(settings.inventories)
    held = await asyncio.gather(
        *(ledger_reservations(client, name) for name in names), return_exceptions=True
    )
    booked: dict[str, list[Reservation]] = {}
    unanswered: list[UnansweredLedger] = []
    # A scoped caller hears only of the inventories its clusters may use.
    visible = (
        set(names) if scope is None else settings.cluster_registry.inventories_of(scope, names)
    )
    for name, answer in zip(names, held, strict=True):
        if isinstance(answer, TemporalUnavailable):
            if name in visible:
                unanswered.append(UnansweredLedger(inventory=name, detail=str(answer)))
        elif isinstance(answer, BaseException):
            raise answer
        else:
            booked[name] = booked_within(answer, begin, until)
    if names and not booked:
        # No ledger answered: the engine itself, or every worker, is away (503).
        raise TemporalUnavailable(
            unanswered[0].detail
            if unanswered
            else "no inventory's ledger answered: is a virtflow worker running?"
        )
    seen = await spares_seen(client, [r.spare_id for rs in booked.values() for r in rs], scope)
    by_host: dict[tuple[str, str], list[BookedSpare]] = {}
    for inventory, reservations in booked.items():
        for r in reservations:
            if scope is not None and r.spare_id not in seen:
                continue  # another cluster's, or one visibility cannot vouch for yet
            known = seen.get(r.spare_id, Seen())
            assert r.hold.start is not None and r.hold.end is not None
            by_host.setdefault((inventory, r.host), []).append(
                BookedSpare(
                    spare_id=r.spare_id,
                    cluster=known.cluster,
                    phase=known.phase,
                    workflow_status=known.workflow_status,
                    window_start=r.hold.window_start,
                    window_end=r.hold.end,
                    lead_start=r.hold.start,
                )
            )
    hosts = [
        HostBookings(
            inventory=inventory,
            host=host,
            bookings=sorted(spares, key=lambda b: (b.lead_start, b.spare_id)),
        )
        for (inventory, host), spares in sorted(by_host.items())
    ]
    return BookingsView(from_=begin, to=until, hosts=hosts, unanswered=unanswered)


router = APIRouter(prefix="/v1", tags=["bookings"])


@router.get(
    "/bookings",
    operation_id="listBookings",
    response_model=BookingsView,
    responses=responses(*TEMPORAL_ROUTE_WITH_INPUT, Code.RANGE_TOO_LONG),
    summary="Each host's bookings over [from, to): spare, cluster, window, lead start, phase",
    dependencies=[Depends(ANY_ROLE)],
)
async def get_bookings(
    settings: AppSettings,
    client: TemporalClient,
    caller: CurrentCaller,
    start: Annotated[
        str | None,
        Query(alias="from", max_length=40, description="RFC 3339 with an offset; default now"),
    ] = None,
    end: Annotated[
        str | None,
        Query(
            alias="to",
            max_length=40,
            description="RFC 3339 with an offset, after `from`; default: `from` plus "
            "booking_horizon_days plus 31 days (also the longest span)",
        ),
    ] = None,
) -> BookingsView:
    begin, until = span(settings, start, end)
    return await bookings_view(client, settings, begin, until, caller.clusters)


@functools.cache
def _page() -> str:
    return files("api").joinpath("bookings.html").read_text(encoding="utf-8")


@router.get("/bookings.html", include_in_schema=False)
async def bookings_page() -> HTMLResponse:
    """The bookings as a timeline per host. The page carries no data (it asks
    `GET /v1/bookings` with the caller's token), so it is open to anyone."""
    return HTMLResponse(_page(), headers={"Content-Security-Policy": PAGE_POLICY})
