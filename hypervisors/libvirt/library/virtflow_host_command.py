"""The documentation of virtflow_host_command, whose work is done by its action plugin
(../action_plugins/virtflow_host_command.py) through the task's connection: as with Ansible's
own `raw`, nothing of Python runs on the host; this file is what `ansible-doc` reads."""

DOCUMENTATION = r"""
module: virtflow_host_command
short_description: Run one command on the host, its input on stdin, without Python there
description:
  - Runs O(argv) (each element quoted for the host's shell) through the task's connection, as
    M(ansible.builtin.raw) does, and writes O(stdin) to its standard input, so a secret input
    never appears on a command line. Always reports a change.
options:
  argv:
    description: The command and its arguments.
    type: list
    elements: str
    required: true
  stdin:
    description: What the command reads on its standard input (nothing when empty).
    type: str
    default: ""
"""

RETURN = r"""
rc:
  description: The command's exit status.
  type: int
stdout:
  description: What it wrote to its standard output.
  type: str
stderr:
  description: What it wrote to its standard error.
  type: str
"""
