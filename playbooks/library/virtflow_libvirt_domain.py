"""The documentation of virtflow_libvirt_domain, whose work is done by its action plugin
(../action_plugins/virtflow_libvirt_domain.py) inside ansible-playbook: as with Ansible's own
controller-side actions (debug, assert), this file is what `ansible-doc` reads."""

DOCUMENTATION = r"""
module: virtflow_libvirt_domain
short_description: Define a libvirt domain unless it exists, and start it
description:
  - Looks the domain up by name; defines it from O(xml) when absent; starts it when it is not
    running (resumes it when paused). Idempotent by name. Runs on the controller (libvirt's
    client reaches the host through O(uri)).
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
