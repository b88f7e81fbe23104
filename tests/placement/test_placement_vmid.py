"""VM id allocation by range and by regex."""

from __future__ import annotations

import pytest
from factories import request
from pydantic import ValidationError

from placement.vmid import allocate_vmid, wants_vmid


@pytest.mark.parametrize(
    ("vmid_range", "used", "expected"),
    [
        ("100-105", [], 100),
        ("100-105", [100, 101, 103], 102),
        ("100-105", [100, 101, 102, 103, 104], 105),
        ("100-105", [100, 101, 102, 103, 104, 105], None),
        ("7-7", [], 7),
        ("7-7", [7], None),
        ("100-105", [99, 106], 100),
    ],
    ids=[
        "the range start when nothing is used",
        "the smallest hole",
        "the range end is included",
        "an exhausted range has none",
        "a one-id range",
        "a used one-id range has none",
        "ids outside the range do not matter",
    ],
)
def test_range(vmid_range: str, used: list[int], expected: int | None) -> None:
    assert allocate_vmid(request(vmid_range=vmid_range), used, None) == expected


@pytest.mark.parametrize(
    ("pattern", "next_vmid", "used", "expected"),
    [
        ("^9", 200, [], 900),
        ("7", 200, [], 207),
        ("^3\\d\\d$", 100, [300, 301], 302),
        ("5$", None, [105], 115),
        ("^12", 130, [], 1200),
        ("^x", 100, [], None),
    ],
    ids=[
        "the smallest match at or above next_vmid",
        "unanchored: a digit anywhere",
        "used ids are skipped",
        "without next_vmid the search starts at 100",
        "a match may need more digits",
        "a pattern no number matches has none",
    ],
)
def test_regex(pattern: str, next_vmid: int | None, used: list[int], expected: int | None) -> None:
    assert allocate_vmid(request(vmid_regex=pattern), used, next_vmid) == expected


def test_range_and_regex_together_take_the_matching_ids_of_the_range() -> None:
    req = request(vmid_range="100-200", vmid_regex="5$")
    assert allocate_vmid(req, [105], 999) == 115


def test_no_vmid_when_not_asked() -> None:
    assert not wants_vmid(request())
    assert wants_vmid(request(vmid_regex="1"))


@pytest.mark.parametrize(
    ("value", "message"),
    [("105-100", "above its end"), ("a-b", "expected 'a-b'"), ("100", "expected 'a-b'")],
    ids=["reversed", "not numbers", "no dash"],
)
def test_bad_range_is_refused(value: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        request(vmid_range=value)


def test_bad_regex_is_refused() -> None:
    with pytest.raises(ValidationError, match="invalid regular expression"):
        request(vmid_regex="(")
