"""The documentation of virtflow_pve_api, whose work is done by its action plugin
(../action_plugins/virtflow_pve_api.py) where ansible-playbook runs, without a module
process; this file is what `ansible-doc` reads."""

DOCUMENTATION = r"""
module: virtflow_pve_api
short_description: One call of the Proxmox VE API, answered whatever its status
description:
  - Sends one request to O(url) and reports its status and its JSON answer. Every HTTP status
    is an answer for the caller to read; only a request that got no answer (refused, timed
    out, a failed TLS check) fails, with status -1.
options:
  url:
    description: The API URL, C(https://HOST:8006/api2/json/...).
    type: str
    required: true
  method:
    description: The HTTP method.
    type: str
    default: GET
  headers:
    description: Request headers (the API token's C(Authorization)).
    type: dict
    default: {}
  body:
    description: Parameters sent form-urlencoded, as the API takes them.
    type: dict
  validate_certs:
    description: Check the API's TLS certificate.
    type: bool
    default: true
  ca_path:
    description: A CA bundle to check the API's certificate against.
    type: path
  timeout:
    description: Seconds to wait for the answer.
    type: int
    default: 30
"""

RETURN = r"""
status:
  description: The HTTP status, -1 when there was no answer.
  type: int
json:
  description: The answer's JSON body, when it has one.
  type: dict
msg:
  description: C(OK (N bytes)), the status line of a refusal, or why there was no answer.
  type: str
"""
