"""The typed client generated from openapi.json: current with the schema, and working against
the real API (problems parsed into `Problem` with their stable `code`)."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
from pathlib import Path

from tests.api.api_helpers import LiveStack, spare_body
from virtflow_client import AuthenticatedClient
from virtflow_client.api.spares import get_spare, prepare_spare, release_spare
from virtflow_client.models import (
    Code,
    Phase,
    PrepareAccepted,
    PrepareBody,
    Problem,
    ReleaseRequest,
    SpareStatus,
    SpareView,
)

ROOT = Path(__file__).resolve().parents[2]


def _tree(root: Path) -> set[str]:
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_the_checked_in_client_is_generated_from_the_checked_in_schema(tmp_path: Path) -> None:
    out = tmp_path / "virtflow_client"
    bin_dir = Path(sys.executable).parent
    subprocess.run(
        [str(bin_dir / "openapi-python-client"), "generate", "--path", "openapi.json",
         "--meta", "none", "--config", "openapi-client.yaml", "--output-path", str(out)],
        cwd=ROOT, check=True, capture_output=True,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
    )  # fmt: skip
    checked_in = ROOT / "virtflow_client"
    assert _tree(out) == _tree(checked_in), "run `make client`"
    _, mismatch, errors = filecmp.cmpfiles(checked_in, out, sorted(_tree(out)), shallow=False)
    assert (mismatch, errors) == ([], []), "virtflow_client/ is stale: run `make client`"


async def test_a_spare_through_the_generated_client(live: LiveStack) -> None:
    client = AuthenticatedClient(base_url=live.url, token="", prefix="")  # the lab: no auth
    body = spare_body(inventory=live.stack.inventory, receivers=[])
    accepted = await prepare_spare.asyncio(client=client, body=PrepareBody.from_dict(body))
    assert isinstance(accepted, PrepareAccepted)

    conflict = await prepare_spare.asyncio(
        client=client, body=PrepareBody.from_dict({**body, "cpu": body["cpu"] + 1})
    )
    assert isinstance(conflict, Problem)
    assert (conflict.status, conflict.code) == (409, Code.REQUEST_CONFLICT)

    ready = await live.phase_becomes(accepted.spare_id, "ready")
    view = await get_spare.asyncio(accepted.spare_id, client=client)
    assert isinstance(view, SpareView)
    assert (view.phase, view.host) == (Phase.READY, ready["host"])

    released = await release_spare.asyncio(
        accepted.spare_id, client=client, body=ReleaseRequest(reason="done")
    )
    assert isinstance(released, SpareStatus)
    again = await release_spare.asyncio(accepted.spare_id, client=client, body=ReleaseRequest())
    assert isinstance(again, Problem) and again.code == Code.ALREADY_RELEASED
    await live.phase_becomes(accepted.spare_id, "released")
