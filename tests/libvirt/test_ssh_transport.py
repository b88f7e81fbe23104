"""The session's sshd is a host as a site would run it: root by key only, and libvirt behind it.

The real-VM spare (test_real_spare.py) goes through this server for everything; these checks
are cheap (a few connections) and say at once whether a failure there is the transport.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hypervisors.libvirt.inventory import LibvirtInventory
from tests.libvirt.sshd import HOST, LoopbackSshd

pytestmark = pytest.mark.libvirt


def ssh(config: Path, *options: str, user: str = "root") -> subprocess.CompletedProcess[str]:
    """`id -un` on the host as `user`, with an ssh_config and extra options."""
    return subprocess.run(
        ["ssh", "-F", str(config), *options, f"{user}@{HOST}", "id", "-un"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_root_logs_in_with_the_session_key_and_nothing_else_gets_in(
    loopback_ssh: LoopbackSshd, tmp_path: Path
) -> None:
    config = loopback_ssh.ssh_config
    assert ssh(config).stdout.strip() == "root"

    other_key = tmp_path / "other"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other_key)], check=True
    )
    other_config = tmp_path / "ssh_config"
    other_config.write_text(
        config.read_text().replace(str(loopback_ssh.directory / "client_ed25519"), str(other_key))
    )
    fresh = ("-o", "ControlPath=none")  # a new connection, not the session's master one
    refused = {
        "another key": ssh(other_config, *fresh),
        "a password": ssh(
            config, *fresh, "-o", "PreferredAuthentications=password,keyboard-interactive"
        ),
        "another user": ssh(config, *fresh, user="nobody"),
    }
    for way, answer in refused.items():
        assert answer.returncode == 255, f"{way}: {answer}"
        assert "Permission denied" in answer.stderr, f"{way}: {answer.stderr}"


async def test_the_libvirt_inventory_reads_the_host_over_ssh(
    loopback_ssh: LoopbackSshd, libvirt_uri: str, tmp_path: Path
) -> None:
    import libvirt

    site = tmp_path / "site.yaml"
    site.write_text(
        f"uri_template: '{loopback_ssh.libvirt_uri_template}'\nhosts: [{{name: '{HOST}'}}]\n"
    )
    before = len(loopback_ssh.calls())
    snapshot = await LibvirtInventory(site).load()

    (host,) = snapshot["hosts"]
    assert host["name"] == HOST
    local = libvirt.openReadOnly(libvirt_uri)
    try:
        assert host["cpu_capacity"] == local.getInfo()[2]
    finally:
        local.close()
    assert any("virt-ssh-helper" in call for call in loopback_ssh.calls()[before:])
