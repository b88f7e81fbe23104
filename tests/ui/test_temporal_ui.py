"""The Temporal web UI shows a finished spare's summary and search attributes, and decodes an
encrypted input only when its codec server setting points at virtflow's.

Headless Debian Chromium driven by Playwright (`executable_path`, no browser download). The
screenshot is kept under `.virtflow/artifacts/` for a person to look at.
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from temporalio.client import Client

from api.codec_server import create_codec_app
from api.spare_start import start_spare
from lab.hypervisor import load_inventory_file
from runtime.clusters import ClusterConfig
from runtime.encryption import EncryptionCodec, data_converter
from runtime.settings import Settings
from tests.helpers import assert_eventually
from tests.known_secrets import PAYLOAD_KEY
from tests.runtime.encrypted_echo import Note
from tests.stack import LAB_INVENTORY, Stack, running_stack
from webhooks.serve import serve_app

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
# What the UI shows of a payload it cannot decode: the base64 of its bytes, quoted.
SEALED = re.compile(r'"[A-Za-z0-9+/]{40,}={0,2}"')

playwright_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed")


@pytest.fixture
def chromium() -> Path:
    found = CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")
    if not found:
        pytest.skip("no chromium: `make test` installs the Debian package when it can (root)")
    return Path(found)


@pytest.fixture
async def stack(client: Client, task_queue: str, tmp_path: Path) -> AsyncIterator[Stack]:
    doc = load_inventory_file(LAB_INVENTORY)
    # The UI is under test, not the VM's making: the lab hypervisor's API, not the playbook.
    async with running_stack(
        client, task_queue, tmp_path, doc, configure=_with_ui_cluster, provisioner="http"
    ) as s:
        yield s


# A cluster of the test's own, so the UI's search by cluster finds this test's spare alone;
# registered like any other, on the lab's API.
UI_CLUSTER = f"ui{uuid.uuid4().hex[:6]}"


def _with_ui_cluster(settings: Settings) -> Settings:
    lab = ClusterConfig(kubeconfig=settings.kubeconfig)
    return settings.model_copy(
        update={"kubeconfig": None, "clusters": {"lab": lab, UI_CLUSTER: lab}}
    )


async def test_the_ui_shows_a_finished_spares_summary_and_search_attributes(
    stack: Stack, chromium: Path, temporal_ui_port: int
) -> None:
    cluster = UI_CLUSTER
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


async def test_the_ui_decodes_an_encrypted_input_only_through_the_codec_server(
    client: Client, chromium: Path, temporal_ui_port: int
) -> None:
    codec = EncryptionCodec({"k1": SecretStr(PAYLOAD_KEY)}, "k1")
    sealed = Client(
        client.service_client, namespace=client.namespace, data_converter=data_converter(codec)
    )
    host = f"hv-{uuid.uuid4().hex[:8]}"
    workflow_id = f"encrypted-{uuid.uuid4()}"
    # No worker: the started workflow's input is all the page needs.
    handle = await sealed.start_workflow(
        "EncryptedEcho",
        Note(host=host, message="hello"),
        id=workflow_id,
        task_queue=f"tq-{uuid.uuid4()}",
    )
    ui = f"http://127.0.0.1:{temporal_ui_port}"
    app = create_codec_app(codec, tokens=[], origins=[ui])
    url = f"{ui}/namespaces/{client.namespace}/workflows/{workflow_id}"
    try:
        async with serve_app(app) as codec_url, playwright_api.async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
            try:
                without = await input_shown(browser, url, None, sealed_only)
                await shoot_page(without[1], f"{workflow_id}-without-codec")
                decoded = await input_shown(browser, url, codec_url, lambda text: host in text)
                await shoot_page(decoded[1], f"{workflow_id}-with-codec")
            finally:
                await browser.close()
    finally:
        await handle.terminate()
    # Without the codec server the UI can only show the sealed bytes (base64 of the nonce and
    # ciphertext); with it, the input as the workflow got it.
    assert host not in without[0]
    # (The UI puts a fold marker before the JSON it renders.)
    assert json.loads(decoded[0][decoded[0].index("{") :]) == {"host": host, "message": "hello"}


def sealed_only(text: str) -> bool:
    return SEALED.fullmatch(text) is not None


async def input_shown(
    browser: Any, url: str, codec_endpoint: str | None, expected: Callable[[str], bool]
) -> tuple[str, Any]:
    """The input the workflow page shows once `expected` holds, in a fresh browser profile
    whose codec endpoint (the UI's "Codec Server" setting, kept in local storage) is
    `codec_endpoint`."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    if codec_endpoint is not None:
        # What the UI's "Codec Server" dialog stores: the endpoint, used over the server's.
        await context.add_init_script(
            f"window.localStorage.setItem('endpoint', {json.dumps(json.dumps(codec_endpoint))});"
            "window.localStorage.setItem('overrideRemoteCodecConfiguration', 'true');"
        )
    page = await context.new_page()
    await page.goto(url)

    async def shown() -> str:
        text: str = await page.inner_text("main")
        found = re.search(r"\nInput\n(.*?)\nResult\n", text, re.DOTALL)
        shown_input = found.group(1).strip() if found else ""
        assert expected(shown_input), text
        return shown_input

    return await assert_eventually(shown, timeout=30, interval=0.5), page


async def shoot_page(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await shoot(page, name)
