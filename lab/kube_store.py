"""In-memory object store behind the lab Kubernetes API: one resourceVersion counter, a
bounded event history for watches that resume from a version, and live subscriptions.

All methods are called from the event loop the API server runs in (no locks needed).
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import secrets
import string
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from lab.kube_resources import BY_PLURAL

Obj = dict[str, Any]
# Set by the server, kept across PUT and PATCH whatever the body says.
_SERVER_META = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


class KubeError(Exception):
    """An API failure with its HTTP code and Kubernetes reason (rendered as a Status)."""

    def __init__(
        self, code: int, reason: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details


def not_found(resource: str, name: str) -> KubeError:
    return KubeError(404, "NotFound", f'{resource} "{name}" not found')


@dataclass(frozen=True)
class Event:
    rv: int
    type: str
    resource: str
    obj: Obj


@dataclass(eq=False)
class Subscription:
    """One open watch; `None` in the queue means the server is dropping it."""

    resource: str
    queue: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)
    abrupt: bool = False


def now_timestamp() -> str:
    """RFC 3339 in whole seconds, as the API server writes metadata timestamps."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class KubeStore:
    def __init__(self, history_limit: int = 5000) -> None:
        self._objects: dict[str, dict[tuple[str, str], Obj]] = {r: {} for r in BY_PLURAL}
        self._rv = 100
        self._history: deque[Event] = deque(maxlen=history_limit)
        self._subscriptions: set[Subscription] = set()

    @property
    def resource_version(self) -> int:
        return self._rv

    def _bucket(self, resource: str) -> dict[tuple[str, str], Obj]:
        return self._objects[resource]

    def list(
        self,
        resource: str,
        namespace: str | None = None,
        where: Callable[[Obj], bool] | None = None,
    ) -> builtins.list[Obj]:
        """Copies of the objects in the namespace that `where` accepts, by name.

        Only the matches are copied: a selector that picks one Node out of hundreds must not
        cost hundreds of copies (a real API server filters before it serialises, too).
        """
        return [
            copy.deepcopy(obj)
            for (ns, _), obj in sorted(self._bucket(resource).items())
            if (namespace is None or ns == namespace) and (where is None or where(obj))
        ]

    def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        obj = self._bucket(resource).get((namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    def _emit(self, event_type: str, resource: str, obj: Obj) -> None:
        event = Event(self._rv, event_type, resource, copy.deepcopy(obj))
        self._history.append(event)
        for sub in self._subscriptions:
            if sub.resource == resource:
                sub.queue.put_nowait(event)

    def _stamp(self, obj: Obj) -> None:
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)

    def create(self, resource: str, namespace: str, obj: Obj) -> Obj:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            suffix = "".join(
                secrets.choice(string.ascii_lowercase + string.digits) for _ in "12345"
            )
            meta["name"] = meta["generateName"] + suffix
        name = meta.get("name")
        if not name:
            raise KubeError(422, "Invalid", "metadata.name: Required value: name is required")
        if (namespace, name) in self._bucket(resource):
            raise KubeError(409, "AlreadyExists", f'{resource} "{name}" already exists')
        kind = BY_PLURAL[resource]
        obj["kind"] = kind.kind
        obj["apiVersion"] = kind.api_version
        if kind.namespaced:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_timestamp()
        meta["generation"] = 1
        self._stamp(obj)
        self._bucket(resource)[(namespace, name)] = obj
        self._emit("ADDED", resource, obj)
        return copy.deepcopy(obj)

    def replace(self, resource: str, namespace: str, name: str, obj: Obj) -> Obj:
        """PUT semantics: optimistic concurrency when the body names a resourceVersion."""
        current = self._bucket(resource).get((namespace, name))
        if current is None:
            raise not_found(resource, name)
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        wanted = meta.get("resourceVersion")
        if wanted and wanted != current["metadata"]["resourceVersion"]:
            raise KubeError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {resource} "{name}": the object has been '
                "modified; please apply your changes to the latest version and try again",
            )
        for key in _SERVER_META:
            if key in current["metadata"]:
                meta[key] = current["metadata"][key]
            else:
                meta.pop(key, None)
        generation = current["metadata"].get("generation", 1)
        changed = obj.get("spec") != current.get("spec")
        meta["generation"] = generation + 1 if changed else generation
        obj["kind"] = current["kind"]
        obj["apiVersion"] = current["apiVersion"]
        self._stamp(obj)
        self._bucket(resource)[(namespace, name)] = obj
        self._emit("MODIFIED", resource, obj)
        return copy.deepcopy(obj)

    def mark_deleting(self, resource: str, namespace: str, name: str, grace: int) -> Obj:
        """Graceful deletion's first step: the object stays, with a deletionTimestamp."""
        current = self._bucket(resource).get((namespace, name))
        if current is None:
            raise not_found(resource, name)
        meta = current["metadata"]
        if "deletionTimestamp" not in meta:
            deadline = datetime.now(UTC) + timedelta(seconds=grace)
            meta["deletionTimestamp"] = deadline.strftime("%Y-%m-%dT%H:%M:%SZ")
            meta["deletionGracePeriodSeconds"] = grace
            self._stamp(current)
            self._emit("MODIFIED", resource, current)
        return copy.deepcopy(current)

    def delete(self, resource: str, namespace: str, name: str) -> Obj:
        obj = self._bucket(resource).pop((namespace, name), None)
        if obj is None:
            raise not_found(resource, name)
        self._stamp(obj)
        self._emit("DELETED", resource, obj)
        return copy.deepcopy(obj)

    def events_since(self, resource: str, rv: int) -> builtins.list[Event] | None:
        """Events after `rv`, or None when `rv` is older than the kept history (410 Gone)."""
        if rv > self._rv:
            return []
        oldest = self._history[0].rv if self._history else self._rv + 1
        if rv < oldest - 1:
            return None
        newer: builtins.list[Event] = []
        for event in reversed(self._history):  # newest first: usually only a few are newer
            if event.rv <= rv:
                break
            if event.resource == resource:
                newer.append(event)
        return newer[::-1]

    def compact(self) -> None:
        """Forget the event history, so any watch resuming from an old version gets 410."""
        self._history.clear()

    def subscribe(self, resource: str) -> Subscription:
        sub = Subscription(resource)
        self._subscriptions.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subscriptions.discard(sub)

    @property
    def watch_count(self) -> int:
        """Watches open right now (chaos tests cut them and wait for the client to return)."""
        return len(self._subscriptions)

    def drop_subscriptions(self, abrupt: bool) -> int:
        subs = list(self._subscriptions)
        for sub in subs:
            sub.abrupt = abrupt
            sub.queue.put_nowait(None)
        return len(subs)
