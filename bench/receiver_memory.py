"""The reference receiver's memory when somebody POSTs a huge body with a bad signature.

Runs `python -m webhooks.serve` as its own process, reads its resident memory before, at the
peak (the kernel's high-water mark, VmHWM) and after one oversize POST, once with a
Content-Length and once chunked, and prints the figures. The sender stops as soon as the
answer comes, so a receiver that refuses while streaming is sent little of the body.

    .venv/bin/python bench/receiver_memory.py [--mib 512] [--source DIR]

`--source` runs the receiver from another checkout (to compare with an older version).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from webhooks.signing import generate_secret

CHUNK = 1024 * 1024
ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _memory_mib(pid: int) -> dict[str, float]:
    """VmRSS (now) and VmHWM (peak since start) of a process, in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields


async def _post(port: int, total: int, chunked: bool) -> tuple[str, int]:
    """POST `total` bytes with a bad signature; (status line, MiB sent before the answer)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}"
    writer.write(
        f"POST /webhooks HTTP/1.1\r\nHost: receiver\r\n{framing}\r\nwebhook-id: msg_big\r\n"
        f"webhook-timestamp: {int(time.time())}\r\nwebhook-signature: v1,AAAA\r\n\r\n".encode()
    )
    sent = 0
    chunk = b"x" * CHUNK

    async def send() -> None:
        nonlocal sent
        while sent < total:
            writer.write(f"{CHUNK:x}\r\n".encode() + chunk + b"\r\n" if chunked else chunk)
            await writer.drain()
            await asyncio.sleep(0)  # drain() does not yield while the peer keeps up
            sent += CHUNK
        if chunked:
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    sender = asyncio.create_task(send())
    status = (await reader.readline()).decode().strip()
    sent_before_answer = sent
    sender.cancel()
    await asyncio.gather(sender, return_exceptions=True)
    writer.close()
    return status, sent_before_answer // CHUNK


def _start(source: Path, port: int, db: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "WEBHOOK_SECRETS": generate_secret(), "PYTHONPATH": str(source)}
    process = subprocess.Popen(
        [sys.executable, "-m", "webhooks.serve", "--db", str(db), "--port", str(port)],
        cwd=source,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/events", timeout=1)
            return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the receiver did not start within 30 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=512, help="size of the POSTed body")
    parser.add_argument("--source", type=Path, default=ROOT, help="checkout to run from")
    args = parser.parse_args()
    print(f"receiver from {args.source.resolve()}, {args.mib} MiB POST, bad signature")
    print(f"{'framing':<16}{'answer':<28}{'sent MiB':>9}{'RSS before':>12}{'peak':>8}{'after':>8}")
    for chunked in (False, True):
        port = _free_port()
        db = Path(f"/tmp/receiver-memory-{os.getpid()}-{port}.sqlite")
        process = _start(args.source, port, db)
        try:
            before = _memory_mib(process.pid)["VmRSS"]
            status, sent = asyncio.run(_post(port, args.mib * CHUNK, chunked))
            after = _memory_mib(process.pid)
        finally:
            process.kill()
            process.wait()
            for path in db.parent.glob(db.name + "*"):
                path.unlink()
        framing = "chunked" if chunked else "content-length"
        print(
            f"{framing:<16}{status:<28}{sent:>9}{before:>10.0f} M{after['VmHWM']:>6.0f} M"
            f"{after['VmRSS']:>6.0f} M"
        )


if __name__ == "__main__":
    main()
