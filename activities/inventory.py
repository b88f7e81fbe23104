"""Where an inventory snapshot (the PLACEMENT.md JSON form) comes from: a file or a URL.

Activities fetch the snapshot themselves so thousands of hosts never pass through workflow
history. A broken document is a non-retryable `InventoryInvalid` (retrying reads the same
bytes); an HTTP failure is a retryable `InventoryUnavailable` (the source may come back).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Protocol

import httpx
import yaml
from temporalio.exceptions import ApplicationError

HTTP_TIMEOUT_SECONDS = 30.0


class InventorySource(Protocol):
    async def load(self) -> dict[str, Any]: ...


def invalid(where: str, why: str) -> ApplicationError:
    return ApplicationError(
        f"inventory {where}: {why}", type="InventoryInvalid", non_retryable=True
    )


def check_document(where: str, data: object) -> dict[str, Any]:
    """Only the outer shape: the placement models validate the hosts themselves."""
    if not isinstance(data, dict):
        raise invalid(where, f"expected a mapping, got {type(data).__name__}")
    if not isinstance(data.get("hosts"), list):
        raise invalid(where, "expected a 'hosts' list")
    return data


class FileInventory:
    """A YAML or JSON file (YAML is a superset of JSON, so one parser reads both)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def load(self) -> dict[str, Any]:
        try:
            text = await asyncio.to_thread(self.path.read_text)
        except FileNotFoundError:
            raise invalid(str(self.path), "file not found") from None
        except OSError as err:
            raise invalid(str(self.path), f"cannot read: {err.strerror or err}") from err
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise invalid(str(self.path), f"not valid YAML or JSON: {err}") from err
        return check_document(str(self.path), data)


class HttpInventory:
    """An inventory served over HTTP, e.g. the lab hypervisor's `GET /inventory`."""

    def __init__(self, url: str, timeout: float = HTTP_TIMEOUT_SECONDS) -> None:
        self.url = url
        self.timeout = timeout
        # One client (and its kept-alive connection) per source, not a new one per read.
        self._http: httpx.AsyncClient | None = None

    async def load(self) -> dict[str, Any]:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.timeout)
        try:
            response = await self._http.get(self.url)
            response.raise_for_status()
        except httpx.HTTPStatusError as err:
            raise ApplicationError(
                f"inventory {self.url}: HTTP {err.response.status_code}",
                type="InventoryUnavailable",
            ) from err
        except httpx.HTTPError as err:
            raise ApplicationError(
                f"inventory {self.url}: {type(err).__name__}: {err}", type="InventoryUnavailable"
            ) from err
        try:
            data = response.json()
        except ValueError as err:
            raise invalid(self.url, f"not JSON: {err}") from err
        return check_document(self.url, data)


def inventory_source(spec: str) -> InventorySource:
    """A URL (http:// or https://) or a file path, as written in the settings."""
    if spec.startswith(("http://", "https://")):
        return HttpInventory(spec)
    return FileInventory(Path(spec))
