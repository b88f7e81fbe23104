"""The unversioned paths of the first API, kept one release as deprecated aliases of `/v1`.

Each alias runs the same endpoint as its `/v1` operation; the schema marks it deprecated and
names its successor. The original scheduler's `/schedule` and `/result/{task_id}` are not
aliases: they stay unversioned and permanent.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import APIRouter
from fastapi.routing import APIRoute

# (method, /v1 path) -> the path the first API used for it.
LEGACY_PATHS: dict[tuple[str, str], str] = {
    ("POST", "/v1/spares"): "/spare/prepare",
    ("GET", "/v1/spares"): "/spares",
    ("GET", "/v1/spares/{spare_id}"): "/spare/{spare_id}",
    ("POST", "/v1/spares/{spare_id}/release"): "/spare/{spare_id}/release",
    ("DELETE", "/v1/spares/{spare_id}"): "/spare/{spare_id}",
    ("POST", "/v1/placement/explain"): "/placement/explain",
}


def legacy_aliases(sources: Iterable[APIRouter]) -> APIRouter:
    """A router with one deprecated alias per `/v1` operation listed in LEGACY_PATHS."""
    router = APIRouter(tags=["deprecated"])
    for route in [r for source in sources for r in source.routes]:
        if not isinstance(route, APIRoute):
            continue
        for method in sorted(route.methods or ()):
            old = LEGACY_PATHS.get((method, route.path))
            if old is None:
                continue
            operation = route.operation_id or route.name
            router.add_api_route(
                old,
                route.endpoint,
                methods=[method],
                status_code=route.status_code,
                response_model=route.response_model,
                dependencies=list(route.dependencies),
                summary=route.summary,
                description=f"Deprecated alias of `{method} {route.path}` "
                f"(`{operation}`), for one release.",
                responses=dict(route.responses),
                deprecated=True,
                operation_id=f"legacy{operation[0].upper()}{operation[1:]}",
            )
    return router
