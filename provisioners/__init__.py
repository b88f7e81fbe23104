"""How a VM is made: the `Provisioner` contract and its three implementations.

The provisioning activities (`activities/provisioning.py`) own the Temporal side (heartbeats,
cancellation, retry decisions) and call one provisioner, chosen by the `provisioner` setting:

- `ansible.py`: runs `playbooks/` with ansible-runner for one hypervisor (`hypervisors/<name>/`);
  `ansible_failures.py` reads why a run failed, `stopping.py` stops a run safely,
  `task_clock.py` logs where a run's time went.
- `gitlab_pipeline.py`: runs a GitLab project's VM pipeline (the same playbooks in a job).
- `http_api.py`: calls a hypervisor's own HTTP API (the lab hypervisor's contract).
"""
