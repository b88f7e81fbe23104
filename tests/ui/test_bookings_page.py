"""The bookings page draws each booking on its host's row, with the token from the address's
fragment: an unscoped operator sees both clusters' bookings, a scoped token its own alone.

Headless Debian Chromium driven by Playwright, as the Temporal UI's test; the screenshot is
kept under `.virtflow/artifacts/` for a person to look at.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.api.api_helpers import LiveStack
from tests.api.test_api_booking_view import OTHER, bearer, book, by_spare, tenants_live
from tests.helpers import assert_eventually
from tests.ui.test_temporal_ui import ARTIFACTS, CHROMIUM_ARGS, UI_WAIT_MS, chromium, playwright_api

__all__ = ["chromium", "tenants_live"]


async def drawn(browser: Any, url: str, name: str) -> Any:
    page = await browser.new_page(viewport={"width": 1400, "height": 700})
    await page.goto(url)
    await page.wait_for_selector("body[data-loaded]", timeout=UI_WAIT_MS)
    assert await page.get_attribute("body", "data-loaded") == "true", await page.inner_text("body")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"bookings-page-{name}.png"), full_page=True)
    return page


def on_row(host: str, spare_id: str) -> str:
    return f'.host[data-host="{host}"] g.booking[data-spare="{spare_id}"]'


async def test_the_page_draws_each_booking_on_its_host(
    tenants_live: LiveStack, chromium: Any
) -> None:
    live = tenants_live
    day2 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    mine = await book(live, "ctl-lab-0b9e3d71", "lab", "bm-gen-03", day2)
    theirs = await book(live, "ctl-x-a84f2c06", OTHER, "bm-gen-02", day2 + timedelta(hours=1))

    async def both_booked() -> None:
        answer = await live.api.get("/v1/bookings", headers=bearer("op-all-61c0f2aa"))
        found = by_spare(answer.json())
        assert [found[s][1]["phase"] for s in (mine, theirs) if s in found] == ["booked"] * 2

    await assert_eventually(both_booked, timeout=30)
    page_url = f"{live.url}/v1/bookings.html"
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            every = await drawn(browser, f"{page_url}#token=op-all-61c0f2aa", "operator")
            assert await every.locator(on_row("bm-gen-03", mine)).count() == 1
            assert await every.locator(on_row("bm-gen-02", theirs)).count() == 1
            # Each on its own host's row only.
            assert await every.locator(f'g.booking[data-spare="{mine}"]').count() == 1
            title = await every.locator(on_row("bm-gen-03", mine) + " title").text_content()
            assert "cluster lab, phase booked" in title
            assert f"window {day2:%Y-%m-%dT%H:%M:%SZ}" in title
            # The lead is drawn before the window, which starts where the lead ends.
            lead = await every.locator(on_row("bm-gen-03", mine) + " rect.lead").bounding_box()
            window = await every.locator(on_row("bm-gen-03", mine) + " rect.window").bounding_box()
            assert lead["x"] < window["x"] <= lead["x"] + lead["width"] + 1

            own = await drawn(browser, f"{page_url}#token=ctl-lab-0b9e3d71", "scoped")
            assert await own.locator(on_row("bm-gen-03", mine)).count() == 1
            assert await own.locator(f'g.booking[data-spare="{theirs}"]').count() == 0
            assert OTHER not in await own.inner_text("body")

            anonymous = await browser.new_page()
            await anonymous.goto(page_url)
            await anonymous.wait_for_selector("body[data-loaded=error]", timeout=UI_WAIT_MS)
            assert "401 unauthenticated" in await anonymous.inner_text("#error")
        finally:
            await browser.close()
    for spare_id in (mine, theirs):
        await live.stack.client.get_workflow_handle(spare_id).terminate("test over")
