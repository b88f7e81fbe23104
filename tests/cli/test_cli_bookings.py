"""`virtflow bookings`: a table per host of its bookings, through the API; a bad time is the
API's 422, exit 2."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.api.api_helpers import LiveStack, spare_body
from tests.cli.test_cli_runner import as_json, env, virtflow
from tests.helpers import assert_eventually

__all__ = ["env"]


async def test_bookings_prints_each_hosts_bookings(live: LiveStack, env: dict[str, str]) -> None:
    day2 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    window = {"start": day2.isoformat(), "end": (day2 + timedelta(hours=2)).isoformat()}
    pinned = {"annotations": {"node.qemu-scheduler/regex": "^bm-gen-03$"}}
    body = spare_body(inventory=live.stack.inventory, window=window, **pinned)
    answer = await live.api.post("/v1/spares", json=body)
    assert answer.status_code == 202, answer.text
    spare_id = answer.json()["spare_id"]
    await live.phase_becomes(spare_id, "booked")

    async def listed() -> str:
        shown = await virtflow(["bookings"], env)
        assert shown.exit_code == 0, shown.output
        assert spare_id in shown.stdout and "booked" in shown.stdout, shown.stdout
        return shown.stdout

    table = await assert_eventually(listed, timeout=30)
    assert f"bm-gen-03 ({live.stack.inventory})" in table
    assert f"{day2:%Y-%m-%d %H:%M:%SZ}" in table  # the window's start

    span = ["--from", day2.isoformat(), "--to", (day2 + timedelta(hours=1)).isoformat()]
    found = as_json(await virtflow(["bookings", *span, "--json"], env))
    [host] = [h for h in found["hosts"] if h["inventory"] == live.stack.inventory]
    assert host["host"] == "bm-gen-03"
    assert [b["spare_id"] for b in host["bookings"]] == [spare_id]
    assert host["bookings"][0]["cluster"] == "lab"

    refused = await virtflow(["bookings", "--from", "next tuesday"], env)
    assert refused.exit_code == 2, refused.output
    assert "(invalid_request)" in refused.output and "from" in refused.output

    await live.stack.client.get_workflow_handle(spare_id).terminate("test over")
