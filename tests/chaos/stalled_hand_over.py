"""`virtflow worker` whose warm hand-overs never answer: the warm spare is handed over, then
the worker hangs until the test kills it. That is the crash between a hand-over and the
pool's record of it (run as `python -m tests.chaos.stalled_hand_over worker`)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from temporalio import activity

from activities.warm_pools import WarmActivities
from contracts.warm import HandOverRequest, HandOverResult

# Where each hand-over that happened is written (`<warm spare> <request's spare> <accepted>`).
HANDED_OVER_FILE_ENV = "STALLED_HAND_OVER_FILE"


class StalledWarmActivities(WarmActivities):
    @activity.defn(name="hand_over_spare")
    async def hand_over_spare(self, inp: HandOverRequest) -> HandOverResult:
        result = await super().hand_over_spare(inp)
        with Path(os.environ[HANDED_OVER_FILE_ENV]).open("a") as out:
            out.write(f"{inp.warm_spare_id} {inp.spare_id} {result.accepted}\n")
        await asyncio.Event().wait()  # the worker dies here
        return result


if __name__ == "__main__":
    import worker.worker
    from cli.main import run_cli

    worker.worker.WarmActivities = StalledWarmActivities  # type: ignore[misc]
    sys.argv = ["virtflow", *sys.argv[1:]]
    run_cli()
