"""Loading a placement policy from YAML, checked against the plugin registry.

Every error names the key at fault, e.g. `plugin_weights.Foo: unknown plugin 'Foo'` or
`resource_weights.cpu: Input should be greater than or equal to 0`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from .errors import PolicyError, field_path
from .models import Policy
from .pipeline import build_pipeline
from .registry import PluginRegistry, default_registry

__all__ = ["PolicyError", "load_policy", "parse_policy"]


def first_error(exc: ValidationError, prefix: str = "") -> tuple[str, str]:
    """The first validation error as (dotted key, message)."""
    err = exc.errors()[0]
    key = field_path((*([prefix] if prefix else []), *err["loc"]))
    return key or prefix or "input", err["msg"]


def parse_policy(data: Any, registry: PluginRegistry | None = None) -> Policy:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PolicyError("policy", f"expected a mapping, got {type(data).__name__}")
    try:
        policy = Policy.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(*first_error(exc)) from None
    build_pipeline(policy, registry or default_registry())
    return policy


def load_policy(path: str | Path, registry: PluginRegistry | None = None) -> Policy:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise PolicyError("policy", f"cannot read {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PolicyError("policy", f"{path} is not valid YAML: {exc}") from None
    return parse_policy(data, registry)
