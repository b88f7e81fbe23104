"""Filter 9 and the TaintToleration score, with Kubernetes toleration semantics."""

from __future__ import annotations

from typing import Any

import pytest
from factories import decide, host, placement_input, rejection, request

from placement.models import Taint, Toleration


def taint(key: str = "gpu", value: str = "true", effect: str = "NoSchedule") -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


CASES: list[tuple[str, list[dict[str, str]], list[dict[str, Any]], str | None]] = [
    ("an untolerated NoSchedule taint rejects", [taint()], [], "untolerated_taint"),
    (
        "an untolerated NoExecute taint rejects",
        [taint(effect="NoExecute")],
        [],
        "untolerated_taint",
    ),
    (
        "an untolerated PreferNoSchedule taint does not reject",
        [taint(effect="PreferNoSchedule")],
        [],
        None,
    ),
    (
        "Equal with the same key and value tolerates",
        [taint()],
        [{"key": "gpu", "operator": "Equal", "value": "true"}],
        None,
    ),
    (
        "Equal with another value does not tolerate",
        [taint()],
        [{"key": "gpu", "operator": "Equal", "value": "false"}],
        "untolerated_taint",
    ),
    (
        "Exists on the key tolerates any value",
        [taint(value="whatever")],
        [{"key": "gpu", "operator": "Exists"}],
        None,
    ),
    (
        "an empty key with Exists tolerates every taint",
        [taint(), taint("maint", "", "NoExecute")],
        [{"operator": "Exists"}],
        None,
    ),
    (
        "a toleration with an effect matches only that effect",
        [taint(effect="NoExecute")],
        [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "untolerated_taint",
    ),
    (
        "a toleration without effect matches every effect",
        [taint(effect="NoExecute")],
        [{"key": "gpu", "value": "true"}],
        None,
    ),
    (
        "every hard taint needs its own toleration",
        [taint(), taint("ssd", "yes")],
        [{"key": "gpu", "operator": "Exists"}],
        "untolerated_taint",
    ),
]


@pytest.mark.parametrize(
    ("taints", "tolerations", "expected"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_filter(
    taints: list[dict[str, str]], tolerations: list[dict[str, Any]], expected: str | None
) -> None:
    assert rejection(host(taints=taints), request(tolerations=tolerations)) == expected


def test_toleration_validation_follows_kubernetes() -> None:
    with pytest.raises(ValueError, match="empty key needs operator Exists"):
        Toleration(operator="Equal", value="x")
    with pytest.raises(ValueError, match="Exists takes no value"):
        Toleration(key="a", operator="Exists", value="x")
    assert Toleration.model_validate({"key": "a", "effect": ""}).effect is None
    assert Toleration(key="a", value="b").tolerates(Taint(key="a", value="b", effect="NoExecute"))


def test_score_counts_untolerated_prefer_no_schedule_taints() -> None:
    soft = [taint(key, effect="PreferNoSchedule") for key in ("a", "b", "c")]
    hosts = [host("h0"), host("h1", taints=soft[:1]), host("h2", taints=soft[:2])]
    hosts.append(host("h3", taints=soft))
    decision = decide(placement_input(hosts))
    # n = 0, 1, 2, 3 and max 3: 100 - 100 * n // 3.
    got = {h: s["TaintToleration"] for h, s in decision.scores.items()}
    assert got == {"h0": 100, "h1": 67, "h2": 34, "h3": 0}
    assert decision.host == "h0"


def test_score_is_100_for_all_when_every_soft_taint_is_tolerated() -> None:
    hosts = [host("h0"), host("h1", taints=[taint(effect="PreferNoSchedule")])]
    decision = decide(placement_input(hosts, request(tolerations=[{"operator": "Exists"}])))
    assert {s["TaintToleration"] for s in decision.scores.values()} == {100}


def test_score_is_left_out_when_no_candidate_has_a_soft_taint() -> None:
    # h1's soft taint sits on a host that fails a filter: it does not bring the score in.
    soft = taint(effect="PreferNoSchedule")
    hosts = [host("h0"), host("h1", taints=[soft], unschedulable=True)]
    decision = decide(placement_input(hosts))
    assert "TaintToleration" not in decision.scores["h0"]
    assert decision.plugins == ("NodeResourcesFit", "NodeResourcesBalancedAllocation")


def test_a_taint_listed_twice_counts_once() -> None:
    soft = taint("maint", "yes", "PreferNoSchedule")
    hosts = [
        host("a", taints=[taint("gpu", "", "PreferNoSchedule")]),
        host("b", taints=[soft, soft, taint("disk", "old", "PreferNoSchedule")]),
        host("c", taints=[soft, soft]),
    ]
    d = decide(placement_input(hosts))
    # a and c each carry one untolerated soft taint, b two: only b scores lower.
    assert {h: s["TaintToleration"] for h, s in d.scores.items()} == {"a": 50, "b": 0, "c": 50}
