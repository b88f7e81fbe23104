"""What libvirtd was asked before a create was cancelled ends before the VM is destroyed.

Killing ansible-playbook stops the client, not the call libvirtd is carrying out: a define (a
first define with a new qemu probes the binary, seconds) or a start goes on. Two guards, each
shown against the session's libvirtd with the real playbooks:
- a cancelled create ends only after its libvirt call: the domain it defined is there for the
  compensation's destroy to find (the call is slowed by an emulator wrapper that sleeps while
  libvirtd probes it);
- a destroy that comes while libvirtd is still starting the domain (an attempt orphaned by a
  lost worker) leaves nothing once the start is over: undefined mid-start, a domain comes back
  (the start is slowed by the same wrapper sleeping before it runs qemu).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import ActivityEnvironment

from activities.provisioning import ProvisioningActivities
from contracts.vm import CreateVmInput, DestroyVmInput, VmSpec
from provisioners.ansible import AnsibleProvisioner
from tests.helpers import assert_eventually
from tests.libvirt.conftest import URI

pytestmark = pytest.mark.libvirt

REPO = Path(__file__).resolve().parents[2]
NAME = "spare-lab-mid-start"
# How long a slowed call lasts. A start's sleep outlives the wrapper (killed by the destroy)
# and keeps the start from ending meanwhile, as a start on a loaded host does.
SLOW_SECONDS = 8


def slow_emulator(directory: Path, slow: str) -> Path:
    """qemu behind a wrapper that, when its arguments match `slow` (a shell pattern), says so
    in `directory/slowed` and sleeps before running qemu."""
    qemu = shutil.which("qemu-system-x86_64")
    if qemu is None:
        pytest.skip("qemu-system-x86_64 is not installed (`make libvirt`)")
    wrapper = directory / "slow-qemu"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case "$*" in {slow})\n'
        f"  touch {directory}/slowed\n"
        f"  sleep {SLOW_SECONDS};;\n"
        "esac\n"
        f'exec {qemu} "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def domain_xml(emulator: Path) -> str:
    return f"""<domain type='qemu'>
  <name>{NAME}</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type></os>
  <devices><emulator>{emulator}</emulator></devices>
</domain>"""


def provisioning(tmp_path: Path, extravars: dict[str, str]) -> ProvisioningActivities:
    return ProvisioningActivities(
        AnsibleProvisioner(
            playbook_dir=REPO / "playbooks",
            hypervisor="libvirt",
            extravars={
                "libvirt_uri_template": URI,
                "libvirt_domain_type": "qemu",
                "libvirt_interface_type": "none",
                "libvirt_ip_wait_seconds": "0",
                "libvirt_manage_disks": "false",
                "libvirt_hosts": "localhost",
                **extravars,
            },
            artifacts_root=tmp_path / "runs",
        )
    )


def names(libvirt: Any) -> list[str]:
    conn = libvirt.open(URI)
    try:
        return [d.name() for d in conn.listAllDomains()]
    finally:
        conn.close()


def remove(libvirt: Any) -> None:
    """Whatever the test left, so a failure does not leak into the next test."""
    conn = libvirt.open(URI)
    try:
        domain = conn.lookupByName(NAME)
        with contextlib.suppress(libvirt.libvirtError):
            domain.destroy()
        with contextlib.suppress(libvirt.libvirtError):
            domain.undefine()
    except libvirt.libvirtError:
        pass
    finally:
        conn.close()


@pytest.fixture
def libvirt(
    monkeypatch: pytest.MonkeyPatch, libvirt_uri: str, libvirt_collections: Path
) -> Iterator[Any]:
    """libvirt-python against the session's libvirtd, the collections the playbooks need, and
    no domain NAME before the test (an interrupted run may have left it) nor after."""
    import libvirt as module

    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(libvirt_collections))
    remove(module)
    yield module
    remove(module)


async def test_a_domain_destroyed_while_libvirt_starts_it_is_gone_after_the_start(
    tmp_path: Path, libvirt: Any
) -> None:
    emulator = slow_emulator(tmp_path, f"*guest={NAME},*")
    activities = provisioning(tmp_path, {})

    def start() -> None:
        # The create's libvirt call, as a create cut short leaves it: libvirtd goes on.
        conn = libvirt.open(URI)
        try:
            conn.defineXML(domain_xml(emulator)).create()
        except libvirt.libvirtError:
            pass  # the destroy ended the start
        finally:
            conn.close()

    starting = asyncio.get_running_loop().run_in_executor(None, start)

    async def start_begun() -> None:
        assert (tmp_path / "slowed").exists(), "libvirtd has not run the emulator yet"

    await assert_eventually(start_begun, timeout=120, interval=0.05)
    assert NAME in names(libvirt)
    await ActivityEnvironment().run(
        activities.destroy_vm, DestroyVmInput(name=NAME, host="localhost")
    )
    await starting
    # The start is over: whatever it did, the domain must not be there.
    assert NAME not in names(libvirt)


async def test_a_create_cancelled_during_its_libvirt_call_ends_after_the_call(
    tmp_path: Path, libvirt: Any
) -> None:
    # A binary libvirtd has not seen: the define probes it, and the probe is slowed.
    emulator = slow_emulator(tmp_path, "*-machine\\ none*")
    activities = provisioning(tmp_path, {"libvirt_emulator": str(emulator)})
    spec = VmSpec(name=NAME, host="localhost", cpu=1, memory_mb=64)
    env = ActivityEnvironment()
    creating = asyncio.ensure_future(env.run(activities.create_vm, CreateVmInput(spec=spec)))

    async def define_under_way() -> None:
        assert (tmp_path / "slowed").exists(), "libvirtd is not probing the emulator yet"

    await assert_eventually(define_under_way, timeout=120, interval=0.05)
    assert NAME not in names(libvirt)
    env.cancel()
    with pytest.raises(asyncio.CancelledError):
        await creating
    # Ended only once libvirtd had answered: what it defined is there to destroy.
    assert NAME in names(libvirt)
