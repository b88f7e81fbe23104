"""The real hypervisor for the session: libvirtd and virtlogd, started here and stopped after.

`make test` installs libvirt, qemu, libvirt-python, lxml, openssh-server and the community
collections when it can (Debian, root) and builds the guest image; where any of that is
missing the tests that need it are skipped with the reason. A libvirtd that already answers is
used and left running. The session's sshd on loopback (tests/libvirt/sshd.py) is how the
real-VM spare reaches its host, as a site's worker reaches its libvirt hosts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lab.guest_image import GuestImage, cached
from tests.libvirt.collections import collections_path, installed
from tests.libvirt.sshd import LoopbackSshd, loopback_sshd
from tests.libvirt.sshd import why_not as sshd_why_not

URI = "qemu:///system"
SOCKET = Path("/run/libvirt/libvirt-sock")
# libvirtd takes about a second to answer; under a loaded machine, give it this long.
START_WITHIN_SECONDS = 60.0


def libvirt_module() -> Any:
    """libvirt-python, or a skip saying how to get it."""
    try:
        import libvirt
    except ImportError:
        libvirt = None
    # Without libvirt-python, `libvirt` can resolve to this test directory (a namespace package).
    if libvirt is None or not hasattr(libvirt, "open"):
        pytest.skip(
            "libvirt-python is not installed: `make libvirt` installs it (needs libvirt-dev)"
        )
    return libvirt


def _answers(libvirt: Any) -> bool:
    try:
        libvirt.open(URI).close()
    except libvirt.libvirtError:
        return False
    return True


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "libvirtd runs qemu domains only as root here; run the tests as root"
    for tool, package in (
        ("libvirtd", "libvirt-daemon-system"),
        ("qemu-system-x86_64", "qemu-system-x86"),
    ):
        if shutil.which(tool) is None:
            return f"{tool} is not installed: apt-get install {package} (`make libvirt`)"
    return None


@pytest.fixture(scope="session")
def libvirt_uri() -> Iterator[str]:
    """A libvirtd that answers at qemu:///system for the whole session."""
    libvirt = libvirt_module()
    if not _answers(libvirt) and (reason := _why_not()):
        pytest.skip(reason)
    started: list[subprocess.Popen[bytes]] = []
    if not _answers(libvirt):
        for daemon in ("virtlogd", "libvirtd"):
            started.append(
                subprocess.Popen([daemon], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        deadline = time.monotonic() + START_WITHIN_SECONDS
        while not _answers(libvirt):
            if any(p.poll() is not None for p in started) or time.monotonic() > deadline:
                for process in started:
                    process.terminate()
                pytest.fail("libvirtd did not start (run `libvirtd` by hand to see why)")
            time.sleep(0.2)  # polling the socket: libvirtd has no readiness notice without systemd
    try:
        yield URI
    finally:
        for process in reversed(started):
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture(scope="session")
def libvirt_collections() -> Path:
    path = collections_path()
    if not installed(path):
        pytest.skip(f"community.libvirt is not in {path}: run `make collections`")
    return path


@pytest.fixture(scope="session")
def guest_image() -> GuestImage:
    image = cached()
    if not image.exists():
        pytest.skip(f"no guest image at {image.directory}: `make guest-image` builds it (root)")
    if shutil.which("cloud-localds") is None:
        pytest.skip("cloud-localds is not installed: apt-get install cloud-image-utils")
    return image


@pytest.fixture(scope="session")
def loopback_ssh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackSshd]:
    """An sshd on 127.0.0.1 for the session; root logs in with the key made for it."""
    if reason := sshd_why_not():
        pytest.skip(reason)
    if os.geteuid() != 0:
        pytest.skip("the loopback sshd lets only root in (the libvirt host's user); run as root")
    with loopback_sshd(tmp_path_factory.mktemp("sshd")) as server:
        yield server
