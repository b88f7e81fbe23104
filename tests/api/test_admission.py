"""What the API keeps between requests (api/admission.py): shared questions, never stale ones."""

from __future__ import annotations

import asyncio

from api.admission import Admission, Started


async def test_posts_asking_a_ledger_at_once_share_one_question_and_a_later_one_asks_again() -> (
    None
):
    admission = Admission()
    asked = 0
    answer = asyncio.Event()

    async def ask() -> bool:
        nonlocal asked
        asked += 1
        await answer.wait()
        return asked == 1

    waiting = [asyncio.ensure_future(admission.has_bookings("default", ask)) for _ in range(50)]
    other = asyncio.ensure_future(admission.has_bookings("other", ask))
    await asyncio.sleep(0)  # every caller is waiting on its inventory's question
    answer.set()
    assert await asyncio.gather(*waiting) == [True] * 50
    await other
    assert asked == 2  # one question per inventory, not one per caller
    assert await admission.has_bookings("default", ask) is False  # asked anew, not kept
    assert asked == 3


async def test_a_spare_is_known_once_its_first_post_was_answered() -> None:
    admission = Admission()
    assert not admission.knows("spare-lab-r1")

    async def start() -> Started:
        return Started(request_hash="h1")

    await admission.started("spare-lab-r1", start)
    assert admission.knows("spare-lab-r1")
