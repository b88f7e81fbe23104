"""The worker's Prometheus endpoint serves the SDK's metrics and virtflow's own, and every
series the Grafana dashboard or an alert of the PrometheusRule names is one it serves."""

from __future__ import annotations

import contextlib
import json
import re
import socket
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from temporalio.client import WorkflowFailureError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from contracts import metrics
from contracts.release import RELEASE_SPARE
from contracts.spare import Phase, ReleaseRequest
from lab.hypervisor import load_inventory_file
from runtime.connect import connect
from runtime.settings import REPO_ROOT, Settings
from runtime.telemetry import process_runtime
from tests.helpers import assert_eventually, new_worker
from tests.ops.failing_task import FailingTask
from tests.stack import LAB_INVENTORY, running_stack, wait_phase
from worker.cluster_probes import probe_clusters
from worker.spare_census import count_overdue_releases, record_census
from worker.worker import cluster_clients
from workflows.prepare_spare import PrepareSpare

DASHBOARD = REPO_ROOT / "deploy" / "kubernetes" / "base" / "grafana-dashboard.json"
RULES = REPO_ROOT / "deploy" / "kubernetes" / "base" / "prometheus-rules.yaml"
OPERATIONS = REPO_ROOT / "docs" / "OPERATIONS.md"
SERIES = re.compile(r"\b(?:virtflow|temporal)_[a-z_]+\b")


def alert_rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(RULES.read_text())
    assert (doc["apiVersion"], doc["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
    return [rule for group in doc["spec"]["groups"] for rule in group["rules"]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_metrics_list_virtflow_series_after_a_spare_runs(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path
) -> None:
    port = free_port()
    settings = Settings(
        temporal_address=temporal_env.client.service_client.config.target_host,
        metrics_host="127.0.0.1",
        metrics_port=port,
    )
    client = await connect(settings)
    inventory = load_inventory_file(LAB_INVENTORY)
    async with running_stack(client, task_queue, tmp_path, inventory, provisioner="http") as stack:
        handle = await stack.start(stack.request())
        await wait_phase(handle, Phase.READY)
        # A cluster nobody registered: refused, and its name labels no series.
        stranger = await stack.start(stack.request(cluster="prod-x"))
        with pytest.raises(WorkflowFailureError):
            await stranger.result()
        meter = process_runtime(settings).metric_meter

        async def one_ready() -> None:
            counts = await record_census(client, meter, task_queue, ["lab"])
            assert counts[Phase.READY, "lab"] == 1 and sum(counts.values()) == 1, counts

        # Visibility follows the workflow's search attributes within moments.
        await assert_eventually(one_ready, timeout=30, interval=0.5)
        probes = cluster_clients(stack.settings)
        assert await probe_clusters(probes, meter) == {"lab": True}
        await probes.close()
        await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
        assert (await handle.result()).phase == Phase.RELEASED

    # What the alerts watch for but a good run never shows: a failing workflow task, and
    # requests the server refuses.
    async with new_worker(client, FailingTask) as worker:
        failing = await client.start_workflow(
            FailingTask.run, id=f"failing-{task_queue}", task_queue=worker.task_queue
        )

        async def task_failed() -> None:
            async with httpx.AsyncClient() as http:
                text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
            assert "temporal_workflow_task_execution_failed" in text

        await assert_eventually(task_failed, timeout=30, interval=0.5)
        await failing.terminate()
    absent = client.get_workflow_handle(f"absent-{task_queue}")
    for call in (absent.describe, absent.result):
        with contextlib.suppress(RPCError):
            await call()

    async with httpx.AsyncClient() as http:
        answer = await http.get(f"http://127.0.0.1:{port}/metrics")
    answer.raise_for_status()
    lines = answer.text.splitlines()
    samples = [line for line in lines if line and not line.startswith("#")]

    def series(name: str, *labels: str) -> list[str]:
        return [
            s for s in samples if s.split("{")[0].startswith(name) and all(x in s for x in labels)
        ]

    lab = 'cluster="lab"'
    assert series(metrics.SPARE_PHASE, 'phase="validating"', 'transition="entered"', lab)
    assert series(metrics.SPARE_PHASE, 'phase="ready"', 'transition="entered"', lab)
    assert series(metrics.SPARE_PHASE, 'phase="released"', 'transition="entered"', lab)
    assert series(metrics.SPARES, 'phase="ready"', lab)[0].endswith(" 1")
    assert series(metrics.TIME_TO_READY + "_count", lab)
    assert series(metrics.SPARE_UNHEALTHY, lab)[0].endswith(" 0")  # declared at the start
    unconfirmed = f'cluster="{metrics.UNCONFIRMED}"'
    assert series(metrics.SPARE_PHASE, 'phase="failed"', 'transition="entered"', unconfirmed)
    assert not [s for s in samples if 'cluster="prod-x"' in s]
    # Seconds, in buckets that fit a phase of minutes.
    assert series(metrics.TIME_TO_READY + "_bucket", 'le="1800"')
    assert series(metrics.PLACEMENT_LATENCY + "_count", 'outcome="placed"')
    assert series(metrics.WEBHOOK_DELIVERIES, 'result="delivered"', 'receiver="upgradectrl"')
    ledger = series(metrics.LEDGER_RESERVATIONS, f'inventory="{stack.inventory}"')
    assert ledger and ledger[0].endswith(" 0"), ledger  # the one reservation was freed
    booked = series(metrics.LEDGER_BOOKINGS, f'inventory="{stack.inventory}"')
    assert booked and booked[0].endswith(" 0"), booked  # an ordinary spare is no booking
    for outcome in metrics.BOOKING_OUTCOMES:  # declared at the start: alerts see the first
        assert series(metrics.BOOKINGS, f'outcome="{outcome}"', lab)[0].endswith(" 0")
    # The SDK's own series share the endpoint.
    assert series("temporal_workflow_completed", f'task_queue="{task_queue}"')

    # Every metric the Grafana dashboard's panels query is one this endpoint serves.
    served = {s.split("{")[0].split(" ")[0] for s in samples}
    dashboard = json.loads(DASHBOARD.read_text())
    queried = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in SERIES.findall(target["expr"])
    }
    assert queried >= {metrics.SPARES, metrics.TIME_TO_READY + "_bucket"}
    assert queried <= served, sorted(queried - served)
    # Likewise every series an alert names; and the dashboard shows each of them.
    alerted = {name for rule in alert_rules() for name in SERIES.findall(rule["expr"])}
    assert alerted <= served, sorted(alerted - served)
    assert alerted <= queried, sorted(alerted - queried)


def test_every_alert_has_a_severity_a_summary_and_a_runbook_line() -> None:
    runbook = OPERATIONS.read_text().partition("\n## Alerts\n")[2].partition("\n## ")[0]
    names = [rule["alert"] for rule in alert_rules()]
    assert len(names) == len(set(names))
    for rule in alert_rules():
        assert rule["labels"]["severity"] in {"critical", "warning"}, rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]
        assert rule["annotations"]["runbook_url"].endswith("OPERATIONS.md#alerts"), rule["alert"]
        assert f"| `{rule['alert']}` |" in runbook, f"{rule['alert']}: no runbook line"


async def test_the_census_counts_releases_running_past_their_bound(
    temporal_env: WorkflowEnvironment, task_queue: str
) -> None:
    client = temporal_env.client
    # A release nobody runs (no worker on this queue): it stays running, like a stuck one.
    handle = await client.start_workflow(
        RELEASE_SPARE, id=f"release-{task_queue}", task_queue=task_queue
    )
    try:

        async def counted() -> None:
            overdue = await count_overdue_releases(client, task_queue, older_than=timedelta(0))
            assert overdue == 1

        await assert_eventually(counted, timeout=20, interval=0.5)
        # Within the bound it is not overdue.
        assert await count_overdue_releases(client, task_queue) == 0
    finally:
        await handle.terminate()
