"""The contract of the host-facts activity (`activities/hosts.py`): a reserved host's address."""

from __future__ import annotations

from pydantic import BaseModel


class HostAddressInput(BaseModel):
    inventory: str
    host: str


class HostAddressResult(BaseModel):
    ip: str | None = None
