"""The contract of the one-spare-per-id activity (`activities/spare_ids.py`): has this
workflow id run before?"""

from __future__ import annotations

from pydantic import BaseModel

# The failure type of a run started for an id that ran before.


class EarlierRunInput(BaseModel):
    workflow_id: str
    run_id: str


class EarlierRunResult(BaseModel):
    """The first run of this workflow id, when it is not the asking run."""

    run_id: str | None = None
    status: str | None = None
