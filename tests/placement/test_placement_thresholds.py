"""Policy-configured thresholds: MinFreeResources (filter) and ResourceThreshold (score)."""

from __future__ import annotations

from typing import Any

import pytest
from factories import decide, host, placement_input, rejection, request

MIN_FREE: list[tuple[str, dict[str, Any], dict[str, Any], str | None]] = [
    (
        "one GPU must stay free",
        {"gpu_capacity": 2, "gpu_allocated": 1},
        {"gpu": 1},
        "below_min_free_gpu",
    ),
    (
        "exactly the minimum left free passes",
        {"gpu_capacity": 3, "gpu_allocated": 1},
        {"gpu": 1},
        None,
    ),
    ("CPU minimum counts the new VM", {"cpu_capacity": 8}, {"cpu": 8}, "below_min_free_cpu"),
    ("memory minimum", {"memory_mb_capacity": 10000}, {"memory_mb": 8000}, "below_min_free_memory"),
    (
        "CPU is reported before memory and GPU",
        {"cpu_capacity": 8, "memory_mb_capacity": 8192},
        {"cpu": 8, "memory_mb": 8192},
        "below_min_free_cpu",
    ),
]


@pytest.mark.parametrize(
    ("host_fields", "request_fields", "expected"),
    [c[1:] for c in MIN_FREE],
    ids=[c[0] for c in MIN_FREE],
)
def test_min_free(
    host_fields: dict[str, Any], request_fields: dict[str, Any], expected: str | None
) -> None:
    policy = {"thresholds": {"min_free": {"cpu": 1, "memory_mb": 4096, "gpu": 1}}}
    h = host(**{"gpu_capacity": 4, **host_fields})
    assert rejection(h, request(**request_fields), policy) == expected


def test_min_free_runs_after_the_placement_md_filters() -> None:
    policy = {"thresholds": {"min_free": {"cpu": 100}}}
    assert rejection(host(cpu_capacity=2), request(cpu=4), policy) == "insufficient_cpu"
    assert rejection(host(), request(), policy) == "below_min_free_cpu"


def test_min_free_is_off_unless_configured() -> None:
    assert rejection(host(cpu_capacity=4), request(cpu=4)) is None


def test_threshold_prefers_hosts_staying_under_the_percentage() -> None:
    hosts = [
        host("busy", cpu_capacity=10, cpu_allocated=4),  # 4 + 4 = 80 % of CPU
        host("edge", cpu_capacity=10, cpu_allocated=3),  # 70 %: at the threshold, satisfied
        host("calm", cpu_capacity=10),  # 40 %
    ]
    policy = {
        "thresholds": {"prefer_below_percent": {"cpu": 70, "memory_mb": 50}},
        "plugin_weights": {"ResourceThreshold": 5},
    }
    decision = decide(placement_input(hosts, request(cpu=4, memory_mb=8192), policy))
    got = {h: s["ResourceThreshold"] for h, s in decision.scores.items()}
    # Memory is 6 % everywhere (satisfied); CPU only on edge and calm: 100 * 1 // 2 = 50.
    assert got == {"busy": 50, "edge": 100, "calm": 100}
    assert decision.scores["edge"]["total"] - decision.scores["busy"]["total"] >= 5 * 50


def test_threshold_weight_zero_leaves_it_out() -> None:
    policy = {
        "thresholds": {"prefer_below_percent": {"cpu": 70}},
        "plugin_weights": {"ResourceThreshold": 0},
    }
    decision = decide(placement_input([host()], request(), policy))
    assert "ResourceThreshold" not in decision.plugins
