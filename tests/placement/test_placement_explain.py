"""The readable explanation table."""

from __future__ import annotations

from factories import host, placement_input, request

from placement.engine import place
from placement.explain import render_explanation


def test_table_lists_chosen_candidates_then_rejections_with_numbers() -> None:
    hosts = [
        host("busy", cpu_allocated=20),
        host("free"),
        host("small", cpu_capacity=2),
        host("web", pool="web"),
    ]
    inp = placement_input(hosts, request(cpu=4, pool=None, node_selector={}))
    inp = inp.model_copy(update={"hosts": [*hosts[:3], hosts[3]]})
    decision = place(inp)
    lines = render_explanation(inp, decision).splitlines()
    assert lines[0] == "request vm-1: cpu 4, memory_mb 8192"
    assert lines[1].split() == [
        "host",
        "result",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "total",
    ]
    assert lines[2].split()[:2] == ["free", "chosen"]
    assert lines[2].split()[-1] == str(decision.scores["free"]["total"])
    assert [line.split()[0] for line in lines[3:6]] == ["web", "busy", "small"]
    assert lines[5].split(None, 1)[1] == "insufficient_cpu (needs 4 of 2)"
    assert lines[-1] == decision.summary


def test_nothing_fits_ends_with_the_reason_counts() -> None:
    inp = placement_input([host("a", pool="x"), host("b", pool="y")], request(pool="z"))
    text = render_explanation(inp, place(inp))
    assert text.splitlines()[-1] == "no host fits: 2 pool_mismatch"
    assert "a     pool_mismatch" in text


def test_limit_caps_the_rows() -> None:
    inp = placement_input([host(f"h{i}") for i in range(10)])
    lines = render_explanation(inp, place(inp), limit=3).splitlines()
    assert lines[-2] == "... 7 more hosts"
    assert len(lines) == 1 + 1 + 3 + 2
