"""The Kubernetes API calls the product's code makes, read from its source, as RBAC sees them.

Every call of a lightkube client method (`get`, `list`, `watch`, `patch`, `delete`, `create`,
...) whose resource is a lightkube resource class, an attribute of one (`Pod.Eviction`), an
instance built from one, or a local variable assigned such an instance, becomes an
`ApiCall(verb, group, resource, namespace)`; `namespace` is the literal (or module constant)
the call names, `None` for cluster-scoped resources or an unknown or every namespace. A
function of the same module annotated to return a resource counts as building one. A
`create`/`replace`/`apply` of something the scan cannot resolve comes out with resource `?`,
which no RBAC rule allows: make it resolvable (a local variable, an annotated builder).
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# lightkube client method -> the RBAC verbs the API server checks for it.
CLIENT_VERBS: dict[str, tuple[str, ...]] = {
    "get": ("get",),
    "list": ("list",),
    "watch": ("watch",),
    "patch": ("patch",),
    "delete": ("delete",),
    "deletecollection": ("deletecollection",),
    "create": ("create",),
    "replace": ("update",),
    # Server-side apply patches, and creates what does not exist yet.
    "apply": ("patch", "create"),
}
ALL_NAMESPACES = "*"
# Object-taking methods: their first argument is always a resource, so one the scan cannot
# resolve is reported (as `?`) rather than skipped.
WRITES = {"create", "replace", "apply"}
UNKNOWN = "?"


@dataclass(frozen=True, order=True)
class ApiCall:
    verb: str
    group: str
    resource: str  # plural, with `/subresource`
    namespace: str | None  # None: cluster-scoped, or any namespace
    where: str = ""

    def __str__(self) -> str:
        scope = f" in {self.namespace}" if self.namespace else ""
        group = self.group or "core"
        return f"{self.verb} {group}/{self.resource}{scope} ({self.where})"


def rbac_target(cls: Any) -> tuple[str, str, bool]:
    """(apiGroup, resource[/subresource], namespaced) of a lightkube resource class."""
    from lightkube.core import resource as res

    info = cls._api_info
    if info.parent is not None:
        group, resource = info.parent.group, f"{info.plural}/{info.action}"
    else:
        group, resource = info.resource.group, info.plural
    namespaced = issubclass(cls, res.NamespacedResource | res.NamespacedSubResource)
    return group, resource, namespaced


class _Module:
    def __init__(self, path: Path, tree: ast.Module) -> None:
        self.path = path
        self.resources: dict[str, Any] = {}
        self.constants: dict[str, str] = {}
        # Module functions that build a resource (`def token_secret(...) -> Secret`).
        self.builders: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
                self.builders[node.name] = node
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                ("lightkube.resources", "lightkube.generic_resource")
            ):
                module = importlib.import_module(node.module or "")
                for alias in node.names:
                    self.resources[alias.asname or alias.name] = getattr(module, alias.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    for target in targets:
                        if isinstance(target, ast.Name):
                            self.constants[target.id] = value.value

    def resource_of(self, expr: ast.expr) -> Any | None:
        """The resource class an expression names or builds, if it is one."""
        if isinstance(expr, ast.Call):
            if isinstance(expr.func, ast.Name) and expr.func.id in self.builders:
                returns = self.builders[expr.func.id].returns
                return self.resource_of(returns) if returns is not None else None
            return self.resource_of(expr.func)
        if isinstance(expr, ast.Name):
            return self.resources.get(expr.id)
        if isinstance(expr, ast.Attribute):
            owner = self.resource_of(expr.value)
            sub = getattr(owner, expr.attr, None) if owner is not None else None
            return sub if hasattr(sub, "_api_info") else None
        return None

    def string(self, expr: ast.expr | None) -> str | None:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return expr.value
        if isinstance(expr, ast.Name):
            return self.constants.get(expr.id)
        return None


def _assignments(function: ast.AST) -> dict[str, ast.expr]:
    """Local names bound once to an expression: `eviction = Pod.Eviction(...)`."""
    found: dict[str, ast.expr] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                found[target.id] = node.value
    return found


def _namespace_keyword(expr: ast.AST) -> ast.expr | None:
    for node in ast.walk(expr):
        if isinstance(node, ast.keyword) and node.arg == "namespace":
            return node.value
    return None


def calls_in_file(path: Path, root: Path) -> list[ApiCall]:
    tree = ast.parse(path.read_text(), filename=str(path))
    module = _Module(path, tree)
    if not module.resources:
        return []
    found: list[ApiCall] = []
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for function in functions:
        local = _assignments(function)
        for node in ast.walk(function):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in CLIENT_VERBS
                and node.args
            ):
                continue
            first = node.args[0]
            built = local.get(first.id, first) if isinstance(first, ast.Name) else first
            cls = module.resource_of(first) or module.resource_of(built)
            where = f"{path.relative_to(root)}:{node.lineno}"
            if cls is None:
                if node.func.attr in WRITES:
                    # A write whose resource the scan cannot tell: named, so it is looked at.
                    found.append(ApiCall(node.func.attr, UNKNOWN, UNKNOWN, None, where))
                continue
            group, resource, namespaced = rbac_target(cls)
            namespace: str | None = None
            if namespaced:
                given = next((k.value for k in node.keywords if k.arg == "namespace"), None)
                if given is None and node.func.attr in ("create", "replace", "apply"):
                    # ObjectMeta(namespace=...) of the object, or of the function building it
                    given = _namespace_keyword(built)
                    builder = built.func if isinstance(built, ast.Call) else None
                    if given is None and isinstance(builder, ast.Name):
                        maker = module.builders.get(builder.id)
                        given = _namespace_keyword(maker) if maker else None
                literal = module.string(given)
                namespace = None if literal in (None, ALL_NAMESPACES) else literal
            found += [
                ApiCall(verb, group, resource, namespace, where)
                for verb in CLIENT_VERBS[node.func.attr]
            ]
    return found


def product_calls(root: Path, packages: list[str]) -> list[ApiCall]:
    """Every Kubernetes call in these packages of the repository."""
    calls: list[ApiCall] = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            calls += calls_in_file(path, root)
    return calls
