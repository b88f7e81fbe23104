"""When a reservation holds its room: a half-open interval `[start, end)`, and the sweep that
turns the reservations on one host into the most they ever hold at once within an interval.

A request over `[a, b)` sees a host as allocated by the largest sum, over every instant of
`[a, b)`, of the reservations that hold at that instant: never the plain sum (which would
refuse bookings that follow each other) and never the sum at `a` alone (which would
over-commit). Each resource takes its own largest sum, which may come from different instants:
a little more than exact, never less.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel, ConfigDict, model_validator

from .models import VmShape


class Hold(BaseModel):
    """`[start, end)`. No start: from whenever it was made (counts as since always); no end:
    until it is freed (counts as forever)."""

    model_config = ConfigDict(frozen=True)

    start: datetime | None = None
    end: datetime | None = None
    # A booking's window start: its spare is Ready by then, the hold starting a lead earlier.
    # Placement never reads it; it tells `GET /v1/bookings` the window the room is held for.
    window_start: datetime | None = None

    @model_validator(mode="after")
    def _ends_after_start(self) -> Hold:
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError(f"a hold must end after it starts ({self.start} .. {self.end})")
        return self

    def overlaps(self, other: Hold) -> bool:
        before_other_ends = self.start is None or other.end is None or self.start < other.end
        other_before_end = other.start is None or self.end is None or other.start < self.end
        return before_other_ends and other_before_end

    def at_least_until(self, now: datetime | None) -> Hold:
        """A reservation that is not freed yet holds its room now, whatever end it was given
        (a release running late): its end is never before `now`."""
        if now is None or self.end is None or self.end > now:
            return self
        return Hold(start=self.start, end=None, window_start=self.window_start)

    def describe(self) -> str:
        start = self.start.isoformat() if self.start else "now"
        end = self.end.isoformat() if self.end else "released"
        return f"{start} .. {end}"


@dataclass
class Peak:
    """The most a host's reservations hold at once over an interval, per resource."""

    cpu: int = 0
    memory_mb: int = 0
    gpu: int = 0
    disk_gb: int = 0
    vm_count: int = 0
    devices: dict[str, int] = field(default_factory=dict)


_SCALARS = ("cpu", "memory_mb", "gpu", "disk_gb")


def peak(held: Sequence[tuple[Hold, VmShape]], over: Hold) -> Peak:
    """The most `held` (each overlapping `over`) hold at once within `over`, per resource.

    Each hold is clipped to `over`; the sweep walks starts and ends in time order, ends first
    at one instant (half-open: a hold ending at `t` and one starting at `t` never overlap)."""
    if len(held) <= 1:
        return _plain_sum(held)
    events: list[tuple[float, int, int]] = []
    for k, (hold, _) in enumerate(held):
        events.append((_clip(hold.start, over.start, low=True), 1, k))
        events.append((_clip(hold.end, over.end, low=False), 0, k))
    events.sort()
    devices = sorted({d for _, shape in held for d in shape.devices})
    width = len(_SCALARS) + 1 + len(devices)
    now, top = [0] * width, [0] * width
    for _, starting, k in events:
        shape = held[k][1]
        sign = 1 if starting else -1
        amounts = [getattr(shape, name) for name in _SCALARS]
        amounts += [1, *(shape.devices.get(d, 0) for d in devices)]
        for i, amount in enumerate(amounts):
            now[i] += sign * amount
            if starting and now[i] > top[i]:
                top[i] = now[i]
    scalars = len(_SCALARS)
    cpu, memory_mb, gpu, disk_gb = top[:scalars]
    return Peak(
        cpu=cpu,
        memory_mb=memory_mb,
        gpu=gpu,
        disk_gb=disk_gb,
        vm_count=top[scalars],
        devices={d: n for d, n in zip(devices, top[scalars + 1 :], strict=True) if n},
    )


def _plain_sum(held: Sequence[tuple[Hold, VmShape]]) -> Peak:
    total = Peak(vm_count=len(held))
    for _, shape in held:
        total.cpu += shape.cpu
        total.memory_mb += shape.memory_mb
        total.gpu += shape.gpu
        total.disk_gb += shape.disk_gb
        for name, n in shape.devices.items():
            if n:
                total.devices[name] = total.devices.get(name, 0) + n
    return total


def _clip(moment: datetime | None, bound: datetime | None, low: bool) -> float:
    """A hold's start or end clipped to the interval's, as a number that sorts (an open side
    is minus or plus infinity)."""
    value = (float("-inf") if low else float("inf")) if moment is None else moment.timestamp()
    if bound is not None:
        value = max(value, bound.timestamp()) if low else min(value, bound.timestamp())
    return value
