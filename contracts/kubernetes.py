"""The contract of the Kubernetes activities (`activities/kubernetes.py`,
`activities/kube_health.py`): a spare's Node made Ready and adopted, watched while held, and
the spares of a cluster counted."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class NodeNameInput(BaseModel):
    """A spare's Node, which every Node activity's input names, and the cluster it is in."""

    node_name: str
    # The spare's cluster; None: the one its Node's name (the spare id) names.
    cluster: str | None = None


class NodeAdoption(BaseModel):
    """What virtflow makes sure a spare's Node carries once it is Ready: the spare's labels,
    and the labels and taints of the site template it was made from."""

    labels: dict[str, str] = Field(default_factory=dict)
    template: str | None = None
    pool: str | None = None


class WaitNodeReadyInput(NodeNameInput):
    # How often to heartbeat while nothing changes, and the cap of the retry backoff.
    poll_hint_seconds: float = Field(default=5, gt=0)
    # None: wait until Ready (the workflow's start_to_close bounds it). Set: return a
    # not-ready result after that long, so the workflow can publish progress and decide.
    max_wait_seconds: float | None = Field(default=None, gt=0)
    # Labels and taints to apply once Ready (and the spare's join token to delete).
    adopt: NodeAdoption | None = None
    # With max_wait_seconds: whether the spare's status says its cluster's API does not
    # answer. The probe ends as soon as that stops being true (the API stops answering, or
    # answers again), so the status says which cluster is unreachable, since when, at once.
    api_down_shown: bool = False


class NodeReadyResult(BaseModel):
    node_name: str
    ready: bool
    missing: list[str] = Field(default_factory=list)
    # Not ready and the cluster's API not answering: which cluster, since when, and why.
    api_error: str | None = None


class ClusterSparesInput(BaseModel):
    cluster: str


class UnhealthySparesResult(BaseModel):
    cluster: str
    total: int
    unhealthy: list[str] = Field(default_factory=list)


class CheckNodeReadyInput(NodeNameInput):
    adopt: NodeAdoption | None = None


class WatchNodeHealthInput(NodeNameInput):
    # How long the Node must stay unhealthy before it is reported (MachineHealthCheck: 300).
    unhealthy_after_seconds: float = Field(default=300, gt=0)
    until: Literal["unhealthy", "healthy"] = "unhealthy"
    poll_hint_seconds: float = Field(default=5, gt=0)
    # Set for a warm spare: the watch ends (as `releasing`) once the Node's spare-id label
    # names another spare, the one that claimed it.
    owner: str | None = None


class NodeHealthResult(BaseModel):
    node_name: str
    healthy: bool
    # What is wrong, in words: "Ready=Unknown (NodeStatusUnknown), taint node.kubernetes.io/...".
    reason: str = ""
    since: datetime | None = None
    # The Node is being released (cordoned by a release) or was taken over: the hold is over.
    releasing: bool = False
