"""A provisioner that calls a hypervisor's HTTP API directly, without an Ansible run.

For sites that front their hypervisor with a small REST service, and for the lab: the
contract is the lab hypervisor's (`POST /vms` idempotent by name, 201 created or 200 existing;
`GET /vms/{name}`, 404 when absent; `DELETE /vms/{name}`). A 4xx other than 408/429 is final,
anything else (5xx, connection refused, timeouts) may heal and is left to the engine's retry.
One HTTP client per worker, not one per call.
"""

from __future__ import annotations

from contracts.vm import DestroyVmInput, VmFacts, VmSpec
from runtime.http_client import HttpClient, HttpUnreachable, Reply

from .contract import Progress, ProvisioningFailed
from .stopping import finish_first

HTTP_TIMEOUT_SECONDS = 60.0
_RETRYABLE_4XX = {408, 429}


def _failure(what: str, response: Reply) -> ProvisioningFailed:
    try:
        body = response.json()
        message = str(body.get("message") or body) if isinstance(body, dict) else str(body)
    except ValueError:
        message = " ".join(response.text.split())[:200]
    status = response.status
    transient = status >= 500 or status in _RETRYABLE_4XX
    return ProvisioningFailed(f"{what}: HTTP {status}: {message}", transient=transient)


class HttpProvisioner:
    """Creates, destroys and describes VMs over the hypervisor HTTP contract above."""

    def __init__(
        self,
        base_url: str,
        timeout: float = HTTP_TIMEOUT_SECONDS,
        http: HttpClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._http = http or HttpClient()

    async def _call(
        self, what: str, method: str, path: str, body: dict[str, object] | None = None
    ) -> Reply:
        try:
            return await self._http.request(
                method, self.base_url + path, json=body, timeout_seconds=self.timeout
            )
        except HttpUnreachable as err:
            # The cause's type only: its text can carry the URL's credentials.
            raise ProvisioningFailed(f"{what}: {err}", transient=True) from err

    async def create_vm(self, spec: VmSpec, progress: Progress | None = None) -> VmFacts:
        if progress is not None:
            progress("POST /vms")
        # Once sent, the hypervisor creates the VM whether or not anyone reads the answer.
        response = await finish_first(
            self._call(f"create {spec.name}", "POST", "/vms", spec.model_dump(mode="json"))
        )
        if response.status not in (200, 201):
            raise _failure(f"create {spec.name} on {spec.host}", response)
        return VmFacts.model_validate(response.json())

    async def destroy_vm(self, vm: DestroyVmInput, progress: Progress | None = None) -> None:
        # The service names a VM at once: the name finds it (no vmid needed).
        name = vm.name
        if progress is not None:
            progress(f"DELETE /vms/{name}")
        response = await self._call(f"destroy {name}", "DELETE", f"/vms/{name}")
        # 404: already gone, which is what a destroy wants.
        if response.status != 404 and not response.is_success:
            raise _failure(f"destroy {name}", response)

    async def describe_vm(self, name: str, progress: Progress | None = None) -> VmFacts | None:
        response = await self._call(f"describe {name}", "GET", f"/vms/{name}")
        if response.status == 404:
            return None
        if not response.is_success:
            raise _failure(f"describe {name}", response)
        return VmFacts.model_validate(response.json())
