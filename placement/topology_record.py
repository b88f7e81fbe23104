"""The record of a placement's topology: where the chosen host is under every topology key
the request named, and what `near` asked for, requested and actual side by side.

Kept apart from the engine (no numpy): it travels in workflow inputs, results and queries.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


def describe_domain(key: str, domain: str | None) -> str:
    """`zone=z1` for the explanation; `no zone` for a host lacking the key."""
    return f"no {key}" if domain is None else f"{key}={domain}"


class NearRecord(BaseModel):
    """What `near` asked for: the VM (found from the Node when a Node was named), its host and
    the domain wanted."""

    vm: str | None = None
    node: str | None = None
    topology_key: str
    required: bool
    host: str | None = None
    domain: str | None = None


class PlacedTopology(BaseModel):
    """The chosen host's domain under every topology key the request names (None: no host, or
    the host lacks the key), and what `near` asked for: requested and actual side by side."""

    domains: dict[str, str | None] = Field(default_factory=dict)
    near: NearRecord | None = None

    @property
    def near_met(self) -> bool | None:
        """Whether the chosen host is in the domain `near` wanted (None without near)."""
        if self.near is None:
            return None
        actual = self.domains.get(self.near.topology_key)
        return actual is not None and actual == self.near.domain

    def describe(self) -> str:
        """One line: `topology.kubernetes.io/zone=lab-a, rack=r1; near node w-7 wanted
        topology.kubernetes.io/zone=lab-a (met)`."""
        parts = [describe_domain(k, d) for k, d in self.domains.items()]
        text = ", ".join(parts)
        if self.near is not None:
            who = f"node {self.near.node}" if self.near.node else f"vm {self.near.vm}"
            wanted = describe_domain(self.near.topology_key, self.near.domain)
            met = "met" if self.near_met else "not met"
            text += f"; near {who} wanted {wanted} ({met})"
        return text
