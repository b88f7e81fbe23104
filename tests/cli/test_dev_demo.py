"""`virtflow dev` and `virtflow demo`: the whole stack on the lab, as a newcomer runs it.

`virtflow demo` end to end runs once, from the installed wheel (tests/ops/test_wheel.py): the
same code as from this tree, and one TCG-free spare's life is enough to show it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from cli.dev import (
    LabPorts,
    PortBusy,
    TemporalDevServer,
    check_ports,
    free_ports,
    lab_settings,
)
from runtime.settings import Settings
from tests.cli.test_cli import virtflow
from webhooks.signing import generate_secret


def test_a_busy_port_is_named() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        ports = LabPorts(**{**vars(free_ports()), "kube": port})
        with pytest.raises(PortBusy) as err:
            check_ports(ports)
    assert str(err.value) == f"port {port} (kube) is already in use"


async def test_dev_exits_1_naming_a_busy_port() -> None:
    with socket.socket() as busy:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            busy.bind(("127.0.0.1", LabPorts().api))
            busy.listen()
        except OSError:
            pass  # someone else holds it: busy all the same
        run = await virtflow("dev")
    assert run.code == 1
    assert "is already in use" in run.out


def test_the_dev_server_reads_its_transfer_queue_often_enough_for_one_spare(
    tmp_path: Path,
) -> None:
    """At the server's default (20 reads a second on its one shard) an idle spare's workflow
    tasks each waited about 40 ms to be dispatched (docs/BENCHMARKS.md, "Fifth pass")."""
    command = TemporalDevServer(free_ports(), tmp_path).command()
    values = [command[i + 1] for i, arg in enumerate(command) if arg == "--dynamic-config-value"]
    assert "history.transferProcessorMaxPollRPS=200" in values
    assert "history.maxInFlightUpdates=500" in values


def test_a_lab_booking_is_made_under_a_minute_before_its_window(tmp_path: Path) -> None:
    """A lab spare is Ready in seconds: `virtflow dev` keeps a booking's lead under a minute,
    with no time measured yet and with the lab's measured times, where a site's defaults
    (15 minutes before any time is measured) would make it at once for a window minutes away."""
    lead = lab_settings(Settings(), free_ports(), tmp_path, generate_secret()).booking_lead
    assert lead.lead([]) < 60
    assert lead.lead([4.5, 5.0, 7.2]) < 60
    assert Settings().booking_lead.lead([]) >= 60 * 15
    # A window of a few minutes hears that it is ending a minute before its end, not at once.
    assert lead.window_ending_seconds == 60
