"""Where an inventory snapshot (the PLACEMENT.md JSON form) comes from: a file, a URL, or a
hypervisor's own API with a site file (`<hypervisor>:<site.yaml>`, read by
`hypervisors/<hypervisor>/inventory.py`).

Activities fetch the snapshot themselves so thousands of hosts never pass through workflow
history. A broken document is a non-retryable `InventoryInvalid` (retrying reads the same
bytes); an HTTP failure is a retryable `InventoryUnavailable` (the source may come back).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure
from runtime.http_client import HttpClient, HttpUnreachable

from . import hypervisors
from .site import inventory_invalid

HTTP_TIMEOUT_SECONDS = 30.0
# A file's status (size, times, inode) names its bytes only once every write that could share
# its timestamps is past (file times tick coarsely): until then its bytes are read and hashed.
SETTLED_SECONDS = 2.0


class InventorySource(Protocol):
    """Reads one snapshot of an inventory, fresh on every call."""

    async def load(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class InventoryRead:
    """One read of an inventory: the document and the version of the bytes it was parsed
    from (equal versions, equal documents), or no version when the source cannot tell."""

    document: dict[str, Any]
    version: str | None = None


def content_version(body: bytes) -> str:
    """The version of an inventory's bytes: a digest of the content itself, so a change is
    seen whatever the clock or the file's size say (about 2 ms for a few MB)."""
    return hashlib.sha256(body).hexdigest()


class VersionedSource(ABC):
    """A source that can tell the version of its bytes, so an unchanged inventory is neither
    parsed nor validated again; `load` is its read with no version to compare."""

    @abstractmethod
    async def read_if_changed(self, version: str | None) -> InventoryRead | None:
        """The document and its version, or None when the bytes are still at `version`."""

    async def load(self) -> dict[str, Any]:
        read = await self.read_if_changed(None)
        assert read is not None  # no version given: always read
        return read.document


async def read_if_changed(source: InventorySource, version: str | None) -> InventoryRead | None:
    """The source's document and version, or None when its content is still at `version`
    (nothing parsed). A source that cannot tell a version is loaded every time."""
    if isinstance(source, VersionedSource):
        return await source.read_if_changed(version)
    return InventoryRead(await source.load())


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


class FileInventory(VersionedSource):
    """A YAML or JSON file (YAML is a superset of JSON, so one parser reads both)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # (version, status) of the last read whose status had settled: the same status again
        # means the same bytes, and nothing is read.
        self._settled: tuple[str, tuple[int, ...]] | None = None

    async def read_if_changed(self, version: str | None) -> InventoryRead | None:
        """The file parsed, unless its bytes are still those of `version`."""
        try:
            body, read = await asyncio.to_thread(self._bytes_unless, version)
        except FileNotFoundError:
            raise inventory_invalid(str(self.path), "file not found") from None
        except OSError as err:
            raise inventory_invalid(str(self.path), f"cannot read: {err.strerror or err}") from err
        if body is None:
            return None
        try:
            data = yaml.safe_load(body.decode())
        except (yaml.YAMLError, UnicodeDecodeError) as err:
            raise inventory_invalid(str(self.path), f"not valid YAML or JSON: {err}") from err
        return InventoryRead(check_document(str(self.path), data), read)

    def _bytes_unless(self, version: str | None) -> tuple[bytes | None, str]:
        """The file's bytes and their version, or no bytes when they are still `version`
        (told by the file's status once settled, else by reading and hashing them)."""
        st = os.stat(self.path)
        status = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if version is not None and self._settled == (version, status):
            return None, version
        body = self.path.read_bytes()
        read = content_version(body)
        # A later write changes the change time (no caller can set it) past this one.
        settled = time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLED_SECONDS * 1e9
        self._settled = (read, status) if settled else None
        return (None if read == version else body), read


class HttpInventory(VersionedSource):
    """An inventory served over HTTP, e.g. the lab hypervisor's `GET /inventory`."""

    def __init__(
        self, url: str, timeout: float = HTTP_TIMEOUT_SECONDS, http: HttpClient | None = None
    ) -> None:
        self.url = url
        self.timeout = timeout
        # The worker's connection pool, not a new client per read.
        self._http = http or HttpClient()

    async def read_if_changed(self, version: str | None) -> InventoryRead | None:
        """The answer parsed, unless its body is still that of `version`."""
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
        read = content_version(response.body)
        if read == version:
            return None
        try:
            data = response.json()
        except ValueError as err:
            raise inventory_invalid(self.url, f"not JSON: {err}") from err
        return InventoryRead(check_document(self.url, data), read)


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
