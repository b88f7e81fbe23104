"""What a Proxmox VE cluster does that an API fake alone does not: the stats delay and a guest.

The lab judges the Proxmox path with an API fake written by others (fakepve, a test-time tool,
never imported here). This front sits before it on loopback, passes every request through
unchanged, and adds three things a real cluster does:

- **The stats delay.** `GET /cluster/resources` takes a VM's name and status from pvestatd,
  which refreshes every 10 s: a VM cloned a moment ago is listed with no name and status
  `unknown` until the next pass. The front hides both for `stats_delay` seconds after a clone
  through it made the VM (0: no delay).
- **A clone's temporary config.** While a clone runs, the new VM's config on its node is PVE's
  placeholder (`lock: clone`, description `qmclone temporary file`): no name yet, so the node's
  VM list shows it as `VM <vmid>` until the clone ends. The front answers that way for any VM
  locked `clone` (the API fake names it at once).
- **A guest that boots.** When a start task of a VM whose config has `cicustom: user=<storage>:
  snippets/<file>` ends OK, the front reads that snippet where the node keeps the storage's
  snippets (`snippets_dirs`), as PVE does at start, and plays the guest's cloud-init: it writes
  the snippet's `write_files` under a directory of its own for the VM (paths inside those files
  that name another written file are moved along) and runs its `runcmd`. With the lab's join
  template that registers the Node with the lab Kubernetes API, with the bootstrap token, as the
  real guest of the libvirt path does.

It serves https with the lab CA, so clients trust it through `REQUESTS_CA_BUNDLE`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import ssl
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from aiohttp import web

from lab.kube_tls import LabCertificates

log = logging.getLogger(__name__)

API = "/api2/json"
_START = re.compile(rf"^{API}/nodes/([^/]+)/qemu/(\d+)/status/start$")
_CLONE = re.compile(rf"^{API}/nodes/([^/]+)/qemu/(\d+)/clone$")
_NEWID = re.compile(r"(?:^|&)newid=(\d+)")
_VM_LIST = re.compile(rf"^{API}/nodes/[^/]+/qemu$")
_VM_CONFIG = re.compile(rf"^{API}/nodes/[^/]+/qemu/\d+/(?:config|status/current)$")
_CICUSTOM_USER = re.compile(r"(?:^|,)user=([^:,]+):snippets/([^,]+)")
# Request headers the front passes on (the client's credentials and what it accepts).
_PASS_HEADERS = ("Authorization", "Cookie", "CSRFPreventionToken", "Content-Type", "Accept")
GUEST_SECONDS = 60


@dataclass
class Guest:
    """One booted VM as the lab plays it: its files, and how its boot script ended."""

    vmid: int
    root: Path
    returncode: int | None = None
    output: str = ""
    finished: bool = False


@dataclass
class PveFront:
    upstream: str
    """https://host:port of the API server behind the front."""
    upstream_ca: Path
    certificates: LabCertificates
    state_dir: Path
    snippets_dirs: Mapping[str, Path] = field(default_factory=dict)
    """Storage name -> directory of its snippets (where the playbook writes them)."""
    stats_delay: float = 0.0
    guests: dict[int, Guest] = field(default_factory=dict)
    _made_at: dict[int, float] = field(default_factory=dict)
    _runner: web.AppRunner | None = None
    _session: aiohttp.ClientSession | None = None
    _boots: set[asyncio.Task[None]] = field(default_factory=set)
    url: str = ""

    async def start(self, host: str = "127.0.0.1") -> None:
        upstream_tls = ssl.create_default_context(cafile=str(self.upstream_ca))
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=upstream_tls))
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_route("*", "/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        cert, key = self.certificates.write(self.state_dir / "tls")
        serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        serving.load_cert_chain(cert, key)
        site = web.TCPSite(self._runner, host, 0, ssl_context=serving)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"https://{host}:{port}"

    async def stop(self) -> None:
        for boot in list(self._boots):
            boot.cancel()
        await asyncio.gather(*self._boots, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    @property
    def api_host(self) -> str:
        """The `api_host` a Proxmox client is given: host:port."""
        return self.url.removeprefix("https://")

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k in _PASS_HEADERS}
        async with self._session.request(
            request.method,
            self.upstream + request.path_qs,
            data=body or None,
            headers=headers,
            allow_redirects=False,
        ) as answer:
            payload = await answer.read()
            status, reason = answer.status, answer.reason
            content_type = answer.headers.get("Content-Type", "application/json")
        path = request.path
        if request.method == "GET" and path == f"{API}/cluster/resources" and status == 200:
            payload = self._delayed_stats(payload)
        elif request.method == "GET" and status == 200 and _VM_LIST.match(path):
            payload = _cloning_unnamed(payload)
        elif request.method == "GET" and status == 200 and _VM_CONFIG.match(path):
            payload = _cloning_placeholder(payload, path.endswith("/config"))
        elif request.method == "POST" and status == 200 and _CLONE.match(path):
            if newid := _NEWID.search(body.decode(errors="replace")):
                self._made_at[int(newid[1])] = time.monotonic()
        elif request.method == "POST" and status == 200 and (start := _START.match(path)):
            upid = json.loads(payload).get("data")
            boot = asyncio.create_task(
                self._boot(start[1], int(start[2]), str(upid), headers), name=f"boot {start[2]}"
            )
            self._boots.add(boot)
            boot.add_done_callback(self._boots.discard)
        return web.Response(
            body=payload, status=status, reason=reason, headers={"Content-Type": content_type}
        )

    def _delayed_stats(self, payload: bytes) -> bytes:
        if not self.stats_delay:
            return payload
        document = json.loads(payload)
        now = time.monotonic()
        for entry in document.get("data") or []:
            if entry.get("type") != "qemu":
                continue
            made = self._made_at.get(int(entry["vmid"]))
            if made is not None and now - made < self.stats_delay:
                # pvestatd has not been round yet: no name, no status.
                entry.pop("name", None)
                entry["status"] = "unknown"
        return json.dumps(document).encode()

    async def _api(self, path: str, headers: dict[str, str]) -> Any:
        assert self._session is not None
        async with self._session.get(self.upstream + API + path, headers=headers) as answer:
            answer.raise_for_status()
            return (await answer.json())["data"]

    async def _boot(self, node: str, vmid: int, upid: str, headers: dict[str, str]) -> None:
        """Once the start task has ended OK, run the VM's user-data snippet as its guest would."""
        try:
            while True:
                task = await self._api(f"/nodes/{node}/tasks/{upid}/status", headers)
                if task.get("status") == "stopped":
                    break
                await asyncio.sleep(0.1)
            if task.get("exitstatus") != "OK":
                return
            config = await self._api(f"/nodes/{node}/qemu/{vmid}/config", headers)
            found = _CICUSTOM_USER.search(str(config.get("cicustom", "")))
            directory = self.snippets_dirs.get(found[1]) if found else None
            if found is None or directory is None:
                return  # no user data the lab can read: a guest with nothing to run
            snippet = (directory / found[2]).read_text()
            guest = Guest(vmid=vmid, root=self.state_dir / "guests" / str(vmid))
            self.guests[vmid] = guest
            await _cloud_init(snippet, guest)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("lab guest of VM %s", vmid)


def _cloning_unnamed(payload: bytes) -> bytes:
    """The node's VM list: a VM mid-clone has no name of its own yet (PVE lists `VM <vmid>`)."""
    document = json.loads(payload)
    for entry in document.get("data") or []:
        if entry.get("lock") == "clone":
            entry["name"] = f"VM {entry['vmid']}"
    return json.dumps(document).encode()


def _cloning_placeholder(payload: bytes, config: bool) -> bytes:
    """A VM mid-clone: its config is PVE's placeholder, its status carries no name of its own."""
    document = json.loads(payload)
    data = document.get("data")
    if not isinstance(data, dict) or data.get("lock") != "clone":
        return payload
    if config:
        document["data"] = {
            "lock": "clone",
            "description": "qmclone temporary file\n",
            "digest": data.get("digest", ""),
        }
    elif "vmid" in data:
        data["name"] = f"VM {data['vmid']}"
    return json.dumps(document).encode()


async def _cloud_init(user_data: str, guest: Guest) -> None:
    """The part of cloud-init the lab's templates use: write_files, then runcmd."""
    config = yaml.safe_load(user_data) or {}
    written: dict[str, Path] = {}
    for item in config.get("write_files") or []:
        written[item["path"]] = guest.root / item["path"].lstrip("/")
    for item in config.get("write_files") or []:
        content = str(item.get("content", ""))
        for original, moved in written.items():
            content = content.replace(original, str(moved))
        target = written[item["path"]]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        target.chmod(int(str(item.get("permissions", "0644")), 8))
    output: list[str] = []
    for command in config.get("runcmd") or []:
        argv = [command] if isinstance(command, str) else [str(a) for a in command]
        argv = [str(written.get(arg, arg)) for arg in argv]
        if argv and Path(argv[0]).is_file() and "python" in Path(argv[0]).read_text()[:80]:
            # A script with a python3 shebang runs on this interpreter (no /usr/bin/python3 needed).
            argv = [sys.executable, *argv]
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            out, _ = await asyncio.wait_for(process.communicate(), GUEST_SECONDS)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            out, _ = await process.communicate()
        output.append(out.decode(errors="replace"))
        guest.returncode = process.returncode
        if process.returncode:
            break
    guest.output = "".join(output)
    (guest.root / "console.log").write_text(guest.output)
    for moved in written.values():
        # The guest's disk goes with the VM: nothing it was given (the join token) stays.
        moved.unlink(missing_ok=True)
    guest.finished = True
