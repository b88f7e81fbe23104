"""The BalancedAllocation score."""

from __future__ import annotations

from typing import Any

from factories import decide, host, placement_input, request


def _balanced(**fields: Any) -> int:
    decision = decide(placement_input([host(**fields)], request(cpu=4, memory_mb=4096)))
    return decision.scores["h1"]["NodeResourcesBalancedAllocation"]


def test_even_use_scores_100() -> None:
    assert _balanced(cpu_capacity=8, memory_mb_capacity=8192) == 100


def test_uneven_use_loses_half_the_difference() -> None:
    # fC = 4/16 = 0.25, fM = 4096/8192 = 0.5: int((1 - 0.125) * 100) = 87.
    assert _balanced(cpu_capacity=16, memory_mb_capacity=8192) == 87


def test_fractions_are_capped_at_one() -> None:
    # fC = min(40/8, 1) = 1 (filter disabled to reach an overfull host), fM = 0.5 -> 75.
    h = host(cpu_capacity=8, cpu_allocated=36, memory_mb_capacity=8192)
    policy = {"disabled_plugins": ["NodeResourcesFit"]}
    decision = decide(placement_input([h], request(cpu=4, memory_mb=4096), policy))
    assert decision.scores["h1"]["NodeResourcesBalancedAllocation"] == 75


def test_float_truncation_matches_the_formula() -> None:
    # fC = 4/12, fM = 4096/8192: int((1 - abs(1/3 - 1/2) / 2) * 100) = int(91.66) = 91.
    assert _balanced(cpu_capacity=12, memory_mb_capacity=8192) == 91
