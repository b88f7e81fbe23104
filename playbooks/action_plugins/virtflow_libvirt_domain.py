"""Action plugin: make sure a libvirt domain exists and runs, in one libvirt connection.

The libvirt provider's create (hypervisors/libvirt/create.yml) needs three things of libvirt:
is the domain there, define it if not, start it. community.libvirt.virt does each in a module
run of its own: a new Python process that unpacks and compiles Ansible's module code, then
connects (over SSH, a round trip more); that was most of a create's time before the guest
started. This plugin does the three with one connection, inside ansible-playbook (libvirt's
client reaches the host through the URI, so nothing needs to run on the host). An existing
domain is never defined again: it is started if it is not running and its XML is returned,
so a retried create reports the domain it made.

A failure says whether libvirt could not be reached (`transient`: the connection failed or
dropped, which may heal) or refused what it was asked (a bad XML, a domain that cannot
start), which will not. Options and results: ../library/virtflow_libvirt_domain.py.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ansible.plugins.action import ActionBase

try:
    import libvirt
except ImportError:
    libvirt = None
try:
    # Not used here: community.libvirt.virt needs it for the provider's destroy and describe.
    # A worker without it fails its first create, not the release of a VM it made.
    import lxml
except ImportError:
    lxml = None

ARGUMENTS: dict[str, Any] = {
    "uri": {"type": "str", "required": True},
    "name": {"type": "str", "required": True},
    "xml": {"type": "str", "required": True},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: Any = None) -> dict[str, Any]:
        _, args = self.validate_argument_spec(argument_spec=ARGUMENTS)
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
            return {**result, **ensure_running(conn, args["name"], args["xml"])}
        except libvirt.libvirtError as err:
            return {**result, "failed": True, "transient": unreachable(err), "msg": str(err)}
        finally:
            # A connection that dropped: the outcome is decided already.
            with contextlib.suppress(libvirt.libvirtError):
                conn.close()


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
