"""Topology keys (`host`, `rack`, any label) and anti-affinity over any of them."""

from __future__ import annotations

import pytest
from factories import decide, host, placement_input, request
from pydantic import ValidationError

from placement.models import VmRequest
from placement.table import HostTable
from placement.topology import domain_of

ROW = "example.com/row"


def test_domain_of_reads_the_name_the_rack_or_a_label() -> None:
    h = host("bm-1", rack="r7", labels={ROW: "3"})
    assert [domain_of(h, k) for k in ("host", "rack", ROW, "zone")] == ["bm-1", "r7", "3", None]
    assert domain_of(host("bm-2"), "rack") is None


def test_the_table_codes_agree_with_domain_of() -> None:
    hosts = [
        host("c", rack="r1", labels={ROW: "2"}),
        host("a", labels={ROW: "1"}),
        host("b", rack="r2", labels={ROW: "1", "x": "y"}),
    ]
    table = HostTable.build(hosts)
    for key in ("host", "rack", ROW, "zone"):
        domains = table.domains(key)
        decoded = [None if c < 0 else domains.values[c] for c in domains.code.tolist()]
        assert decoded == [domain_of(h, key) for h in table.hosts], key


@pytest.mark.parametrize(
    ("rows", "member_on", "expected"),
    [
        (("1", "1"), "h2", "anti_affinity_conflict"),
        (("1", "2"), "h2", None),
        ((None, "1"), "h2", None),
        ((None, None), "h1", "anti_affinity_conflict"),
        ((None, None), "h2", None),
        (("1", None), "h2", None),
    ],
    ids=[
        "a label scope rejects every host of the member's row",
        "another row passes",
        "a host without the label falls back to host scope",
        "the fallback still rejects the member's own host",
        "two unlabelled hosts do not share a row",
        "a member on an unlabelled host blocks no row",
    ],
)
def test_anti_affinity_over_a_label(
    rows: tuple[str | None, str | None], member_on: str, expected: str | None
) -> None:
    hosts = [host(f"h{i + 1}", labels={ROW: r} if r else {}) for i, r in enumerate(rows)]
    req = request(anti_affinity_group="db", anti_affinity_scope=ROW)
    existing = [{"name": "db-0", "host": member_on, "group": "db"}]
    decision = decide(placement_input(hosts, req, existing_vms=existing))
    assert decision.rejected.get("h1") == expected


def test_anti_affinity_scope_host_is_the_default() -> None:
    assert request().anti_affinity_scope == "host"


@pytest.mark.parametrize("scope", ["", "two words"])
def test_a_scope_must_be_a_key(scope: str) -> None:
    with pytest.raises(ValidationError, match="anti_affinity_scope"):
        VmRequest.model_validate(
            {"name": "x", "cpu": 1, "memory_mb": 1, "anti_affinity_scope": scope}
        )
