"""Action plugin: run one command on the task's host with its input on stdin, no Python there.

`ansible.builtin.command` is a module: on every run a new Python process on the host unpacks
and compiles Ansible's module code before it starts the command (0.3 s on an idle machine,
1-2 s under load), which was most of what the libvirt create's disk-and-seed step cost.
`raw` starts none, but takes no input on stdin, and the libvirt seed's input (the user data)
holds the join token: never on a command line. This runs the command through the task's
connection as `raw` does (a shell on the host, over SSH or locally) and feeds it `stdin` as
pipelining feeds a module. Options and results: ../library/virtflow_host_command.py.
"""

from __future__ import annotations

import shlex
from typing import Any

from ansible.plugins.action import ActionBase

ARGUMENTS: dict[str, Any] = {
    "argv": {"type": "list", "elements": "str", "required": True},
    "stdin": {"type": "str", "default": ""},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp: Any = None, task_vars: Any = None) -> dict[str, Any]:
        _, args = self.validate_argument_spec(argument_spec=ARGUMENTS)
        result: dict[str, Any] = super().run(tmp, task_vars)
        if self._task.check_mode:
            return {**result, "skipped": True}
        if self._connection.has_option("use_tty"):
            # ssh: a terminal would merge the command's stderr into its stdout.
            self._connection.set_option("use_tty", False)
        command, stdin = shlex.join(args["argv"]), args["stdin"].encode()
        # Without input the command reads none: an end of input, never a wait for one.
        ran = self._low_level_execute_command(
            command if stdin else f"{command} </dev/null", in_data=stdin or None
        )
        result.update(rc=ran["rc"], stdout=ran["stdout"], stderr=ran["stderr"], changed=True)
        if ran["rc"] != 0:
            result.update(failed=True, msg=f"the command exited {ran['rc']}")
        return result
