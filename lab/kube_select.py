"""Label and field selectors as the Kubernetes API parses them, for the lab API server.

Supported label syntax: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`.
Field selectors are `path=value` / `path==value` / `path!=value` over dotted object paths
(`metadata.name`, `metadata.namespace`, `spec.nodeName`, `status.phase`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Predicate = Callable[[Mapping[str, Any]], bool]

_SET_RE = re.compile(r"^\s*(!?)([^\s!=]+)\s+(in|notin)\s+\((.*)\)\s*$")
_CMP_RE = re.compile(r"^\s*([^\s!=]+)\s*(==|!=|=)\s*(.*?)\s*$")
_EXISTS_RE = re.compile(r"^\s*(!?)([^\s!=()]+)\s*$")


class SelectorError(ValueError):
    """The selector string is malformed: the API answers 400 BadRequest."""


def _split_terms(selector: str) -> list[str]:
    """Split on commas that are not inside a `(a,b)` value set."""
    terms: list[str] = []
    depth = 0
    current = ""
    for char in selector:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [t for t in terms if t.strip()]


def _label_term(term: str) -> Callable[[Mapping[str, str]], bool]:
    if match := _SET_RE.match(term):
        _, key, op, raw = match.groups()
        values = {v.strip() for v in raw.split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if match := _CMP_RE.match(term):
        key, op, value = match.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if match := _EXISTS_RE.match(term):
        negate, key = match.groups()
        if negate:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise SelectorError(f"unable to parse requirement: {term!r}")


def label_selector(selector: str | None) -> Predicate:
    """Compile a labelSelector query parameter into a predicate over whole objects."""
    terms = [_label_term(t) for t in _split_terms(selector or "")]

    def matches(obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(term(labels) for term in terms)

    return matches


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return ""
        current = current.get(part)
    if current is None:
        return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


def field_selector(selector: str | None) -> Predicate:
    """Compile a fieldSelector query parameter into a predicate over whole objects."""
    checks: list[tuple[str, bool, str]] = []
    for term in _split_terms(selector or ""):
        match = _CMP_RE.match(term)
        if not match:
            raise SelectorError(f"invalid field selector: {term!r}")
        path, op, value = match.groups()
        checks.append((path, op == "!=", value))

    def matches(obj: Mapping[str, Any]) -> bool:
        return all((_field_value(obj, path) == value) != negate for path, negate, value in checks)

    return matches
