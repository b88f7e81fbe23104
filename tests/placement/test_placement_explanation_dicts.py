"""The materialised explanation equals the one built host by host, row by row."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement import breakdowns
from placement.decision import BreakdownCache, Decision


def _by_rows(d: Decision) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    keys = (*d.plugins, "total")
    rejected = {d.names[i]: d.keywords[c - 1] for i, c in enumerate(d.reason_codes.tolist()) if c}
    scores = {
        d.names[i]: dict(zip(keys, [*d.matrix[j].tolist(), int(d.totals[j])], strict=True))
        for j, i in enumerate(d.candidates.tolist())
    }
    return rejected, scores


def _decision(
    codes: list[int],
    matrix: np.ndarray,
    weights: list[int],
    interned: BreakdownCache | None = None,
    *,
    templates: bool = False,
) -> Decision:
    reasons = np.array(codes, dtype=np.int64)
    candidates = np.flatnonzero(reasons == 0)
    plugins = tuple(f"P{k}" for k in range(len(weights)))
    matrix = matrix[: len(candidates)]
    totals = matrix @ np.array(weights, dtype=np.int64)
    names = tuple(f"h{i:03d}" for i in range(len(codes)))

    def names_to(value: str) -> dict[str, str]:
        # As HostTable.names_to: every host, in name order, under one value.
        return dict.fromkeys(names, value)

    return Decision(None, None, None, names, ("a", "b", "c"), reasons, candidates, plugins,
                    matrix, totals, interned=interned,
                    names_to=names_to if templates else None)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    codes=st.lists(st.integers(0, 3), min_size=0, max_size=60),
    weights=st.lists(st.integers(0, 5), min_size=0, max_size=4),
    low=st.integers(-(2**40), 100),
    spread=st.sampled_from([1, 3, 101, 2**40]),
    seed=st.integers(0, 2**32 - 1),
)
def test_dicts_equal_row_by_row(
    codes: list[int], weights: list[int], low: int, spread: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    matrix = rng.integers(low, low + spread, size=(len(codes), len(weights)), dtype=np.int64)
    d = _decision(codes, matrix, weights)
    rejected, scores = _by_rows(d)
    assert d.rejected == rejected
    assert list(d.rejected) == list(rejected)
    assert d.scores == scores
    assert list(d.scores) == list(scores)
    assert all(list(s) == [*d.plugins, "total"] for s in d.scores.values())
    assert all(type(v) is int for s in d.scores.values() for v in s.values())


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(0, 200),
    most=st.integers(1, 3),
    share=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_rejected_from_a_template_equals_row_by_row(
    size: int, most: int, share: float, seed: int
) -> None:
    # Most hosts rejected for one reason (a spread, say): the explanation starts from the
    # table's {name: that keyword}, and must still name every rejected host, in name order.
    rng = np.random.default_rng(seed)
    codes = np.where(rng.random(size) < share, most, rng.integers(0, 4, size=size)).tolist()
    matrix = rng.integers(0, 101, size=(size, 2), dtype=np.int64)
    d = _decision(codes, matrix, [1, 1], templates=True)
    rejected, scores = _by_rows(d)
    assert d.rejected == rejected
    assert list(d.rejected) == list(rejected)
    assert d.scores == scores
    assert list(d.scores) == list(scores)


def test_many_candidates_with_repeated_breakdowns() -> None:
    rng = np.random.default_rng(7)
    matrix = rng.integers(0, 4, size=(5000, 3), dtype=np.int64)
    d = _decision([0] * 4000 + [2] * 1000, matrix, [3, 1, 1])
    rejected, scores = _by_rows(d)
    assert d.to_json()["scores"] == scores
    assert d.to_json()["rejected"] == rejected


def test_decisions_sharing_breakdowns_still_explain_their_own_rows() -> None:
    # As an engine's decisions do: equal breakdowns are reused from one decision to the next.
    shared: BreakdownCache = {}
    rng = np.random.default_rng(3)
    for size in (40, 400, 40, 4000):
        matrix = rng.integers(0, 101, size=(size, 3), dtype=np.int64)
        matrix[:, 0] = rng.integers(0, 3, size=size)  # rows repeat, within and across
        codes = rng.integers(0, 2, size=size).tolist()
        d = _decision(codes, matrix, [2, 1, 1], shared)
        rejected, scores = _by_rows(d)
        assert d.to_json() == {"host": None, "vmid": None, "error": None,
                               "rejected": rejected, "scores": scores}  # fmt: skip
    assert shared[("P0", "P1", "P2")]


@settings(max_examples=30, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 300), min_size=1, max_size=5),
    width=st.integers(1, 5),
    distinct=st.sampled_from([2, 7, 101]),
    limits=st.sampled_from([(256, 1 << 16), (3, 50), (2, 5)]),
    low=st.sampled_from([0, 0, -1, 1]),
    seed=st.integers(0, 2**32 - 1),
)
def test_an_engines_lookup_finds_every_rows_own_breakdown(
    sizes: list[int], width: int, distinct: int, limits: tuple[int, int], low: int, seed: int
) -> None:
    # Decisions in turn share one lookup, also when it fills up and starts again, when one
    # decision alone needs more than it holds, with more plugins than it takes (5), and with
    # a score outside 0..100 (a site plugin's: -1 or 101).
    rng = np.random.default_rng(seed)
    shared: BreakdownCache = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(breakdowns, "_MAX_PAGES", limits[0])
        patch.setattr(breakdowns, "_MAX_BREAKDOWNS", limits[1])
        for size in sizes:
            values = rng.integers(low, low + 101, size=distinct)
            matrix = rng.choice(values, size=(size, width)).astype(np.int64)
            matrix[:, 0] = rng.integers(0, 101, size=size)  # a column with many values
            d = _decision([0] * size, matrix, [1] * width, shared)
            assert d.scores == _by_rows(d)[1]
            assert list(d.scores) == list(_by_rows(d)[1])
