"""The Temporal web UI shows a finished spare's summary and search attributes.

Headless Debian Chromium driven by Playwright (`executable_path`, no browser download). The
screenshot is kept under `.virtflow/artifacts/` for a person to look at.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from api.spare_ops import start_spare
from lab.hypervisor import load_inventory_file
from tests.helpers import assert_eventually
from tests.stack import LAB_INVENTORY, Stack, running_stack

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".virtflow" / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

UI_WAIT_MS = 30_000

playwright_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed")


@pytest.fixture
def chromium() -> Path:
    found = CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")
    if not found:
        pytest.skip("no chromium: `make test` installs the Debian package when it can (root)")
    return Path(found)


@pytest.fixture
async def stack(client: Client, task_queue: str, tmp_path: Path) -> AsyncIterator[Stack]:
    async with running_stack(client, task_queue, tmp_path, load_inventory_file(LAB_INVENTORY)) as s:
        yield s


async def test_the_ui_shows_a_finished_spares_summary_and_search_attributes(
    stack: Stack, chromium: Path, temporal_ui_port: int
) -> None:
    cluster = f"ui{uuid.uuid4().hex[:6]}"
    request = stack.request(cluster=cluster, pool="general", ttl_seconds=1)
    settings = stack.settings.model_copy(
        update={
            "task_queue": stack.task_queue,
            "temporal_ui_url": f"http://127.0.0.1:{temporal_ui_port}",
        }
    )
    accepted = await start_spare(stack.client, settings, request)
    result: dict[str, Any] = await stack.client.get_workflow_handle(accepted.spare_id).result()
    assert result["phase"] == "released"

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    summary = f"spare for {cluster}: 2 CPU, 2048 MiB"
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            await page.goto(accepted.ui_url)
            await page.get_by_text("User Metadata").click()
            metadata = await assert_eventually(lambda: rendered(page, summary), timeout=30)
            await shoot(page, f"{accepted.spare_id}-summary")
            await page.get_by_text("Search Attributes").click()
            await page.get_by_text("VirtflowHost").first.wait_for(timeout=UI_WAIT_MS)
            attributes = await page.inner_text("main")
            await shoot(page, f"{accepted.spare_id}-search-attributes")
        finally:
            await browser.close()
    assert summary in metadata
    for attribute, value in [
        ("VirtflowCluster", cluster),
        ("VirtflowPool", "general"),
        ("VirtflowHost", result["host"]),
        ("VirtflowPhase", "released"),
    ]:
        assert attribute in attributes
        assert value in attributes


async def rendered(page: Any, expected: str) -> str:
    """The UI renders summary and details as Markdown, each in its own frame."""
    texts = []
    for frame in page.frames:
        if "/render?" in frame.url:
            try:
                texts.append(await frame.inner_text("body", timeout=5_000))
            except playwright_api.Error as err:
                # The UI re-renders these frames as data arrives: look again.
                raise AssertionError(f"frame replaced while reading it: {err}") from err
    joined = "\n".join(texts)
    assert expected in joined, joined
    return joined


async def shoot(page: Any, name: str) -> None:
    path = ARTIFACTS / f"temporal-ui-{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    print(f"Temporal UI screenshot: {path}")
