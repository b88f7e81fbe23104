"""Errors of the placement library."""

from __future__ import annotations

from collections.abc import Sequence

# Where pydantic reports a bad dict key, its location ends with this marker after the key.
_KEY_MARKER = "[key]"


def field_path(loc: Sequence[int | str]) -> str:
    """A validation error's location as a dotted path, `hosts.3.cpu_capacity`. A bad dict key
    reads as the key's own path, `devices.fpga` (pydantic's location ends `fpga.[key]`)."""
    return ".".join(str(part) for part in loc if part != _KEY_MARKER)


class PolicyError(ValueError):
    """A policy that cannot run; the message starts with the key at fault (`plugin_weights.X`)."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason
