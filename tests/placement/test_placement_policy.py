"""Policy files: YAML in, every error naming its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from placement.errors import PolicyError
from placement.models import Policy
from placement.policy import load_policy

GOOD = """
scoring_strategy: RequestedToCapacityRatio
ratio_shape:
  - {utilization: 0, score: 0}
  - {utilization: 100, score: 100}
resource_weights: {cpu: 2, memory_mb: 1}
plugin_weights: {TaintToleration: 1, ResourceThreshold: 4}
allow_shared_on_dedicated: true
disabled_plugins: [NodeResourcesBalancedAllocation]
allocation_ratios: {cpu: 4.0}
thresholds:
  prefer_below_percent: {cpu: 70, memory_mb: 80}
  min_free: {gpu: 1}
"""


def test_a_full_policy_loads(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(GOOD)
    policy = load_policy(path)
    assert policy.scoring_strategy == "RequestedToCapacityRatio"
    assert policy.plugin_weights == {
        "NodeResourcesFit": 1,
        "NodeResourcesBalancedAllocation": 1,
        "TaintToleration": 1,
        "NodeAffinity": 2,
        "PodTopologySpread": 2,
        "Near": 2,
        "ResourceThreshold": 4,
    }
    assert policy.allocation_ratios.cpu == 4.0 and policy.allocation_ratios.memory_mb == 1.0
    assert policy.thresholds.min_free == {"gpu": 1}


def test_an_empty_file_is_the_default_policy(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("")
    assert load_policy(path) == Policy()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("plugin_weights: {Spread: 1}", r"^plugin_weights\.Spread: unknown plugin 'Spread'"),
        ("disabled_plugins: [Pol]", r"^disabled_plugins\.Pol: unknown plugin"),
        ("plugin_weights: {Pool: 1}", r"^plugin_weights\.Pool: Pool is a filter, not a score"),
        ("plugin_weights: {NodeAffinity: -1}", r"^plugin_weights: .*NodeAffinity: weight -1"),
        ("scoring_strategy: Spread", r"^scoring_strategy: Input should be"),
        ("resource_weights: {cpu: 0, memory_mb: 0}", r"^resource_weights: .*at least one"),
        ("resource_weights: {gpu: 1}", r"^resource_weights\.gpu: Extra inputs"),
        ("thresholds: {prefer_below_percent: {cpu: 120}}", r"^thresholds\.prefer_below_percent:"),
        ("thresholds: {min_free: {disk: 1}}", r"^thresholds\.min_free\.disk: Input"),
        ("enabled_plugins: [MinFreeResources]", r"needs thresholds\.min_free"),
        ("tie_break: random", r"^tie_break: Input should be 'name_asc'"),
        ("ratio_shape: []", r"^ratio_shape: List should have at least 1 item"),
        ("allocation_ratios: {cpu: 0}", r"^allocation_ratios\.cpu: Input should be greater"),
        ("scoring_strategi: MostAllocated", r"^scoring_strategi: Extra inputs"),
        ("- a list", r"^policy: expected a mapping"),
        ("a: [", r"^policy: .* is not valid YAML"),
    ],
    ids=[
        "unknown plugin weight",
        "unknown disabled plugin",
        "a weight on a filter",
        "a negative weight",
        "an unknown strategy",
        "all resource weights zero",
        "an unknown resource weight",
        "a percentage above 100",
        "an unknown resource threshold",
        "a threshold plugin without its thresholds",
        "an unknown tie-break",
        "an empty shape",
        "a zero allocation ratio",
        "a typo in a key",
        "not a mapping",
        "not YAML",
    ],
)
def test_bad_policies_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(PolicyError, match=message):
        load_policy(path)


def test_a_missing_file_is_a_policy_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read"):
        load_policy(tmp_path / "absent.yaml")
