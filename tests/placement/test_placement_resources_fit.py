"""Filters 12-14 and the NodeResourcesFit score under each strategy."""

from __future__ import annotations

from typing import Any

import pytest
from factories import decide, host, placement_input, rejection, request

from placement.models import ShapePoint
from placement.plugins import strategies as s

FIT: list[tuple[str, dict[str, Any], dict[str, Any], str | None]] = [
    ("an exact CPU fit passes", {"cpu_capacity": 8, "cpu_allocated": 4}, {"cpu": 4}, None),
    (
        "one CPU too many fails",
        {"cpu_capacity": 8, "cpu_allocated": 5},
        {"cpu": 4},
        "insufficient_cpu",
    ),
    (
        "the CPU ratio overcommits",
        {"cpu_capacity": 8, "cpu_allocated": 12, "cpu_allocation_ratio": 2.0},
        {"cpu": 4},
        None,
    ),
    (
        "the effective capacity is floored",
        {"cpu_capacity": 3, "cpu_allocation_ratio": 1.5},
        {"cpu": 5},
        "insufficient_cpu",
    ),
    (
        "the floored capacity is an exact fit",
        {"cpu_capacity": 3, "cpu_allocation_ratio": 1.5},
        {"cpu": 4},
        None,
    ),
    ("an exact memory fit passes", {"memory_mb_capacity": 8192}, {"memory_mb": 8192}, None),
    (
        "memory over capacity fails",
        {"memory_mb_capacity": 8191},
        {"memory_mb": 8192},
        "insufficient_memory",
    ),
    (
        "CPU is reported before memory",
        {"cpu_capacity": 1, "memory_mb_capacity": 1},
        {},
        "insufficient_cpu",
    ),
    (
        "a GPU request needs a free GPU",
        {"gpu_capacity": 2, "gpu_allocated": 2},
        {"gpu": 1},
        "insufficient_gpu",
    ),
    ("an exact GPU fit passes", {"gpu_capacity": 2, "gpu_allocated": 1}, {"gpu": 1}, None),
    (
        "a request without GPU ignores an overfull GPU count",
        {"gpu_capacity": 0, "gpu_allocated": 3},
        {},
        None,
    ),
    ("a GPU request on a host without GPU fails", {}, {"gpu": 1}, "insufficient_gpu"),
    ("a zero capacity host fails", {"cpu_capacity": 0}, {}, "insufficient_cpu"),
]


@pytest.mark.parametrize(
    ("host_fields", "request_fields", "expected"), [c[1:] for c in FIT], ids=[c[0] for c in FIT]
)
def test_filter(
    host_fields: dict[str, Any], request_fields: dict[str, Any], expected: str | None
) -> None:
    assert rejection(host(**host_fields), request(**request_fields)) == expected


def test_policy_default_ratio_applies_to_hosts_without_their_own() -> None:
    policy = {"allocation_ratios": {"cpu": 4.0, "memory_mb": 1.5}}
    over = host(cpu_capacity=8, cpu_allocated=28, memory_mb_capacity=8192)
    assert rejection(over, request(cpu=4, memory_mb=12288), policy) is None
    assert rejection(over, request(cpu=5, memory_mb=4096), policy) == "insufficient_cpu"
    own = host(cpu_capacity=8, cpu_allocation_ratio=1.0)
    assert rejection(own, request(cpu=9), policy) == "insufficient_cpu"


STRATEGY = [
    # (sentence, function, requested, capacity, expected)
    ("least allocated on an empty share", s.least_allocated, 0, 10, 100),
    ("least allocated floors", s.least_allocated, 1, 3, 66),
    ("least allocated on an exact fit is 0", s.least_allocated, 10, 10, 0),
    ("least allocated over capacity is 0", s.least_allocated, 11, 10, 0),
    ("least allocated on zero capacity is 0", s.least_allocated, 0, 0, 0),
    ("most allocated floors", s.most_allocated, 2, 3, 66),
    ("most allocated caps at capacity", s.most_allocated, 20, 10, 100),
    ("most allocated on zero capacity is 0", s.most_allocated, 5, 0, 0),
]


@pytest.mark.parametrize(
    ("fn", "r", "cap", "expected"), [c[1:] for c in STRATEGY], ids=[c[0] for c in STRATEGY]
)
def test_strategy_arithmetic(fn: Any, r: int, cap: int, expected: int) -> None:
    assert fn(r, cap) == expected


SHAPE = [ShapePoint(utilization=0, score=0), ShapePoint(utilization=50, score=100),
         ShapePoint(utilization=100, score=30)]  # fmt: skip


@pytest.mark.parametrize(
    ("r", "cap", "expected"),
    [(0, 10, 0), (1, 3, 66), (5, 10, 100), (7, 10, 72), (10, 10, 30), (11, 10, 30), (0, 0, 30)],
    ids=[
        "empty host is the first point",
        "utilisation floors before the shape (33 %)",
        "a point is hit exactly",
        "a falling segment floors towards minus infinity",
        "full host is the last point",
        "over capacity counts as 100 %",
        "zero capacity counts as 100 %",
    ],
)
def test_requested_to_capacity_shape(r: int, cap: int, expected: int) -> None:
    assert s.requested_to_capacity(r, cap, SHAPE) == expected
    import numpy as np

    from placement.usage import Scored

    cap_row = np.array([[float(cap)]])
    free, divisor = cap_row - r, np.maximum(cap_row, 1.0)
    amounts = Scored(("cpu",), (0,), free, divisor, float(cap), cap_row, np.array([0]))
    vector = s.requested_to_capacity_v(amounts, SHAPE)
    assert vector.tolist() == [[expected]]  # one row per resource


def test_shape_below_its_first_point_takes_the_first_score() -> None:
    shape = [ShapePoint(utilization=20, score=40), ShapePoint(utilization=80, score=90)]
    assert s.shape_score(10, shape) == 40
    assert s.shape_score(50, shape) == 65
    assert s.shape_score(95, shape) == 90


def _fit_scores(policy: dict[str, Any]) -> dict[str, int]:
    hosts = [
        host("empty", cpu_capacity=16, memory_mb_capacity=32768),
        host("half", cpu_capacity=16, cpu_allocated=6, memory_mb_capacity=32768,
             memory_mb_allocated=12288),
    ]  # fmt: skip
    decision = decide(placement_input(hosts, request(cpu=2, memory_mb=4096), policy))
    return {h: sc["NodeResourcesFit"] for h, sc in decision.scores.items()}


def test_least_allocated_prefers_the_emptier_host() -> None:
    # empty: cpu (14*100)//16 = 87, mem (28672*100)//32768 = 87; half: 50 and 50.
    assert _fit_scores({}) == {"empty": 87, "half": 50}


def test_most_allocated_prefers_the_fuller_host() -> None:
    assert _fit_scores({"scoring_strategy": "MostAllocated"}) == {"empty": 12, "half": 50}


def test_resource_weights_combine_with_floor() -> None:
    # empty: cpu 87, mem 87; half: cpu (8*100)//16=50, mem 50 -> weights do not matter here,
    # so load memory differently: half with cpu 12.5 % and memory 50 %.
    hosts = [host("h", cpu_capacity=16, memory_mb_capacity=32768, memory_mb_allocated=12288)]
    policy = {"resource_weights": {"cpu": 3, "memory_mb": 1}}
    decision = decide(placement_input(hosts, request(cpu=2, memory_mb=4096), policy))
    # cpu (14*100)//16 = 87, mem (16384*100)//32768 = 50; (87*3 + 50) // 4 = 77.
    assert decision.scores["h"]["NodeResourcesFit"] == 77


def test_requested_to_capacity_ratio_uses_the_policy_shape() -> None:
    policy = {
        "scoring_strategy": "RequestedToCapacityRatio",
        "ratio_shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 100}],
    }
    # empty: 12 % -> 12; half: 50 % -> 50.
    assert _fit_scores(policy) == {"empty": 12, "half": 50}
