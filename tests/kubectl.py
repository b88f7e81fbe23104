"""An unmodified kubectl against a lab API: the judge of what the API shows a cluster's user."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

# VIRTFLOW_KUBECTL picks another binary (for instance Debian's, unpacked elsewhere).
KUBECTL = os.environ.get("VIRTFLOW_KUBECTL") or shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


def kubectl_command(kubeconfig: Path, *args: str) -> list[str]:
    assert KUBECTL is not None
    return [KUBECTL, "--kubeconfig", str(kubeconfig), "--request-timeout=20s", *args]


def kubectl_env(kubeconfig: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(kubeconfig.parent)}


async def kubectl(kubeconfig: Path, *args: str) -> str:
    """kubectl's output; a failure fails the test with kubectl's own words."""
    proc = await asyncio.create_subprocess_exec(
        *kubectl_command(kubeconfig, *args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=kubectl_env(kubeconfig),
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def kubectl_json(kubeconfig: Path, *args: str) -> Any:
    """`kubectl ... -o json`, decoded."""
    return json.loads(await kubectl(kubeconfig, *args, "-o", "json"))


def json_stream(text: str) -> list[Any]:
    """The objects of `kubectl get --watch -o json`: JSON documents one after the other."""
    decoder, at = json.JSONDecoder(), 0
    found: list[Any] = []
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return found
        item, at = decoder.raw_decode(text, at)
        found.append(item)
