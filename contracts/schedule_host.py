"""The contract of ScheduleHost, the placement-only task of the original scheduler's API
(`POST /schedule`): its input, result, `host` query and `release` signal."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from placement.models import VmRequest, VmShape

SCHEDULE_HOST = "ScheduleHost"
HOST_QUERY = "host"
RELEASE_SIGNAL = "release"
DEFAULT_HOLD_SECONDS = 900


def schedule_workflow_id(task_id: str) -> str:
    """A placement-only task of the original scheduler's API (`POST /schedule`)."""
    return f"schedule-{task_id}"


class ScheduleHostInput(VmShape):
    model_config = ConfigDict(extra="forbid")

    pool: str | None = Field(default=None, max_length=63)
    dedicated: bool = False
    inventory: str = Field(default="default", min_length=1, max_length=63)
    hold_seconds: int = Field(default=DEFAULT_HOLD_SECONDS, ge=1, le=7 * 24 * 3600)
    # The cluster the task is for (None: no cluster): a refusal names only its holders.
    cluster: str | None = Field(default=None, min_length=1, max_length=63)

    def vm_request(self, task_id: str) -> VmRequest:
        """What placement is asked: the task's id names the VM the caller will build."""
        return VmRequest.asked_by(self, name=task_id)


class ScheduledHost(BaseModel):
    name: str
    ip: str | None = None


class ScheduleHostResult(BaseModel):
    host: ScheduledHost
    freed_because: str


class ReleaseTask(BaseModel):
    reason: str = Field(default="released by request", max_length=500)
