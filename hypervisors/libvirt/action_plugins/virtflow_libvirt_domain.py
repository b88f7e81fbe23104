"""Action plugin: make sure a libvirt domain runs, or is gone, in one libvirt connection.

The libvirt hypervisor's create (hypervisors/libvirt/create.yml) needs three things of libvirt:
is the domain there, define it if not, start it. community.libvirt.virt does each in a module
run of its own: a new Python process that unpacks and compiles Ansible's module code, then
connects (over SSH, a round trip more); that was most of a create's time before the guest
started. This plugin does the three with one connection, inside ansible-playbook (libvirt's
client reaches the host through the URI, so nothing needs to run on the host). An existing
domain is never defined again: it is started if it is not running and its XML is returned,
so a retried create reports the domain it made.

`state: absent` (the destroy) powers the domain off and undefines it, and returns only once
libvirt no longer knows the name. A create cancelled while libvirtd starts its domain leaves
that start running in libvirtd: a domain undefined then is defined again, or keeps running as
a transient domain, once the start ends (seen with qemu). So the domain is undefined only
while inactive, and looked up again until it is gone, within `wait_seconds`.

A cancelled create kills ansible-playbook, but not what libvirtd was asked already: a define
or a start in flight completes after its client is gone, possibly after the compensation's
destroy has looked. So the call runs as uninterruptible: it holds a lock on the file the
activity names in VIRTFLOW_UNINTERRUPTIBLE, which a cancel must take before it kills the run,
and a call that finds the run stopped makes none (provisioners/stopping.py, StopGate).

A failure says whether libvirt could not be reached (`transient`: the connection failed or
dropped, which may heal) or refused what it was asked (a bad XML, a domain that cannot
start), which will not. Options and results: ../library/virtflow_libvirt_domain.py.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from typing import Any

from ansible.plugins.action import ActionBase

try:
    import libvirt
except ImportError:
    libvirt = None
try:
    # Not used here: community.libvirt.virt needs it for the hypervisor's destroy and describe.
    # A worker without it fails its first create, not the release of a VM it made.
    import lxml
except ImportError:
    lxml = None

ARGUMENTS: dict[str, Any] = {
    "uri": {"type": "str", "required": True},
    "name": {"type": "str", "required": True},
    "state": {"type": "str", "choices": ["running", "absent"], "default": "running"},
    "xml": {"type": "str"},
    "wait_seconds": {"type": "float", "default": 120.0},
}
# How often a domain still there after its power-off and undefine is looked at again.
RECHECK_SECONDS = 0.2


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: Any = None) -> dict[str, Any]:
        _, args = self.validate_argument_spec(
            argument_spec=ARGUMENTS, required_if=[("state", "running", ["xml"])]
        )
        result: dict[str, Any] = super().run(tmp, task_vars)
        for missing, imported in (("libvirt", libvirt), ("lxml", lxml)):
            if imported is None:
                # Worded as community.libvirt words it: the worker says what to install.
                return {
                    **result,
                    "failed": True,
                    "msg": f"The `{missing}` module is not importable.",
                }
        try:
            conn = libvirt.open(args["uri"])
        except libvirt.libvirtError as err:
            return {**result, "failed": True, "transient": True, "msg": f"no connection: {err}"}
        try:
            if args["state"] == "absent":
                return {**result, **ensure_absent(conn, args["name"], args["wait_seconds"])}
            with uninterruptible():
                return {**result, **ensure_running(conn, args["name"], args["xml"])}
        except (StillThere, RunStopped) as err:
            return {**result, "failed": True, "transient": True, "msg": str(err)}
        except libvirt.libvirtError as err:
            return {**result, "failed": True, "transient": unreachable(err), "msg": str(err)}
        finally:
            # A connection that dropped: the outcome is decided already.
            with contextlib.suppress(libvirt.libvirtError):
                conn.close()


class RunStopped(Exception):
    """The run was being stopped (a cancel) before this call began: make none."""


@contextlib.contextmanager
def uninterruptible() -> Iterator[None]:
    """Hold, for the time of the block, the lock a cancel must take before it kills the run
    (provisioners/stopping.py, StopGate). Ansible runs this task in a worker process of its
    own session, which survives the kill of ansible-playbook: so a cancel that came first is
    read here (the file says "stopped", or is gone with the run's directory) and the block
    does not run."""
    marker = os.environ.get("VIRTFLOW_UNINTERRUPTIBLE")
    if not marker:
        yield
        return
    try:
        fd = os.open(marker, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:  # the run's directory is gone: the run is over
        raise RunStopped("the run was stopped before the libvirt call") from None
    with os.fdopen(fd, "r+") as gate:
        fcntl.flock(gate, fcntl.LOCK_EX)  # waits while a cancel is stopping the run
        gate.seek(0)
        if gate.read() == "stopped":
            raise RunStopped("the run was stopped before the libvirt call")
        yield


def unreachable(err: libvirt.libvirtError) -> bool:
    """The connection failed or dropped (remote/RPC layer), as opposed to a refusal."""
    return err.get_error_domain() in (libvirt.VIR_FROM_RPC, libvirt.VIR_FROM_REMOTE) or (
        err.get_error_code() in (libvirt.VIR_ERR_NO_CONNECT, libvirt.VIR_ERR_RPC)
    )


def lookup(conn: libvirt.virConnect, name: str) -> libvirt.virDomain | None:
    try:
        return conn.lookupByName(name)
    except libvirt.libvirtError as err:
        if err.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
            return None
        raise


def ensure_running(conn: libvirt.virConnect, name: str, xml: str) -> dict[str, Any]:
    domain = lookup(conn, name)
    existed = domain is not None
    if domain is None:
        try:
            domain = conn.defineXML(xml)
        except libvirt.libvirtError:
            # Defined meanwhile by another run of the same create: that one is ours too.
            domain = lookup(conn, name)
            if domain is None:
                raise
            existed = True
    state = domain.state()[0]
    if state == libvirt.VIR_DOMAIN_PAUSED:
        domain.resume()
    elif state != libvirt.VIR_DOMAIN_RUNNING:
        domain.create()
    return {
        "changed": not existed or state != libvirt.VIR_DOMAIN_RUNNING,
        "existed": existed,
        "xml": domain.XMLDesc(0) if existed else "",
    }


class StillThere(Exception):
    """The domain outlived its destroy's wait (a start that does not end): try again later."""


def ensure_absent(conn: libvirt.virConnect, name: str, wait_seconds: float) -> dict[str, Any]:
    """Power off and undefine `name`; return once libvirt no longer lists it."""
    deadline = time.monotonic() + wait_seconds
    existed = False
    while (domain := lookup(conn, name)) is not None:
        existed = True
        try:
            if domain.isActive():
                domain.destroy()
            # Undefined while active, a domain becomes transient: a start still running in
            # libvirtd would then end with it running, or defined again.
            if not domain.isActive() and domain.isPersistent():
                domain.undefine()
        except libvirt.libvirtError as err:
            # Gone meanwhile, or mid-start or mid-stop (not running yet, not stopped yet):
            # the next look decides.
            if err.get_error_code() not in (
                libvirt.VIR_ERR_NO_DOMAIN,
                libvirt.VIR_ERR_OPERATION_INVALID,
            ):
                raise
        if lookup(conn, name) is None:
            break
        if time.monotonic() > deadline:
            raise StillThere(f"domain {name} is still there {wait_seconds:.0f} s after its destroy")
        time.sleep(RECHECK_SECONDS)
    return {"changed": existed, "existed": existed}
