"""The Starlette app behind the lab Kubernetes API: routes, Status errors, list and watch.

Wire formats follow the real kube-apiserver closely enough for lightkube and kubectl-like
clients: NodeList/PodList with metadata.resourceVersion, newline-delimited watch events,
Status bodies with Content-Type exactly `application/json`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from lab.kube_patch import PATCH_TYPES, PatchError, apply_patch
from lab.kube_select import SelectorError, field_selector, label_selector
from lab.kube_store import KINDS, Event, KubeError, KubeStore, Obj

JSON = "application/json"
_REASONS = {500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout", 429: "TooManyRequests"}


class ApiState(Protocol):
    """What the routes need from the server object (kept abstract to avoid a cycle)."""

    store: KubeStore
    token: str

    def take_failure(self) -> int | None: ...

    def eviction_blocked(self, pod: Obj) -> bool: ...


class _WatchDropped(Exception):
    """Raised inside a watch stream so the server cuts the connection without a clean end."""


def _json(body: Any, status: int = 200) -> Response:
    return Response(json.dumps(body), status_code=status, media_type=JSON)


def status_body(code: int, reason: str, message: str, **extra: Any) -> Obj:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
        **extra,
    }


def _error(exc: KubeError) -> Response:
    return _json(status_body(exc.code, exc.reason, exc.message), exc.code)


Handler = Callable[[Request, ApiState], Awaitable[Response]]


def _endpoint(state: ApiState, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Authentication, injected failures and KubeError -> Status, once for every route."""

    async def endpoint(request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {state.token}":
            return _json(status_body(401, "Unauthorized", "Unauthorized"), 401)
        if (code := state.take_failure()) is not None:
            reason = _REASONS.get(code, "InternalError")
            return _json(status_body(code, reason, "injected failure (lab chaos)"), code)
        try:
            return await handler(request, state)
        except KubeError as exc:
            return _error(exc)
        except (SelectorError, PatchError) as exc:
            code, reason = (
                (400, "BadRequest") if isinstance(exc, SelectorError) else (422, "Invalid")
            )
            return _json(status_body(code, reason, str(exc)), code)

    return endpoint


async def _body(request: Request) -> Any:
    try:
        return json.loads(await request.body() or b"null")
    except ValueError as exc:
        raise KubeError(400, "BadRequest", f"invalid JSON body: {exc}") from exc


def _target(request: Request) -> tuple[str, str, str | None]:
    """(resource, namespace, name) from the path; nodes live in namespace ""."""
    resource = "pods" if "pods" in request.url.path.split("/") else "nodes"
    namespace = request.path_params.get("ns", "")
    return resource, namespace, request.path_params.get("name")


def _predicate(request: Request) -> Callable[[Obj], bool]:
    labels = label_selector(request.query_params.get("labelSelector"))
    fields = field_selector(request.query_params.get("fieldSelector"))
    return lambda obj: labels(obj) and fields(obj)


async def collection(request: Request, state: ApiState) -> Response:
    resource, namespace, _ = _target(request)
    scope = namespace if "ns" in request.path_params else None
    if request.method == "POST":
        body = await _body(request)
        if not isinstance(body, dict):
            raise KubeError(400, "BadRequest", "the body must be a JSON object")
        return _json(state.store.create(resource, namespace, body), 201)
    matches = _predicate(request)
    if request.query_params.get("watch", "").lower() in ("true", "1"):
        return _watch(request, state.store, resource, scope, matches)
    items = state.store.list(resource, scope, where=matches)
    return _json(
        {
            "kind": f"{KINDS[resource]}List",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": str(state.store.resource_version)},
            "items": items,
        }
    )


async def item(request: Request, state: ApiState) -> Response:
    resource, namespace, name = _target(request)
    assert name is not None
    store = state.store
    if request.method == "DELETE":
        return _json(store.delete(resource, namespace, name))
    current = store.get(resource, namespace, name)
    if current is None:
        raise KubeError(404, "NotFound", f'{resource} "{name}" not found')
    if request.method == "GET":
        return _json(current)
    body = await _body(request)
    if request.method == "PUT":
        if not isinstance(body, dict):
            raise KubeError(400, "BadRequest", "the body must be a JSON object")
        return _json(store.replace(resource, namespace, name, body))
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() not in PATCH_TYPES:
        raise KubeError(
            415, "UnsupportedMediaType", f"the media type {content_type!r} is unsupported"
        )
    patched = apply_patch(content_type, current, body)
    patched.setdefault("metadata", {})["resourceVersion"] = current["metadata"]["resourceVersion"]
    return _json(store.replace(resource, namespace, name, patched))


async def eviction(request: Request, state: ApiState) -> Response:
    _, namespace, name = _target(request)
    assert name is not None
    pod = state.store.get("pods", namespace, name)
    if pod is None:
        raise KubeError(404, "NotFound", f'pods "{name}" not found')
    if state.eviction_blocked(pod):
        cause = {"reason": "DisruptionBudget", "message": "The disruption budget lab-pdb is full"}
        body = status_body(
            429,
            "TooManyRequests",
            "Cannot evict pod as it would violate the pod's disruption budget.",
            details={"causes": [cause]},
        )
        return _json(body, 429)
    state.store.delete("pods", namespace, name)
    return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}, 201)


def _watch(
    request: Request,
    store: KubeStore,
    resource: str,
    namespace: str | None,
    matches: Callable[[Obj], bool],
) -> Response:
    """Subscribe and snapshot in one step (no await between), so no event is lost or doubled."""
    raw_rv = request.query_params.get("resourceVersion") or "0"
    timeout = request.query_params.get("timeoutSeconds")
    deadline = asyncio.get_running_loop().time() + float(timeout) if timeout else None
    try:
        since = int(raw_rv)
    except ValueError as exc:
        raise KubeError(400, "BadRequest", f"invalid resourceVersion {raw_rv!r}") from exc
    sub = store.subscribe(resource)
    if since == 0:
        rv = store.resource_version
        backlog: list[Event] | None = [
            Event(rv, "ADDED", resource, o) for o in store.list(resource, namespace, matches)
        ]
    else:
        backlog = store.events_since(resource, since)

    def visible(event: Event) -> bool:
        ns = event.obj.get("metadata", {}).get("namespace", "")
        return (namespace is None or ns == namespace) and matches(event.obj)

    def line(event_type: str, obj: Obj) -> bytes:
        return json.dumps({"type": event_type, "object": obj}).encode() + b"\n"

    async def stream() -> AsyncIterator[bytes]:
        try:
            if backlog is None:
                message = f"too old resource version: {since} ({store.resource_version})"
                yield line("ERROR", status_body(410, "Expired", message))
                return
            for past in backlog:
                if visible(past):
                    yield line(past.type, past.obj)
            while True:
                remaining = (
                    None if deadline is None else deadline - asyncio.get_running_loop().time()
                )
                if remaining is not None and remaining <= 0:
                    return
                try:
                    event = await asyncio.wait_for(sub.queue.get(), remaining)
                except TimeoutError:
                    return
                if event is None:
                    if sub.abrupt:
                        raise _WatchDropped("watch dropped by the lab")
                    return
                if visible(event):
                    yield line(event.type, event.obj)
        finally:
            store.unsubscribe(sub)

    return StreamingResponse(stream(), media_type=JSON)


async def version(request: Request, state: ApiState) -> Response:
    return _json({"major": "1", "minor": "31", "gitVersion": "v1.31.0-virtflow-lab"})


async def api_versions(request: Request, state: ApiState) -> Response:
    return _json({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})


async def api_groups(request: Request, state: ApiState) -> Response:
    policy_v1 = {"groupVersion": "policy/v1", "version": "v1"}
    policy = {"name": "policy", "versions": [policy_v1], "preferredVersion": policy_v1}
    return _json({"kind": "APIGroupList", "apiVersion": "v1", "groups": [policy]})


async def core_resources(request: Request, state: ApiState) -> Response:
    verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
    resources = [
        {"name": "nodes", "namespaced": False, "kind": "Node", "verbs": verbs},
        {"name": "nodes/status", "namespaced": False, "kind": "Node", "verbs": verbs[2:]},
        {"name": "pods", "namespaced": True, "kind": "Pod", "verbs": verbs},
        {"name": "pods/status", "namespaced": True, "kind": "Pod", "verbs": verbs[2:]},
        {
            "name": "pods/eviction",
            "namespaced": True,
            "group": "policy",
            "version": "v1",
            "kind": "Eviction",
            "verbs": ["create"],
        },
    ]
    return _json({"kind": "APIResourceList", "groupVersion": "v1", "resources": resources})


def build_app(state: ApiState) -> Starlette:
    """Status subresources share the object handlers: the lab does not split spec from status."""
    rw = ["GET", "PUT", "PATCH", "DELETE"]
    sub = ["GET", "PUT", "PATCH"]
    ns_pods = "/api/v1/namespaces/{ns}/pods"
    table: list[tuple[str, Handler, list[str]]] = [
        ("/version", version, ["GET"]),
        ("/api", api_versions, ["GET"]),
        ("/apis", api_groups, ["GET"]),
        ("/api/v1", core_resources, ["GET"]),
        ("/api/v1/nodes", collection, ["GET", "POST"]),
        ("/api/v1/nodes/{name}", item, rw),
        ("/api/v1/nodes/{name}/status", item, sub),
        ("/api/v1/pods", collection, ["GET"]),
        (ns_pods, collection, ["GET", "POST"]),
        (ns_pods + "/{name}", item, rw),
        (ns_pods + "/{name}/status", item, sub),
        (ns_pods + "/{name}/eviction", eviction, ["POST"]),
    ]
    routes = [Route(path, _endpoint(state, h), methods=methods) for path, h, methods in table]

    async def unknown(request: Request, exc: Exception) -> Response:
        code = exc.status_code if isinstance(exc, HTTPException) else 500
        reason = {404: "NotFound", 405: "MethodNotAllowed"}.get(code, "InternalError")
        return _json(status_body(code, reason, f"{request.method} {request.url.path}"), code)

    return Starlette(routes=routes, exception_handlers={404: unknown, 405: unknown})
