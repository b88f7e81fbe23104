"""A worker imports an optional integration only when its settings use it: python-gitlab and
requests for the GitLab provisioner, the NATS client for the event bus. Checked in a fresh
interpreter, since this test session has imported them all already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OPTIONAL = ("gitlab", "requests", "nats")

SCRIPT = f"""
import asyncio, json, sys

from runtime.http_client import HttpClient
from runtime.settings import Settings
from worker.worker import build_activities, build_provisioner

OPTIONAL = {OPTIONAL!r}


def loaded():
    return [name for name in OPTIONAL if name in sys.modules]


async def main():
    http = HttpClient()
    activities = build_activities(Settings(), client=None, http=http)
    plain = loaded()
    gitlab = build_provisioner(
        Settings(provisioner="gitlab", gitlab_trigger_token="t", gitlab_api_token="a"), http
    )
    print(json.dumps({{
        "activities": len(activities),
        "plain": plain,
        "gitlab": type(gitlab).__name__,
        "with_gitlab": loaded(),
    }}))
    await http.aclose()


asyncio.run(main())
"""


def test_a_worker_imports_gitlab_only_when_configured_and_nats_only_to_publish() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTFLOW_")}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["activities"] > 0
    assert seen["plain"] == []
    assert seen["gitlab"] == "GitLabProvisioner"
    assert seen["with_gitlab"] == ["gitlab", "requests"]
