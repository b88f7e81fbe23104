"""The three PATCH flavours the Kubernetes API accepts, applied to plain JSON objects.

Strategic merge is served as a JSON merge patch: lists (conditions, taints, ...) are replaced
wholesale instead of merged by key. That is enough for the clients virtflow uses, which send
whole lists, and keeps the lab small.
"""

from __future__ import annotations

import copy
from typing import Any

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
PATCH_TYPES = (MERGE, STRATEGIC, JSON_PATCH)


class PatchError(ValueError):
    """The patch cannot be applied: the API answers 422 Invalid."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue  # strategic-merge directives ($patch, $retainKeys, ...) are not modelled
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str]) -> Any:
    current = doc
    for part in parts[:-1]:
        try:
            current = current[int(part)] if isinstance(current, list) else current[part]
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise PatchError(f"path segment {part!r} not found") from exc
    return current


def _get(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return doc
    parent = _parent(doc, parts)
    key = parts[-1]
    try:
        return parent[int(key)] if isinstance(parent, list) else parent[key]
    except (KeyError, IndexError, ValueError, TypeError) as exc:
        raise PatchError(f"path {path!r} not found") from exc


def _remove(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, parts)
    key = parts[-1]
    try:
        return parent.pop(int(key)) if isinstance(parent, list) else parent.pop(key)
    except (KeyError, IndexError, ValueError, TypeError) as exc:
        raise PatchError(f"path {path!r} not found") from exc


def _add(doc: Any, path: str, value: Any, replace: bool = False) -> Any:
    parts = _pointer(path)
    if not parts:
        return copy.deepcopy(value)
    parent = _parent(doc, parts)
    key = parts[-1]
    value = copy.deepcopy(value)
    if isinstance(parent, list):
        if key == "-" and not replace:
            parent.append(value)
            return doc
        try:
            index = int(key)
        except ValueError as exc:
            raise PatchError(f"bad array index {key!r}") from exc
        if not 0 <= index <= len(parent) - (1 if replace else 0):
            raise PatchError(f"array index {index} out of range")
        if replace:
            parent[index] = value
        else:
            parent.insert(index, value)
    elif isinstance(parent, dict):
        if replace and key not in parent:
            raise PatchError(f"path {path!r} not found")
        parent[key] = value
    else:
        raise PatchError(f"cannot add below {path!r}")
    return doc


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902 add/remove/replace/move/copy/test, on a copy of the target."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch is a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"malformed operation {op!r}")
        kind, path = op["op"], op["path"]
        if kind == "add":
            doc = _add(doc, path, op.get("value"))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            doc = _add(doc, path, op.get("value"), replace=True)
        elif kind == "move":
            doc = _add(doc, path, _remove(doc, op["from"]))
        elif kind == "copy":
            doc = _add(doc, path, _get(doc, op["from"]))
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise PatchError(f"test failed at {path!r}")
        else:
            raise PatchError(f"unknown operation {kind!r}")
    return doc


def apply_patch(content_type: str, target: dict[str, Any], body: Any) -> dict[str, Any]:
    """Dispatch on the request's Content-Type (parameters such as charset ignored)."""
    media = content_type.split(";")[0].strip().lower()
    if media == JSON_PATCH:
        result = json_patch(target, body)
    elif media in (MERGE, STRATEGIC):
        if not isinstance(body, dict):
            raise PatchError("a merge patch is a JSON object")
        result = merge_patch(target, body)
    else:
        raise ValueError(media)
    if not isinstance(result, dict):
        raise PatchError("the patched object is not a JSON object")
    return result
