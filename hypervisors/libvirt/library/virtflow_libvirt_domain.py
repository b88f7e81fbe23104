"""The documentation of virtflow_libvirt_domain, whose work is done by its action plugin
(../action_plugins/virtflow_libvirt_domain.py) inside ansible-playbook: as with Ansible's own
controller-side actions (debug, assert), this file is what `ansible-doc` reads."""

DOCUMENTATION = r"""
module: virtflow_libvirt_domain
short_description: Define a libvirt domain unless it exists and start it, or remove it
description:
  - "With O(state=running), looks the domain up by name; defines it from O(xml) when absent;
    starts it when it is not running (resumes it when paused). Idempotent by name."
  - "With O(state=absent), powers the domain off and undefines it, only once it is inactive (a
    domain undefined while libvirtd still starts it comes back when the start ends), and looks
    it up again until libvirt no longer knows it, for at most O(wait_seconds)."
  - "Runs on the controller (libvirt's client reaches the host through O(uri))."
options:
  uri:
    description: libvirt connection URI of the host.
    type: str
    required: true
  name:
    description: The domain's name (the one in O(xml)).
    type: str
    required: true
  state:
    description: Whether the domain should run, or be gone.
    type: str
    choices: [running, absent]
    default: running
  xml:
    description: The domain XML, used only when the domain does not exist yet. Required with
      O(state=running).
    type: str
  wait_seconds:
    description: With O(state=absent), how long a domain may take to go (a start in progress
      ends first); still there after it, the task fails with RV(transient).
    type: float
    default: 120
requirements: [libvirt-python, lxml]
"""

RETURN = r"""
existed:
  description: Whether the domain was there before (then it was not defined again; with
    O(state=absent), whether a domain was removed).
  type: bool
xml:
  description: An existing domain's XML (empty when the domain was defined here from O(xml)).
  type: str
transient:
  description: On failure, whether libvirt could not be reached (trying again may help).
  type: bool
"""
