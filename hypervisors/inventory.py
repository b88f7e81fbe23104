"""Where an inventory snapshot (the PLACEMENT.md JSON form) comes from: a file, a URL, or a
hypervisor's own API with a site file (`<hypervisor>:<site.yaml>`, read by
`hypervisors/<hypervisor>/inventory.py`).

Activities fetch the snapshot themselves so thousands of hosts never pass through workflow
history. A broken document is a non-retryable `InventoryInvalid` (retrying reads the same
bytes); an HTTP failure is a retryable `InventoryUnavailable` (the source may come back).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

import yaml
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure
from runtime.http_client import HttpClient, HttpUnreachable

from . import hypervisors
from .site import inventory_invalid

HTTP_TIMEOUT_SECONDS = 30.0


class InventorySource(Protocol):
    """Reads one snapshot of an inventory, fresh on every call."""

    async def load(self) -> dict[str, Any]: ...


def unknown_inventory(name: str, configured: Iterable[str]) -> str:
    """The one wording for an inventory name the settings do not configure."""
    known = ", ".join(sorted(configured)) or "none"
    return f"unknown inventory '{name}' (configured: {known})"


def source_named(sources: Mapping[str, InventorySource], name: str) -> InventorySource:
    """The source of inventory `name`. An unknown name is configuration, not weather: a
    non-retryable `UnknownInventory`, since retrying cannot make the inventory appear."""
    source = sources.get(name)
    if source is None:
        raise ApplicationError(
            unknown_inventory(name, sources), type=Failure.UNKNOWN_INVENTORY, non_retryable=True
        )
    return source


def check_document(where: str, data: object) -> dict[str, Any]:
    """Only the outer shape: the placement models validate the hosts themselves."""
    if not isinstance(data, dict):
        raise inventory_invalid(where, f"expected a mapping, got {type(data).__name__}")
    if not isinstance(data.get("hosts"), list):
        raise inventory_invalid(where, "expected a 'hosts' list")
    return data


class FileInventory:
    """A YAML or JSON file (YAML is a superset of JSON, so one parser reads both)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def load(self) -> dict[str, Any]:
        try:
            text = await asyncio.to_thread(self.path.read_text)
        except FileNotFoundError:
            raise inventory_invalid(str(self.path), "file not found") from None
        except OSError as err:
            raise inventory_invalid(str(self.path), f"cannot read: {err.strerror or err}") from err
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise inventory_invalid(str(self.path), f"not valid YAML or JSON: {err}") from err
        return check_document(str(self.path), data)


class HttpInventory:
    """An inventory served over HTTP, e.g. the lab hypervisor's `GET /inventory`."""

    def __init__(
        self, url: str, timeout: float = HTTP_TIMEOUT_SECONDS, http: HttpClient | None = None
    ) -> None:
        self.url = url
        self.timeout = timeout
        # The worker's connection pool, not a new client per read.
        self._http = http or HttpClient()

    async def load(self) -> dict[str, Any]:
        try:
            response = await self._http.request("GET", self.url, timeout_seconds=self.timeout)
        except HttpUnreachable as err:
            raise ApplicationError(
                f"inventory {self.url}: {err}", type=Failure.INVENTORY_UNAVAILABLE
            ) from err
        if not response.is_success:
            raise ApplicationError(
                f"inventory {self.url}: HTTP {response.status}", type=Failure.INVENTORY_UNAVAILABLE
            )
        try:
            data = response.json()
        except ValueError as err:
            raise inventory_invalid(self.url, f"not JSON: {err}") from err
        return check_document(self.url, data)


def site_inventory(spec: str) -> InventorySource | None:
    """The reader for `<name>:<site.yaml>`, or None when `spec` names no hypervisor."""
    name, colon, path = spec.partition(":")
    declared = hypervisors().get(name) if colon else None
    if declared is None or declared.inventory is None:
        return None
    module, _, cls = declared.inventory.partition(":")
    reader: InventorySource = getattr(importlib.import_module(module), cls)(Path(path))
    return reader


def inventory_source(spec: str, http: HttpClient | None = None) -> InventorySource:
    """A URL (http:// or https://), `<hypervisor>:<site.yaml>` (read from the hypervisor's API,
    hypervisors/) or a file path, as written in the settings."""
    if spec.startswith(("http://", "https://")):
        return HttpInventory(spec, http=http)
    return site_inventory(spec) or FileInventory(Path(spec))


async def read_inventory(spec: str) -> dict[str, Any]:
    """One read for a caller without a worker's connection pool (the API): the connection
    closes after it."""
    http = HttpClient()
    try:
        return await inventory_source(spec, http).load()
    finally:
        await http.aclose()
