"""Patch flavours and selectors of the lab Kubernetes API, as pure functions."""

from __future__ import annotations

from typing import Any

import pytest

from lab.kube_patch import JSON_PATCH, MERGE, STRATEGIC, PatchError, apply_patch
from lab.kube_select import SelectorError, field_selector, label_selector

BASE: dict[str, Any] = {
    "metadata": {"name": "n", "labels": {"a": "1", "b": "2"}},
    "spec": {"taints": [{"key": "x"}, {"key": "y"}]},
}

PATCHES: list[tuple[str, str, Any, dict[str, Any]]] = [
    (
        "merge patch deletes with null and adds keys",
        MERGE,
        {"metadata": {"labels": {"a": None, "c": "3"}}},
        {"metadata": {"name": "n", "labels": {"b": "2", "c": "3"}}, "spec": BASE["spec"]},
    ),
    (
        "strategic patch replaces a list wholesale",
        STRATEGIC + "; charset=utf-8",
        {"spec": {"taints": [{"key": "z"}]}},
        {"metadata": BASE["metadata"], "spec": {"taints": [{"key": "z"}]}},
    ),
    (
        "json patch appends, replaces and moves",
        JSON_PATCH,
        [
            {"op": "add", "path": "/spec/taints/-", "value": {"key": "z"}},
            {"op": "replace", "path": "/metadata/labels/a", "value": "9"},
            {"op": "move", "from": "/metadata/labels/b", "path": "/metadata/labels/c"},
            {"op": "remove", "path": "/spec/taints/0"},
        ],
        {
            "metadata": {"name": "n", "labels": {"a": "9", "c": "2"}},
            "spec": {"taints": [{"key": "y"}, {"key": "z"}]},
        },
    ),
]


@pytest.mark.parametrize(("case", "kind", "patch", "want"), PATCHES, ids=[p[0] for p in PATCHES])
def test_patches(case: str, kind: str, patch: Any, want: dict[str, Any]) -> None:
    assert apply_patch(kind, BASE, patch) == want
    assert BASE["metadata"]["labels"] == {"a": "1", "b": "2"}  # the stored object is untouched


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "remove", "path": "/metadata/labels/missing"}],
        [{"op": "replace", "path": "/spec/taints/5", "value": {}}],
        [{"op": "test", "path": "/metadata/name", "value": "other"}],
        [{"op": "teleport", "path": "/spec"}],
    ],
)
def test_bad_json_patches_are_rejected(ops: list[dict[str, Any]]) -> None:
    with pytest.raises(PatchError):
        apply_patch(JSON_PATCH, BASE, ops)


OBJ = {
    "metadata": {"name": "vm1", "labels": {"pool": "a", "spare": "true"}},
    "spec": {"nodeName": "host1", "unschedulable": True},
}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("pool=a", True),
        ("pool==a,spare=true", True),
        ("pool!=a", False),
        ("pool in (a,b)", True),
        ("pool notin (a,b)", False),
        ("spare", True),
        ("!spare", False),
        ("missing!=x", True),
        ("", True),
    ],
)
def test_label_selectors(selector: str, matches: bool) -> None:
    assert label_selector(selector)(OBJ) is matches


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("metadata.name=vm1", True),
        ("spec.nodeName=host2", False),
        ("spec.nodeName!=host2,metadata.name=vm1", True),
        ("spec.unschedulable=true", True),
    ],
)
def test_field_selectors(selector: str, matches: bool) -> None:
    assert field_selector(selector)(OBJ) is matches


def test_malformed_selectors_are_rejected() -> None:
    with pytest.raises(SelectorError):
        label_selector("a b c")
    with pytest.raises(SelectorError):
        field_selector("metadata.name")
