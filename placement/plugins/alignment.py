"""Score (packing, off unless weighted): ResourceAlignment, the request's shape against the
host's free room, as in Tetris (Grandl et al.): a VM heavy on memory goes where memory is free,
one heavy on CPU where CPU is, so neither is stranded beside a full other resource.

Over the resources with a positive `resource_weights` entry (CPU and memory by default; disk
when weighted): demand `a_r = q_r / cap_r` and free room `f_r = max(cap_r - allocated_r, 0) /
cap_r` (0 where cap is 0), before the VM is placed. Score `int(100 * (a . f) / (|a| * |f|))`,
the cosine of the angle between them; 0 when either is zero. The length of the free vector
does not count: NodeResourcesFit weighs how much is free, this how well its shape fits.
Enable it with `plugin_weights: {ResourceAlignment: 3}` (quality bench: docs/PLACEMENT.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..framework import RequestContext
from ..models import Host
from ..names import RESOURCE_ALIGNMENT
from ..table import FloatArray, HostTable, IntArray
from ..usage import SCORED, Usage, scored_resources

_FIELDS = {"cpu": ("cpu_cap", "cpu_req"), "memory_mb": ("mem_cap", "mem_req"),
           "disk_gb": ("disk_cap", "disk_req")}  # fmt: skip


def _resources(ctx: RequestContext) -> list[tuple[str, int]]:
    """The weighted resources and the request's amount of each."""
    weights = ctx.policy.resource_weights
    return [(r, getattr(ctx.request, r)) for r in SCORED if getattr(weights, r) > 0]


def _cosine(pairs: Sequence[tuple[float, float]]) -> int:
    dot = norm_a = norm_f = 0.0
    for a, f in pairs:
        dot += a * f
        norm_a += a * a
        norm_f += f * f
    if norm_a == 0 or norm_f == 0:
        return 0
    return int(dot / (math.sqrt(norm_a) * math.sqrt(norm_f)) * 100)


class ResourceAlignment:
    name = RESOURCE_ALIGNMENT

    def score_hosts(self, ctx: RequestContext, hosts: Sequence[Host]) -> list[int] | None:
        out = []
        for host in hosts:
            u = Usage.of(host, ctx.request, ctx.policy.allocation_ratios)
            pairs = []
            for resource, asked in _resources(ctx):
                cap_field, req_field = _FIELDS[resource]
                cap, req = getattr(u, cap_field), getattr(u, req_field)
                if cap == 0:
                    pairs.append((0.0, 0.0))
                else:
                    pairs.append((asked / cap, max(cap - (req - asked), 0) / cap))
            out.append(_cosine(pairs))
        return out

    def score_table(self, ctx: RequestContext, table: HostTable, idx: IntArray) -> IntArray | None:
        block = ctx.candidate_usage(table, idx).scored(scored_resources(ctx.policy))
        weighted = {resource for resource, _ in _resources(ctx)}
        dot = norm_a = norm_f = None
        for row, resource in enumerate(block.resources):
            if resource not in weighted:
                continue
            asked, cap, divisor = block.asked[row], block.cap[row], block.cap_or_1[row]
            a: FloatArray = np.where(cap > 0, asked / divisor, 0.0)
            free = block.free[row] + asked  # the room before the VM: capacity - allocated
            np.maximum(free, 0.0, out=free)
            free /= divisor
            if dot is None or norm_a is None or norm_f is None:
                dot, norm_a, norm_f = a * free, a * a, free * free
            else:
                dot += a * free
                norm_a += a * a
                norm_f += free * free
        if dot is None or norm_a is None or norm_f is None:
            return np.zeros(len(idx), dtype=np.int64)
        # The same operations in the same order as `_cosine`: the same floats.
        denominator = np.sqrt(norm_a) * np.sqrt(norm_f)
        zero = (norm_a == 0) | (norm_f == 0)
        cosine = dot / np.where(zero, 1.0, denominator)
        cosine *= 100
        return np.where(zero, 0, cosine.astype(np.int64))
