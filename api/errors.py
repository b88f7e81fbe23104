"""The domain errors of the API and the command line, each with a stable machine-readable code.

Raised by the spare operations, explain and the inventory view; each edge maps them once:
`api/problems.py` to RFC 9457 problem details (status, `code`), `cli/common.py` to exit codes.
A caller branches on `code`, never on the English text.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum


class Code(StrEnum):
    """Stable error codes: once published, a code keeps its meaning."""

    # 400-level: the request itself
    BAD_REQUEST = "bad_request"
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"
    CLUSTER_FORBIDDEN = "cluster_forbidden"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    BODY_TOO_LARGE = "body_too_large"
    REQUEST_TIMEOUT = "request_timeout"
    INVALID_REQUEST = "invalid_request"
    UNKNOWN_CLUSTER = "unknown_cluster"
    NOT_ALLOWED_FOR_CLUSTER = "not_allowed_for_cluster"
    UNKNOWN_INVENTORY = "unknown_inventory"
    UNKNOWN_RECEIVER = "unknown_receiver"
    UNKNOWN_TEMPLATE = "unknown_template"
    UNKNOWN_POOL = "unknown_pool"
    NO_MATCHING_HOST = "no_matching_host"
    NEAR_UNKNOWN = "near_unknown"
    INVALID_PAGE_TOKEN = "invalid_page_token"
    WINDOW_STARTED = "window_started"
    WINDOW_TOO_FAR = "window_too_far"
    WINDOW_END_PASSED = "window_end_passed"
    RANGE_TOO_LONG = "range_too_long"
    # 404 and 409: the spare or task as it stands
    SPARE_NOT_FOUND = "spare_not_found"
    WARM_POOL_NOT_FOUND = "warm_pool_not_found"
    TASK_NOT_FOUND = "task_not_found"
    REQUEST_CONFLICT = "request_conflict"
    SPARE_NOT_READY = "spare_not_ready"
    ALREADY_RELEASED = "already_released"
    SPARE_ENDED = "spare_ended"
    TASK_ENDED = "task_ended"
    NO_CAPACITY = "no_capacity"
    NOT_A_BOOKING = "not_a_booking"
    CLUSTER_BUDGET_EXCEEDED = "cluster_budget_exceeded"
    # 5xx: somebody else's outage
    TEMPORAL_ERROR = "temporal_error"
    TEMPORAL_UNAVAILABLE = "temporal_unavailable"
    INVENTORY_UNAVAILABLE = "inventory_unavailable"


class ApiError(Exception):
    """A domain error with its stable code; the message is for people."""

    code: Code = Code.BAD_REQUEST

    def __init__(self, message: str, code: Code | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class SpareNotFound(ApiError):
    """No PrepareSpare workflow has this id (404, exit 2)."""

    code = Code.SPARE_NOT_FOUND


class WarmPoolNotFound(ApiError):
    """No warm pool of this name is configured (404, exit 2)."""

    code = Code.WARM_POOL_NOT_FOUND


class SpareConflict(ApiError):
    """The request contradicts what the spare already is (409): its `code` says how."""

    code = Code.REQUEST_CONFLICT


class NoCapacity(ApiError):
    """Not all spares of a request could be placed; nothing was reserved (409)."""

    code = Code.NO_CAPACITY

    def __init__(
        self,
        message: str,
        requested: int,
        placeable: int,
        held_by: list[str] | None = None,
        free_until: datetime | None = None,
        free_again_at: datetime | None = None,
    ) -> None:
        super().__init__(message)
        self.requested = requested
        self.placeable = placeable
        # A booking's window: the reservations (bookings among them) holding the room then.
        self.held_by = held_by
        # A longer window refused: the latest end its room allows now, and when the room is
        # free again after what is in the way.
        self.free_until = free_until
        self.free_again_at = free_again_at


class OverBudget(ApiError):
    """The cluster's spares in use plus this request's would pass its `max_spares` (409)."""

    code = Code.CLUSTER_BUDGET_EXCEEDED

    def __init__(self, message: str, budget: int, in_use: int) -> None:
        super().__init__(message)
        self.budget = budget
        self.in_use = in_use


class InvalidInput(ApiError):
    """A request field the configuration or the input rules reject (422 naming the field)."""

    code = Code.INVALID_REQUEST

    def __init__(
        self,
        field: str,
        reason: str,
        code: Code | None = None,
        path: tuple[str, ...] = (),
        source: str = "body",
    ) -> None:
        super().__init__(f"{field}: {reason}", code)
        self.field = field
        self.reason = reason
        # The field's path in the body when it is nested (`field` is then its dotted name).
        self.path = path or (field,)
        # Where the field is: `body`, `query` or `path`.
        self.source = source


class TemporalUnavailable(ApiError):
    """Temporal cannot be reached; 503 (HTTP) or exit 1 (CLI)."""

    code = Code.TEMPORAL_UNAVAILABLE


class InventoryUnavailable(ApiError):
    """The inventory source did not answer; 503, try again later."""

    code = Code.INVENTORY_UNAVAILABLE
