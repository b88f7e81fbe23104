"""VM templates: what a site boots for a spare and how the VM joins the cluster.

The site names its templates in the settings (image, network, a cloud-init user-data template,
the labels and taints its Nodes get); a request may choose one by name, never send user data.
The user data is rendered inside the create activity, with the join token only it sees, in a
sandboxed Jinja2 environment where a variable the template uses but virtflow does not supply
is an error (StrictUndefined) rather than an empty string in a boot script.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import jinja2.sandbox
from pydantic import BaseModel, ConfigDict, Field, model_validator
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure
from placement.models import Taint

DEFAULT_TEMPLATE = "default"
# The variables a user-data template may use (documented in docs/SITES.md, "The join").
TEMPLATE_VARIABLES = (
    "node_name",
    "labels",
    "taints",
    "api_server",
    "api_server_name",
    "ca_data",
    "join_token",
)


class VmTemplate(BaseModel):
    """One kind of VM a site offers."""

    model_config = ConfigDict(extra="forbid")

    image: str | None = None
    """Base image (provider-specific: a qcow2 path or name for libvirt, a template for Proxmox)."""
    network: str | None = None
    """Network or bridge; the provider's default when unset."""
    user_data: str | None = None
    """Cloud-init user data as a Jinja2 template (variables: TEMPLATE_VARIABLES)."""
    user_data_file: Path | None = None
    """Or the same, read from this file."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Node labels besides the spare's own (virtflow applies both once the Node is Ready)."""
    taints: list[Taint] = Field(default_factory=list)
    """Node taints virtflow applies once the Node is Ready."""
    api_server: str | None = None
    """The Kubernetes API as the VMs reach it; the kubeconfig's server when unset."""
    api_server_name: str | None = None
    """Name to check in the API's certificate when `api_server` is an address it does not
    name; the kubeconfig server's host when unset."""
    token_ttl_seconds: int = Field(default=3600, ge=60, le=7 * 24 * 3600)
    """Lifetime of the bootstrap token (deleted as soon as the Node is Ready)."""

    @model_validator(mode="after")
    def _one_user_data(self) -> VmTemplate:
        if self.user_data is not None and self.user_data_file is not None:
            raise ValueError("set user_data or user_data_file, not both")
        return self

    def user_data_text(self) -> str | None:
        if self.user_data_file is not None:
            return self.user_data_file.read_text()
        return self.user_data


_ENV = jinja2.sandbox.SandboxedEnvironment(
    undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
)


def check_template(name: str, template: VmTemplate) -> None:
    """Parse the user data at start-up, so a typo fails the worker, not a spare."""
    text = template.user_data_text()
    if text is not None:
        try:
            _ENV.parse(text)
        except jinja2.TemplateSyntaxError as err:
            raise ValueError(f"vm_templates.{name}.user_data: line {err.lineno}: {err}") from err


def render_user_data(name: str, text: str, variables: dict[str, Any]) -> str:
    try:
        return _ENV.from_string(text).render(**variables)
    except jinja2.TemplateError as err:
        # Never the variables themselves: they hold the join token.
        raise ApplicationError(
            f"vm template '{name}': the user data does not render: {err.message}; "
            f"the variables are {', '.join(TEMPLATE_VARIABLES)}",
            type=Failure.VM_TEMPLATE_INVALID,
            non_retryable=True,
        ) from None


class SiteTemplates:
    """The site's templates and which one each pool uses unless a request names one."""

    def __init__(
        self, templates: dict[str, VmTemplate], pool_templates: dict[str, str] | None = None
    ) -> None:
        self.templates = dict(templates)
        self.pool_templates = dict(pool_templates or {})
        for name, template in self.templates.items():
            check_template(name, template)
        for pool, name in self.pool_templates.items():
            if name not in self.templates:
                raise ValueError(f"pool_templates.{pool}: no vm_templates entry '{name}'")

    def choose(self, name: str | None, pool: str | None) -> tuple[str, VmTemplate] | None:
        """The request's template, else its pool's, else `default`; None when the site has
        no templates at all (the provider's own defaults apply)."""
        if name is None:
            name = self.pool_templates.get(pool or "", DEFAULT_TEMPLATE)
            if name not in self.templates:
                return None
        template = self.templates.get(name)
        if template is None:
            offered = ", ".join(sorted(self.templates)) or "none"
            raise ApplicationError(
                f"vm template '{name}' is not one of the site's ({offered})",
                type=Failure.UNKNOWN_VM_TEMPLATE,
                non_retryable=True,
            )
        return name, template
