"""The `virtflow` commands through typer's test runner, against a live stack.

Each command runs its own event loop (asyncio.run), so the runner is called from a thread.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from cli.main import app
from runtime.settings import get_settings
from tests.api.api_helpers import LiveStack
from tests.api.test_api_errors import closed_port
from tests.helpers import assert_eventually


async def virtflow(args: Sequence[str], env: dict[str, str]) -> Result:
    def invoke() -> Result:
        get_settings.cache_clear()
        try:
            return CliRunner().invoke(app, list(args), env={"COLUMNS": "220", **env})
        finally:
            get_settings.cache_clear()

    return await asyncio.to_thread(invoke)


@pytest.fixture
def env(live: LiveStack) -> dict[str, str]:
    stack = live.stack
    return {
        "VIRTFLOW_TEMPORAL_ADDRESS": stack.client.service_client.config.target_host,
        "VIRTFLOW_TASK_QUEUE": stack.task_queue,
        "VIRTFLOW_INVENTORIES": json.dumps(stack.settings.inventories),
        "VIRTFLOW_STATE_DIR": str(stack.settings.state_dir),
        "VIRTFLOW_API_URL": live.url,
    }


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


async def test_prepare_list_inventory_status_release(live: LiveStack, env: dict[str, str]) -> None:
    inventory = live.stack.inventory
    cluster = "lab"
    request_id = f"r{uuid.uuid4().hex[:8]}"
    spare_id = f"spare-{cluster}-{request_id}"
    args = ["--cluster", cluster, "--request-id", request_id, "--inventory", inventory]
    prepared = await virtflow(["prepare", *args, "--cpu", "2", "--memory-mb", "2048"], env)
    assert prepared.exit_code == 0, prepared.output
    assert f"spare {spare_id} started" in prepared.stdout
    assert prepared.stdout.strip().splitlines()[-1].startswith("ready on bm-")

    async def listed() -> Result:
        shown = await virtflow(["list", "--cluster", cluster, "--phase", "ready"], env)
        assert shown.exit_code == 0, shown.output
        assert spare_id in shown.stdout, shown.stdout
        return shown

    await assert_eventually(listed, timeout=30)
    listing = as_json(await virtflow(["list", "--cluster", cluster, "--json"], env))
    [row] = [r for r in listing if r["spare_id"] == spare_id]
    host = row["host"]
    assert (row["spare_id"], row["phase"], row["pool"]) == (spare_id, "ready", "any")

    view = as_json(await virtflow(["inventory", inventory, "--json"], env))
    assert [r["spare_id"] for r in view["reservations"]] == [spare_id]
    [room] = [h for h in view["hosts"] if h["name"] == host]
    assert room["reserved_for"] in ([spare_id], [])  # [] once the inventory reports the VM
    shown = await virtflow(["inventory", inventory], env)
    assert shown.exit_code == 0, shown.output
    assert "bm-gen-04 (cordoned)" in shown.stdout
    assert f"inventory {inventory}: 6 host(s), 1 reservation(s) in the ledger" in shown.stdout

    status = as_json(await virtflow(["status", "--json", spare_id], env))
    assert status["host"] == host
    released = await virtflow(["release", spare_id, "--reason", "upgrade done"], env)
    assert released.exit_code == 0, released.output
    await live.phase_becomes(spare_id, "released")
    after = as_json(await virtflow(["inventory", inventory, "--json"], env))
    assert after["reservations"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["inventory", "nowhere"], "error: inventory: unknown inventory 'nowhere'"),
        (
            [
                "prepare",
                "--cluster",
                "nowhere",
                "--request-id",
                "r1",
                "--cpu",
                "1",
                "--memory-mb",
                "512",
            ],
            "error: cluster: unknown cluster 'nowhere' (registered: lab)",
        ),
        (["list", "--cluster", "x' OR 'a'='a"], "error: cluster: String should match"),
        (
            ["status", "spare-lab-nobody-here"],
            "error: no spare 'spare-lab-nobody-here' (spare_not_found)",
        ),
        (["release", "spare-lab-nobody-here"], "error: no spare 'spare-lab-nobody-here'"),
        (["cancel", "spare-lab-nobody-here"], "error: no spare 'spare-lab-nobody-here'"),
    ],
)
async def test_bad_input_exits_2_with_one_line(
    env: dict[str, str], args: list[str], message: str
) -> None:
    result = await virtflow(args, env)
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(message), result.stderr


PREPARE = ["prepare", "--cluster", "lab", "--request-id", "r1", "--cpu", "2", "--memory-mb", "8"]


BAD_DEVICE = "error: bad --device 'xilinx.com/u250': expected NAME=COUNT"
# The key's path, as the operator typed it: no stray dot, no `[key]` marker.
NO_PREFIX = "error: bad request: devices.fpga: Value error, device name 'fpga': needs a domain"


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--device", "xilinx.com/u250"], BAD_DEVICE), (["--device", "fpga=1"], NO_PREFIX)],
)
async def test_a_bad_device_exits_2_naming_it(args: list[str], message: str) -> None:
    result = await virtflow([*PREPARE, *args], {})
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(message), result.stderr


async def test_temporal_down_exits_1() -> None:
    down = {
        "VIRTFLOW_TEMPORAL_ADDRESS": f"127.0.0.1:{closed_port()}",
        "VIRTFLOW_INVENTORIES": json.dumps({"default": "/nonexistent.yaml"}),
    }
    result = await virtflow(["inventory"], down)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: Temporal unavailable:")


async def test_the_api_down_exits_1() -> None:
    result = await virtflow(["list"], {"VIRTFLOW_API_URL": f"http://127.0.0.1:{closed_port()}"})
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: the API did not answer (ConnectError)")


async def test_clusters_lists_the_registered_cluster(live: LiveStack, env: dict[str, str]) -> None:
    [lab] = as_json(await virtflow(["clusters", "--json"], env))["clusters"]
    assert (lab["name"], lab["reachable"], lab["api_server"]) == (
        "lab",
        True,
        live.stack.lab.kube_url,
    )
    # The module's other tests share this stack and its ledger (bookings among them): the
    # count is the API's, whatever they hold right now.
    [answer] = (await live.api.get("/v1/clusters")).json()["clusters"]
    assert (lab["spares_in_use"], lab.get("max_spares")) == (answer["spares_in_use"], None)
    table = await virtflow(["clusters"], env)
    assert table.exit_code == 0, table.output
    assert "lab" in table.stdout and "yes" in table.stdout
    assert "spares" in table.stdout and "budget" in table.stdout


async def test_window_moves_a_bookings_end_and_names_what_is_in_the_way(
    live: LiveStack, env: dict[str, str], tmp_path: Path
) -> None:
    day2 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    # One host of 96 effective CPUs: one spare of 64 at a time.
    pinned_file = tmp_path / "pinned.json"
    pinned_file.write_text(
        json.dumps({"annotations": {"node.qemu-scheduler/regex": "^bm-gen-03$"}})
    )
    pinned = ["--cpu", "64", "--memory-mb", "2048", "--inventory", live.stack.inventory]
    pinned += ["--file", str(pinned_file)]
    ids = []
    for start, hours in ((day2, 4), (day2 + timedelta(hours=6), 2)):
        request_id = f"r{uuid.uuid4().hex[:8]}"
        ids.append(f"spare-lab-{request_id}")
        window = ["--window-start", start.isoformat()]
        window += ["--window-end", (start + timedelta(hours=hours)).isoformat()]
        booked = await virtflow(
            ["prepare", "--cluster", "lab", "--request-id", request_id, *pinned, *window], env
        )
        assert booked.exit_code == 0, booked.output
    first, later = ids

    longer = (day2 + timedelta(hours=5)).isoformat()
    moved = await virtflow(["window", first, "--end", longer], env)
    assert moved.exit_code == 0, moved.output
    assert f"spare {first}: window {day2.isoformat()} .. {longer}" in moved.stdout

    into_later = await virtflow(
        ["window", first, "--end", (day2 + timedelta(hours=7)).isoformat()], env
    )
    assert into_later.exit_code == 2, into_later.output
    assert "(no_capacity)" in into_later.stderr and later in into_later.stderr

    no_offset = await virtflow(["window", first, "--end", "2030-01-01T00:00:00"], env)
    assert no_offset.exit_code == 2
    assert no_offset.stderr.startswith("error: bad request: --end '2030-01-01T00:00:00' has no")
    for spare_id in ids:
        await live.stack.client.get_workflow_handle(spare_id).terminate("test over")
