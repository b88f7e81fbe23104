"""virtflow's own metrics, recorded through the Temporal SDK's meters.

Activities pass `activity.metric_meter()`, workflows `workflow.metric_meter()` (which records
nothing while replaying), so these series appear on the worker's Prometheus endpoint next to
the SDK's own. Names and labels are defined once, here.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import MetricMeter

SPARE_PHASE = "virtflow_spare_phase_entered"
TIME_TO_READY = "virtflow_spare_time_to_ready"
PLACEMENT_LATENCY = "virtflow_placement_latency"
WEBHOOK_DELIVERIES = "virtflow_webhook_deliveries"
LEDGER_RESERVATIONS = "virtflow_ledger_reservations"

ALL = (SPARE_PHASE, TIME_TO_READY, PLACEMENT_LATENCY, WEBHOOK_DELIVERIES, LEDGER_RESERVATIONS)


def spare_entered_phase(meter: MetricMeter, phase: str, left: str | None) -> None:
    """Counts entries into each phase and exits from the previous one; entered minus left,
    summed over workers, is the number of spares in each phase now."""
    counter = meter.create_counter(SPARE_PHASE, "Spares that entered (or left) a phase")
    counter.add(1, {"phase": phase, "transition": "entered"})
    if left is not None:
        counter.add(1, {"phase": left, "transition": "left"})


def spare_ready(meter: MetricMeter, elapsed: timedelta) -> None:
    meter.create_histogram_timedelta(
        TIME_TO_READY, "From the request to a Ready node", unit="ms"
    ).record(elapsed)


def placement_done(meter: MetricMeter, elapsed: timedelta, outcome: str) -> None:
    """outcome: placed, no_capacity or never_fits."""
    meter.create_histogram_timedelta(
        PLACEMENT_LATENCY, "Inventory snapshot plus placement decision", unit="ms"
    ).record(elapsed, {"outcome": outcome})


def webhook_delivered(meter: MetricMeter, receiver: str, result: str) -> None:
    """result: delivered, rejected (a final 4xx) or failed (will be retried)."""
    meter.create_counter(WEBHOOK_DELIVERIES, "Webhook delivery attempts by result").add(
        1, {"receiver": receiver, "result": result}
    )


def ledger_reservations(meter: MetricMeter, inventory: str, in_use: int) -> None:
    meter.create_gauge(LEDGER_RESERVATIONS, "Reservations held by an inventory's ledger").set(
        in_use, {"inventory": inventory}
    )
