"""The Starlette app behind the lab Kubernetes API: routes, Status errors, list and watch.

Wire formats follow the real kube-apiserver closely enough for lightkube and an unmodified
kubectl: discovery for every advertised group version, `<Kind>List` with
metadata.resourceVersion, the `Table` answer, newline-delimited watch events, graceful pod
deletion, evictions checked against PodDisruptionBudgets, Status bodies with Content-Type
exactly `application/json`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import platform
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from lab import kube_discovery
from lab.kube_access import REVIEW_PATHS, review
from lab.kube_auth import Authenticator
from lab.kube_budgets import check_eviction, with_status
from lab.kube_patch import PATCH_TYPES, PatchError, apply_patch
from lab.kube_pods import PodTerminator
from lab.kube_resources import GROUPS, ResourceType, resolve
from lab.kube_select import SelectorError, field_selector, label_selector
from lab.kube_store import Event, KubeError, KubeStore, Obj
from lab.kube_table import to_table, wants_table

JSON = "application/json"
_GOARCH = {"x86_64": "amd64", "aarch64": "arm64"}
_REASONS = {500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout", 429: "TooManyRequests"}
NOT_SERVED = "the server could not find the requested resource"


# What `/version` says: a real apiserver's fields, all of them (clients validate the model).
VERSION_INFO = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.0+virtflow-lab",
    "gitCommit": hashlib.sha1(b"virtflow lab Kubernetes API v1.31.0").hexdigest(),
    "gitTreeState": "clean",
    "buildDate": "2024-08-13T07:28:49Z",
    "goVersion": "go1.22.5",
    "compiler": "gc",
    "platform": f"linux/{_GOARCH.get(platform.machine(), platform.machine())}",
}


class ApiState(Protocol):
    """What the routes need from the server object (kept abstract to avoid a cycle)."""

    store: KubeStore
    auth: Authenticator
    pods: PodTerminator

    def take_failure(self) -> int | None: ...

    def record(self, method: str, path: str) -> None: ...


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
    extra = {"details": exc.details} if exc.details else {}
    return _json(status_body(exc.code, exc.reason, exc.message, **extra), exc.code)


Handler = Callable[[Request, ApiState], Awaitable[Response]]


def _endpoint(state: ApiState, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Authentication, injected failures and KubeError -> Status, once for every route."""

    async def endpoint(request: Request) -> Response:
        state.record(request.method, request.url.path)
        if not state.auth.authenticated(request.url.path, request.headers.get("authorization")):
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


def _target(request: Request) -> tuple[ResourceType, str | None, str | None]:
    """(type, namespace or None for every namespace / cluster scope, name) from the path."""
    params = request.path_params
    kind = resolve(params.get("group", ""), params.get("version", "v1"), params["resource"])
    namespace = params.get("ns")
    name = params.get("name")
    if (
        kind is None
        or (namespace is not None and not kind.namespaced)
        or (namespace is None and kind.namespaced and name is not None)
    ):
        raise KubeError(404, "NotFound", NOT_SERVED)
    return kind, namespace, name


def _predicate(request: Request) -> Callable[[Obj], bool]:
    labels = label_selector(request.query_params.get("labelSelector"))
    fields = field_selector(request.query_params.get("fieldSelector"))
    return lambda obj: labels(obj) and fields(obj)


def _presenter(state: ApiState, kind: ResourceType) -> Callable[[Obj], Obj]:
    """Budgets are shown with the status a disruption controller would have written."""
    if kind.plural == "poddisruptionbudgets":
        return lambda obj: with_status(state.store, obj)
    return lambda obj: obj


def _grace(request: Request, body: Any) -> int | None:
    """gracePeriodSeconds from the query or a DeleteOptions body (or an Eviction's)."""
    raw = request.query_params.get("gracePeriodSeconds")
    if raw is None and isinstance(body, dict):
        options = body.get("deleteOptions") if body.get("kind") == "Eviction" else body
        if isinstance(options, dict):
            raw = options.get("gracePeriodSeconds")
    try:
        return None if raw is None else int(raw)
    except ValueError as exc:
        raise KubeError(400, "BadRequest", f"invalid gracePeriodSeconds {raw!r}") from exc


def _ensure_namespace(store: KubeStore, namespace: str) -> None:
    """The lab creates a namespace on first use instead of answering 404."""
    if store.get("namespaces", "", namespace) is None:
        store.create("namespaces", "", namespace_object(namespace))


def namespace_object(name: str) -> Obj:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


async def collection(request: Request, state: ApiState) -> Response:
    kind, namespace, _ = _target(request)
    store = state.store
    if request.method == "POST":
        if kind.namespaced and namespace is None:
            raise KubeError(405, "MethodNotAllowed", f"POST {request.url.path}")
        body = await _body(request)
        if not isinstance(body, dict):
            raise KubeError(400, "BadRequest", "the body must be a JSON object")
        if namespace is not None:
            _ensure_namespace(store, namespace)
        return _json(store.create(kind.plural, namespace or "", body), 201)
    matches = _predicate(request)
    table = wants_table(request.headers.get("accept"))
    if request.query_params.get("watch", "").lower() in ("true", "1"):
        return _watch(request, state, kind, namespace, matches, table)
    present = _presenter(state, kind)
    items = [present(o) for o in store.list(kind.plural, namespace, where=matches)]
    version = str(store.resource_version)
    if table:
        include = request.query_params.get("includeObject", "Metadata")
        return _json(to_table(kind.plural, items, version, table, include))
    return _json(
        {
            "kind": f"{kind.kind}List",
            "apiVersion": kind.api_version,
            "metadata": {"resourceVersion": version},
            "items": items,
        }
    )


async def item(request: Request, state: ApiState) -> Response:
    kind, namespace, name = _target(request)
    assert name is not None
    store, ns = state.store, namespace or ""
    if request.method == "DELETE":
        if kind.plural == "pods":
            return _json(state.pods.delete(ns, name, _grace(request, await _body(request))))
        return _json(store.delete(kind.plural, ns, name))
    current = store.get(kind.plural, ns, name)
    if current is None:
        raise KubeError(404, "NotFound", f'{kind.plural} "{name}" not found')
    if request.method == "GET":
        shown = _presenter(state, kind)(current)
        if table := wants_table(request.headers.get("accept")):
            include = request.query_params.get("includeObject", "Metadata")
            return _json(
                to_table(kind.plural, [shown], str(store.resource_version), table, include)
            )
        return _json(shown)
    body = await _body(request)
    if request.method == "PUT":
        if not isinstance(body, dict):
            raise KubeError(400, "BadRequest", "the body must be a JSON object")
        return _json(store.replace(kind.plural, ns, name, body))
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() not in PATCH_TYPES:
        raise KubeError(
            415, "UnsupportedMediaType", f"the media type {content_type!r} is unsupported"
        )
    # Patched as it is now: reading the body let other requests in. kube-apiserver applies a
    # patch to the latest object (it retries on a conflict itself) unless the patch names a
    # resourceVersion, which is then a precondition.
    current = store.get(kind.plural, ns, name)
    if current is None:
        raise KubeError(404, "NotFound", f'{kind.plural} "{name}" not found')
    patched = apply_patch(content_type, current, body)
    if not _names_version(body):
        version = current["metadata"]["resourceVersion"]
        patched.setdefault("metadata", {})["resourceVersion"] = version
    return _json(store.replace(kind.plural, ns, name, patched))


def _names_version(patch: Any) -> bool:
    """Whether a merge patch sets metadata.resourceVersion (a JSON patch tests it instead)."""
    meta = patch.get("metadata") if isinstance(patch, dict) else None
    return isinstance(meta, dict) and meta.get("resourceVersion") is not None


async def eviction(request: Request, state: ApiState) -> Response:
    namespace, name = request.path_params["ns"], request.path_params["name"]
    pod = state.store.get("pods", namespace, name)
    if pod is None:
        raise KubeError(404, "NotFound", f'pods "{name}" not found')
    body = await _body(request)
    check_eviction(state.store, pod)
    state.pods.delete(namespace, name, _grace(request, body))
    return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}, 201)


def _watch(
    request: Request,
    state: ApiState,
    kind: ResourceType,
    namespace: str | None,
    matches: Callable[[Obj], bool],
    table: str | None,
) -> Response:
    """Subscribe and snapshot in one step (no await between), so no event is lost or doubled."""
    store, resource = state.store, kind.plural
    present = _presenter(state, kind)
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
    first = [True]

    def visible(event: Event) -> bool:
        ns = event.obj.get("metadata", {}).get("namespace", "")
        return (namespace is None or ns == namespace) and matches(event.obj)

    def line(event_type: str, obj: Obj) -> bytes:
        if event_type != "ERROR":
            obj = present(obj)
            if table:
                version = obj["metadata"].get("resourceVersion", "")
                obj = to_table(resource, [obj], version, table, headers=first[0])
                first[0] = False
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


async def health(request: Request, state: ApiState) -> Response:
    check = request.url.path.lstrip("/")
    if "verbose" in request.query_params:
        return PlainTextResponse(f"[+]ping ok\n[+]etcd ok\n{check} check passed\n")
    return PlainTextResponse("ok")


async def version(request: Request, state: ApiState) -> Response:
    return _json(VERSION_INFO)


async def self_review(request: Request, state: ApiState) -> Response:
    """SelfSubjectAccessReview / SelfSubjectRulesReview, answered from the caller's role."""
    identity = state.auth.identify(request.headers.get("authorization"))
    if identity is None:  # authenticated() let it through, so this cannot happen
        raise KubeError(401, "Unauthorized", "Unauthorized")
    kind = request.url.path.rsplit("/", 1)[-1]
    return _json(review(kind, await _body(request), identity), 201)


async def api_versions(request: Request, state: ApiState) -> Response:
    return _json(kube_discovery.api_versions())


async def api_groups(request: Request, state: ApiState) -> Response:
    return _json(kube_discovery.api_group_list())


async def api_group(request: Request, state: ApiState) -> Response:
    group = request.path_params["group"]
    if group not in GROUPS:
        raise KubeError(404, "NotFound", NOT_SERVED)
    return _json(kube_discovery.api_group(group))


async def group_resources(request: Request, state: ApiState) -> Response:
    params = request.path_params
    found = kube_discovery.resource_list(params.get("group", ""), params.get("version", "v1"))
    if found is None:
        raise KubeError(404, "NotFound", NOT_SERVED)
    return _json(found)


def build_app(state: ApiState) -> Starlette:
    """Status subresources share the object handlers: the lab does not split spec from status."""
    rw = ["GET", "PUT", "PATCH", "DELETE"]
    sub = ["GET", "PUT", "PATCH"]
    table: list[tuple[str, Handler, list[str]]] = [
        ("/healthz", health, ["GET"]),
        ("/livez", health, ["GET"]),
        ("/readyz", health, ["GET"]),
        ("/version", version, ["GET"]),
        ("/api", api_versions, ["GET"]),
        ("/api/v1", group_resources, ["GET"]),
        ("/apis", api_groups, ["GET"]),
        ("/apis/{group}", api_group, ["GET"]),
        ("/apis/{group}/{version}", group_resources, ["GET"]),
        ("/api/v1/namespaces/{ns}/pods/{name}/eviction", eviction, ["POST"]),
        *((path, self_review, ["POST"]) for path in REVIEW_PATHS),
    ]
    for prefix in ("/api/v1", "/apis/{group}/{version}"):
        table += [
            (f"{prefix}/namespaces/{{ns}}/{{resource}}", collection, ["GET", "POST"]),
            (f"{prefix}/namespaces/{{ns}}/{{resource}}/{{name}}", item, rw),
            (f"{prefix}/namespaces/{{ns}}/{{resource}}/{{name}}/status", item, sub),
            (f"{prefix}/{{resource}}", collection, ["GET", "POST"]),
            (f"{prefix}/{{resource}}/{{name}}", item, rw),
            (f"{prefix}/{{resource}}/{{name}}/status", item, sub),
        ]
    routes = [Route(path, _endpoint(state, h), methods=methods) for path, h, methods in table]

    async def unknown(request: Request, exc: Exception) -> Response:
        code = exc.status_code if isinstance(exc, HTTPException) else 500
        reason = {404: "NotFound", 405: "MethodNotAllowed"}.get(code, "InternalError")
        return _json(status_body(code, reason, f"{request.method} {request.url.path}"), code)

    return Starlette(routes=routes, exception_handlers={404: unknown, 405: unknown})
