"""Action plugin: one call of the Proxmox VE API, made where ansible-playbook runs.

`ansible.builtin.uri` is a module: every call starts a new Python process that unpacks and
compiles Ansible's module code (0.4-0.6 CPU-s on an idle machine, seconds of wall time under
load). A create made ten such calls, and a task wait polls once a second, so a 60 s clone
cost a minute of CPU. The calls go to the API from the machine that runs the playbook in
any case (hosts: localhost), so this makes them in the task's own worker process, with the
same HTTP code as `uri` (`ansible.module_utils.urls.open_url`: TLS checks, `ca_path`,
proxies). Options and results: ../library/virtflow_pve_api.py.
"""

from __future__ import annotations

import contextlib
import json
from http.client import HTTPException
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode

from ansible.module_utils.urls import ConnectionError as UrlsConnectionError
from ansible.module_utils.urls import open_url
from ansible.plugins.action import ActionBase

ARGUMENTS: dict[str, Any] = {
    "url": {"type": "str", "required": True},
    "method": {"type": "str", "default": "GET"},
    "headers": {"type": "dict", "default": {}},
    "body": {"type": "dict"},
    "validate_certs": {"type": "bool", "default": True},
    "ca_path": {"type": "path"},
    "timeout": {"type": "int", "default": 30},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: Any = None) -> dict[str, Any]:
        _, args = self.validate_argument_spec(argument_spec=ARGUMENTS)
        result: dict[str, Any] = super().run(tmp, task_vars)
        body = args["body"]
        try:
            answer = open_url(
                args["url"],
                data=urlencode(body) if body else None,
                headers={
                    **args["headers"],
                    **({"Content-Type": "application/x-www-form-urlencoded"} if body else {}),
                },
                method=args["method"].upper(),
                validate_certs=args["validate_certs"],
                ca_path=args["ca_path"],
                timeout=args["timeout"],
                http_agent="virtflow",
            )
            status, content = answer.status, answer.read()
            message = f"OK ({len(content)} bytes)"
        except HTTPError as refusal:  # an answer: 4xx or 5xx, PVE's reason in its status line
            status, content, message = refusal.code, refusal.read(), str(refusal)
        except (URLError, HTTPException, OSError, UrlsConnectionError) as err:
            # No answer (refused, timed out, TLS): status -1, as `uri` reports it.
            return {**result, "failed": True, "status": -1, "msg": f"Request failed: {err}"}
        result.update(status=status, msg=message, changed=False)
        with contextlib.suppress(ValueError):  # an answer that is not JSON has no `json`
            result["json"] = json.loads(content)
        return result
