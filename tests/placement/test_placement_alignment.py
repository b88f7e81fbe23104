"""ResourceAlignment: the packing score, the request's shape against each host's free room."""

from __future__ import annotations

from typing import Any

from factories import decide, host, placement_input, request

ALIGN: dict[str, Any] = {"plugin_weights": {"ResourceAlignment": 3}}


def _alignment(
    req_fields: dict[str, int], policy: dict[str, Any] = ALIGN, **hosts: dict[str, int]
) -> dict[str, int]:
    inp = placement_input([host(n, **f) for n, f in hosts.items()], request(**req_fields), policy)
    return {h: s["ResourceAlignment"] for h, s in decide(inp).scores.items()}


def test_it_is_off_unless_weighted() -> None:
    decision = decide(placement_input([host("h1")]))
    assert "ResourceAlignment" not in decision.plugins


def test_the_cosine_of_demand_and_free_room() -> None:
    # cpu 16, memory 64 GiB each. Request 4 CPU, 8 GiB: a = (0.25, 0.125).
    shape = {"cpu_capacity": 16, "memory_mb_capacity": 65536}
    scores = _alignment(
        {"cpu": 4, "memory_mb": 8192},
        # free (1, 1): cos = 0.375 / (0.2795 * 1.4142) = 0.9487 -> 94
        empty=shape,
        # free (0.25, 1): cos = (0.0625 + 0.125) / (0.2795 * 1.0308) = 0.6508 -> 65
        cpu_busy={**shape, "cpu_allocated": 12},
        # free (1, 0.25): cos = (0.25 + 0.03125) / (0.2795 * 1.0308) = 0.9761 -> 97
        memory_busy={**shape, "memory_mb_allocated": 49152},
    )
    assert scores == {"cpu_busy": 65, "empty": 94, "memory_busy": 97}


def test_a_memory_heavy_vm_goes_where_memory_is_free() -> None:
    hosts = {
        "cpu_rich": {"cpu_capacity": 64, "memory_mb_capacity": 65536, "memory_mb_allocated": 32768},
        "mem_rich": {"cpu_capacity": 64, "cpu_allocated": 32, "memory_mb_capacity": 65536},
    }
    # a = (2/64, 16384/65536); free (1, 0.5) -> cos 0.5547, free (0.5, 1) -> cos 0.9432.
    scores = _alignment({"cpu": 2, "memory_mb": 16384}, **hosts)
    assert scores == {"cpu_rich": 55, "mem_rich": 94}


def test_a_full_host_and_a_disk_weight() -> None:
    full = {"cpu_capacity": 8, "cpu_allocated": 8, "memory_mb_capacity": 8192,
            "memory_mb_allocated": 8192}  # fmt: skip
    policy = {**ALIGN, "disabled_plugins": ["NodeResourcesFit"]}
    assert _alignment({"cpu": 1, "memory_mb": 1}, policy, full=full) == {"full": 0}
    # Disk weighted: a third dimension. Request only disk free: free (0, 0, 1).
    disk = {**full, "disk_gb_capacity": 100}
    weights = {**policy, "resource_weights": {"cpu": 1, "memory_mb": 1, "disk_gb": 1}}
    # a = (1/8, 1/8192, 0.5): cos = 0.5 / 0.5154 = 0.970 -> 97
    assert _alignment({"cpu": 1, "memory_mb": 1, "disk_gb": 50}, weights, disk=disk) == {"disk": 97}
