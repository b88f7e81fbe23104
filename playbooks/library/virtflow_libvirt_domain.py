#!/usr/bin/python
"""Ansible module: make sure a libvirt domain exists and runs, in one connection.

The libvirt provider's create (hypervisors/libvirt/create.yml) needs three things of libvirt:
is the domain there, define it if not, start it. community.libvirt.virt does each in a module
run of its own (a Python process, a connection, over SSH a round trip each), which was most of
a create's time before the guest starts; this module does the three in one. An existing domain
is never defined again: it is started if it is not running and its XML is returned, so a
retried create reports the domain it made.

A failure says whether libvirt could not be reached (`transient`: the connection failed or
dropped, which may heal) or refused what it was asked (a bad XML, a domain that cannot
start), which will not.
"""

from __future__ import annotations

import contextlib

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: virtflow_libvirt_domain
short_description: Define a libvirt domain unless it exists, and start it
description:
  - Looks the domain up by name; defines it from O(xml) when absent; starts it when it is not
    running (resumes it when paused). Idempotent by name.
options:
  uri:
    description: libvirt connection URI of the host.
    type: str
    required: true
  name:
    description: The domain's name (the one in O(xml)).
    type: str
    required: true
  xml:
    description: The domain XML, used only when the domain does not exist yet.
    type: str
    required: true
requirements: [libvirt-python, lxml]
"""

RETURN = r"""
existed:
  description: Whether the domain was there before (then it was not defined again).
  type: bool
xml:
  description: An existing domain's XML (empty when the domain was defined here from O(xml)).
  type: str
transient:
  description: On failure, whether libvirt could not be reached (trying again may help).
  type: bool
"""

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


def ensure_running(conn: libvirt.virConnect, name: str, xml: str) -> dict[str, object]:
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


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "uri": {"type": "str", "required": True},
            "name": {"type": "str", "required": True},
            "xml": {"type": "str", "required": True},
        }
    )
    # Worded as community.libvirt words it, so the worker's hint (pip install ...) applies.
    for missing, imported in (("libvirt", libvirt), ("lxml", lxml)):
        if imported is None:
            module.fail_json(msg=f"The `{missing}` module is not importable. Check requirements.")
    params = module.params
    try:
        conn = libvirt.open(params["uri"])
    except libvirt.libvirtError as err:
        module.fail_json(msg=f"no connection: {err}", transient=True)
    try:
        result = ensure_running(conn, params["name"], params["xml"])
    except libvirt.libvirtError as err:
        module.fail_json(msg=str(err), transient=unreachable(err))
    finally:
        # A connection that dropped: the outcome is decided already.
        with contextlib.suppress(libvirt.libvirtError):
            conn.close()
    module.exit_json(**result)


if __name__ == "__main__":
    main()
