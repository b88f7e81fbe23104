"""virtflow's own metrics, recorded through the Temporal SDK's meters.

Activities pass `activity.metric_meter()`, workflows `workflow.metric_meter()` (which records
nothing while replaying), so these series appear on the worker's Prometheus endpoint next to
the SDK's own. Names and labels are defined once, here.

The spare's metrics carry its `cluster`: a registered cluster's name only (one series per
cluster, however many requests), `UNCONFIRMED` for a spare that ended before the worker's
configuration confirmed its cluster (an unregistered one among them).
"""

from __future__ import annotations

from datetime import timedelta

import temporalio.common
from temporalio.common import MetricMeter

SPARE_PHASE = "virtflow_spare_phase_entered"
TIME_TO_READY = "virtflow_spare_time_to_ready_seconds"
PLACEMENT_LATENCY = "virtflow_placement_duration_seconds"
WEBHOOK_DELIVERIES = "virtflow_webhook_deliveries"
LEDGER_RESERVATIONS = "virtflow_ledger_reservations"
WARM_READY = "virtflow_warm_pool_ready"
WARM_CLAIMS = "virtflow_warm_claims"
WARM_REFILL = "virtflow_warm_refill_seconds"
LEDGER_WAITERS = "virtflow_ledger_waiters"
SPARE_UNHEALTHY = "virtflow_spare_unhealthy"
# Releases running longer than a release may take (drain, Node delete, VM destroy), counted in
# visibility by the census: the precise "stuck releasing" signal.
RELEASES_OVERDUE = "virtflow_releases_overdue"

# Bookings by outcome: booked, ready in time, or a missed start (Ready after the window
# opened, or failed before it).
BOOKINGS = "virtflow_bookings"
BOOKING_OUTCOMES = ("booked", "ready_in_time", "missed_start")
# Bookings an inventory's ledger holds now (reservations whose hold starts later than made).
LEDGER_BOOKINGS = "virtflow_ledger_bookings"

# Spares per phase now, counted in Temporal visibility (worker/spare_census.py): right however
# many workers run or restart, unlike counters kept by each worker.
SPARES = "virtflow_spares"
# 1 while a registered cluster's API server answers the worker's probe, 0 while it does not.
CLUSTER_REACHABLE = "virtflow_cluster_reachable"

# The `cluster` of a spare whose cluster the worker's configuration has not confirmed.
UNCONFIRMED = "unconfirmed"

ALL = (
    SPARE_PHASE,
    TIME_TO_READY,
    PLACEMENT_LATENCY,
    WEBHOOK_DELIVERIES,
    LEDGER_RESERVATIONS,
    WARM_READY,
    WARM_CLAIMS,
    WARM_REFILL,
    LEDGER_WAITERS,
    SPARE_UNHEALTHY,
    RELEASES_OVERDUE,
    BOOKINGS,
    LEDGER_BOOKINGS,
    SPARES,
)

# Histogram buckets (seconds) that fit each phase: a spare takes minutes to an hour to become
# Ready (bare metal, TCG boots), a placement milliseconds to seconds (large inventories).
BUCKETS: dict[str, list[float]] = {
    TIME_TO_READY: [15, 30, 60, 120, 180, 300, 450, 600, 900, 1200, 1800, 2700, 3600],
    WARM_REFILL: [15, 30, 60, 120, 180, 300, 450, 600, 900, 1200, 1800, 2700, 3600],
    PLACEMENT_LATENCY: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
}


def spare_entered_phase(meter: MetricMeter, phase: str, left: str | None, cluster: str) -> None:
    """Counts entries into each phase and exits from the previous one (rates of transitions;
    the number in each phase now is `SPARES`)."""
    counter = meter.create_counter(SPARE_PHASE, "Spares that entered (or left) a phase")
    counter.add(1, {"phase": phase, "transition": "entered", "cluster": cluster})
    if left is not None:
        counter.add(1, {"phase": left, "transition": "left", "cluster": cluster})


def spare_ready(meter: MetricMeter, elapsed: timedelta, cluster: str) -> None:
    meter.create_histogram_timedelta(
        TIME_TO_READY, "From the request to a Ready node", unit="s"
    ).record(elapsed, {"cluster": cluster})


def booking_counter(meter: MetricMeter) -> temporalio.common.MetricCounter:
    return meter.create_counter(BOOKINGS, "Bookings by outcome")


def booking(meter: MetricMeter, outcome: str, cluster: str) -> None:
    """outcome: booked, ready_in_time or missed_start."""
    booking_counter(meter).add(1, {"outcome": outcome, "cluster": cluster})


def placement_done(meter: MetricMeter, elapsed: timedelta, outcome: str) -> None:
    """outcome: placed, no_capacity or never_fits."""
    meter.create_histogram_timedelta(
        PLACEMENT_LATENCY, "Inventory snapshot plus placement decision", unit="s"
    ).record(elapsed, {"outcome": outcome})


def webhook_delivered(meter: MetricMeter, receiver: str, result: str) -> None:
    """result: delivered, rejected (a final 4xx) or failed (will be retried)."""
    meter.create_counter(WEBHOOK_DELIVERIES, "Webhook delivery attempts by result").add(
        1, {"receiver": receiver, "result": result}
    )


def spares_in_phase(meter: MetricMeter, phase: str, cluster: str, count: int) -> None:
    meter.create_gauge(
        SPARES, "Running spares per phase and cluster, from Temporal visibility"
    ).set(count, {"phase": phase, "cluster": cluster})


def warm_pool_ready(meter: MetricMeter, pool: str, ready: int) -> None:
    meter.create_gauge(WARM_READY, "Warm spares Ready to be claimed, per warm pool").set(
        ready, {"pool": pool}
    )


def warm_claim(meter: MetricMeter, pool: str, hit: bool) -> None:
    """A claim a warm pool answered: hit (a warm spare handed over) or miss."""
    meter.create_counter(WARM_CLAIMS, "Claims answered by a warm pool, hits and misses").add(
        1, {"pool": pool, "result": "hit" if hit else "miss"}
    )


def warm_refilled(meter: MetricMeter, pool: str, elapsed: timedelta) -> None:
    meter.create_histogram_timedelta(
        WARM_REFILL, "From starting a warm spare to it being warm", unit="s"
    ).record(elapsed, {"pool": pool})


def cluster_reachable(meter: MetricMeter, cluster: str, reachable: bool) -> None:
    meter.create_gauge(
        CLUSTER_REACHABLE, "1 while a cluster's Kubernetes API answers the worker's probe"
    ).set(1 if reachable else 0, {"cluster": cluster})


def releases_overdue(meter: MetricMeter, count: int) -> None:
    meter.create_gauge(RELEASES_OVERDUE, "Releases running past the release bound").set(count)


def _unhealthy(meter: MetricMeter) -> temporalio.common.MetricCounter:
    return meter.create_counter(SPARE_UNHEALTHY, "Held (or warm) spares found unhealthy")


def spare_unhealthy(meter: MetricMeter, cluster: str) -> None:
    _unhealthy(meter).add(1, {"cluster": cluster})


def declare(meter: MetricMeter, clusters: list[str]) -> None:
    """Counters of rare events start at 0 when a worker starts, one series per registered
    cluster, so the series exists and an alert's `increase()` sees the first event."""
    for cluster in clusters:
        _unhealthy(meter).add(0, {"cluster": cluster})
        for outcome in BOOKING_OUTCOMES:
            booking_counter(meter).add(0, {"outcome": outcome, "cluster": cluster})


# The ledger's gauges, one series per inventory, and what each counts.
LEDGER_GAUGES = {
    LEDGER_RESERVATIONS: "Reservations held by an inventory's ledger",
    LEDGER_WAITERS: "Spares waiting for room in an inventory's ledger",
    LEDGER_BOOKINGS: "Bookings held by an inventory's ledger",
}


def ledger_counts(
    meter: MetricMeter, inventory: str, reservations: int, waiters: int, bookings: int
) -> None:
    """The ledger's gauges, set together after every change of its reservations."""
    counts = {LEDGER_RESERVATIONS: reservations, LEDGER_WAITERS: waiters, LEDGER_BOOKINGS: bookings}
    for name, value in counts.items():
        meter.create_gauge(name, LEDGER_GAUGES[name]).set(value, {"inventory": inventory})
