"""Filters 10-11 and the NodeAffinity preferred score."""

from __future__ import annotations

from typing import Any

import pytest
from factories import decide, host, placement_input, rejection, request
from pydantic import ValidationError

from placement.models import MatchExpression


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


LABELS = {"zone": "a", "gen": "5", "disk": "ssd"}

SELECTOR = [
    ("a matching selector passes", {"zone": "a"}, None),
    ("a selector with a different value mismatches", {"zone": "b"}, "node_selector_mismatch"),
    ("a selector on a missing label mismatches", {"rack": "r1"}, "node_selector_mismatch"),
    ("every selector pair must match", {"zone": "a", "disk": "hdd"}, "node_selector_mismatch"),
]


@pytest.mark.parametrize(
    ("selector", "expected"), [c[1:] for c in SELECTOR], ids=[c[0] for c in SELECTOR]
)
def test_node_selector(selector: dict[str, str], expected: str | None) -> None:
    assert rejection(host(labels=LABELS), request(node_selector=selector)) == expected


REQUIRED: list[tuple[str, list[list[dict[str, Any]]], str | None]] = [
    ("In with the label's value passes", [[expr("zone", "In", "a", "b")]], None),
    ("In without the label's value fails", [[expr("zone", "In", "c")]], "node_affinity_mismatch"),
    ("NotIn on a missing label is true", [[expr("rack", "NotIn", "r1")]], None),
    (
        "NotIn with the label's value fails",
        [[expr("zone", "NotIn", "a")]],
        "node_affinity_mismatch",
    ),
    ("Exists on a present label passes", [[expr("disk", "Exists")]], None),
    ("Exists on a missing label fails", [[expr("rack", "Exists")]], "node_affinity_mismatch"),
    ("DoesNotExist on a missing label passes", [[expr("rack", "DoesNotExist")]], None),
    ("Gt compares integers", [[expr("gen", "Gt", "4")]], None),
    ("Gt is strict", [[expr("gen", "Gt", "5")]], "node_affinity_mismatch"),
    ("Lt compares integers, not strings", [[expr("gen", "Lt", "10")]], None),
    ("Gt on a non-integer label is false", [[expr("zone", "Gt", "1")]], "node_affinity_mismatch"),
    ("Gt on a missing label is false", [[expr("rack", "Gt", "1")]], "node_affinity_mismatch"),
    (
        "a term needs all its expressions",
        [[expr("zone", "In", "a"), expr("gen", "Lt", "5")]],
        "node_affinity_mismatch",
    ),
    ("terms are ORed", [[expr("zone", "In", "x")], [expr("gen", "In", "5")]], None),
    # Kubernetes' edges: a term it cannot parse, or an empty one, matches no host.
    ("an empty term matches nothing", [[]], "node_affinity_mismatch"),
    ("an empty term beside a matching one is ORed", [[], [expr("zone", "In", "a")]], None),
    ("an invalid value matches nothing, even NotIn", [[expr("zone", "NotIn", "a b")]],
     "node_affinity_mismatch"),
    ("one invalid value spoils the expression", [[expr("zone", "In", "a", "-bad")]],
     "node_affinity_mismatch"),
    ("an invalid key matches nothing", [[expr("has space", "DoesNotExist")]],
     "node_affinity_mismatch"),
    ("a non-integer Gt value matches nothing", [[expr("gen", "Gt", "four")]],
     "node_affinity_mismatch"),
    ("Go's integers have no underscores", [[expr("gen", "Lt", "1_0")]], "node_affinity_mismatch"),
    ("Go's integers have 64 bits", [[expr("gen", "Lt", str(2**63))]], "node_affinity_mismatch"),
    ("an invalid term beside a matching one is ORed",
     [[expr("zone", "NotIn", "a b")], [expr("gen", "Gt", "4")]], None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("required", "expected"), [c[1:] for c in REQUIRED], ids=[c[0] for c in REQUIRED]
)
def test_required_affinity(required: list[list[dict[str, Any]]], expected: str | None) -> None:
    req = request(node_affinity={"required": required})
    assert rejection(host(labels=LABELS), req) == expected


def test_selector_is_checked_before_affinity() -> None:
    req = request(node_selector={"zone": "b"}, node_affinity={"required": [[expr("x", "Exists")]]})
    assert rejection(host(labels=LABELS), req) == "node_selector_mismatch"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (expr("a", "In"), "needs at least one value"),
        (expr("a", "Exists", "x"), "takes no values"),
        (expr("a", "Lt", "1", "2"), "exactly one value"),
        (expr("a", "Gt"), "exactly one value"),
        (expr("a", "Near", "1"), "Input should be"),
    ],
    ids=["In without values", "Exists with values", "Lt on two values", "Gt on none", "unknown"],
)
def test_expression_validation(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        MatchExpression.model_validate(data)


def test_an_empty_or_unparsable_required_term_is_accepted_and_places_nowhere() -> None:
    # As a Pod with such a term is admitted and stays Pending.
    for term in ([], [expr("zone", "In", "not valid")], [expr("gen", "Gt", "5.0")]):
        req = request(node_affinity={"required": [term]})
        decision = decide(placement_input([host("h0", labels=LABELS), host("h1")], req))
        assert decision.host is None
        assert decision.reason_counts == {"node_affinity_mismatch": 2}


def test_an_unparsable_preferred_term_adds_nothing() -> None:
    preferred = [
        {"weight": 50, "match": [expr("zone", "NotIn", "a b")]},
        {"weight": 10, "match": [expr("disk", "Exists")]},
    ]
    hosts = [host("h0", labels={"disk": "ssd"}), host("h1", labels={"zone": "b"})]
    decision = decide(placement_input(hosts, request(node_affinity={"preferred": preferred})))
    assert {h: s["NodeAffinity"] for h, s in decision.scores.items()} == {"h0": 100, "h1": 0}


def test_preferred_weights_are_summed_and_normalised() -> None:
    hosts = [
        host("h0", labels={"zone": "a", "disk": "ssd"}),
        host("h1", labels={"zone": "a"}),
        host("h2", labels={"disk": "ssd"}),
        host("h3"),
    ]
    preferred = [
        {"weight": 30, "match": [expr("zone", "In", "a")]},
        {"weight": 60, "match": [expr("disk", "In", "ssd")]},
    ]
    decision = decide(placement_input(hosts, request(node_affinity={"preferred": preferred})))
    got = {h: s["NodeAffinity"] for h, s in decision.scores.items()}
    # raw 90, 30, 60, 0; 100 * raw // 90.
    assert got == {"h0": 100, "h1": 33, "h2": 66, "h3": 0}
    assert decision.host == "h0"


def test_preferred_is_zero_for_all_when_nothing_matches() -> None:
    preferred = [{"weight": 10, "match": [expr("zone", "In", "z")]}]
    req = request(node_affinity={"preferred": preferred})
    decision = decide(placement_input([host("h0"), host("h1")], req))
    assert {s["NodeAffinity"] for s in decision.scores.values()} == {0}


def test_preferred_score_is_left_out_without_preferred_terms() -> None:
    req = request(node_affinity={"required": [[expr("zone", "In", "a")]]})
    decision = decide(placement_input([host(labels=LABELS)], req))
    assert "NodeAffinity" not in decision.plugins


def test_numeric_label_values_are_read_as_text() -> None:
    h = host(labels={"gen": 5})
    assert h.labels == {"gen": "5"}
    assert rejection(h, request(node_selector={"gen": "5"})) is None
