from enum import StrEnum

class Code(StrEnum):
    ALREADY_RELEASED = "already_released"
    BAD_REQUEST = "bad_request"
    BODY_TOO_LARGE = "body_too_large"
    FORBIDDEN = "forbidden"
    INVALID_PAGE_TOKEN = "invalid_page_token"
    INVALID_REQUEST = "invalid_request"
    INVENTORY_UNAVAILABLE = "inventory_unavailable"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NEAR_UNKNOWN = "near_unknown"
    NOT_FOUND = "not_found"
    NO_CAPACITY = "no_capacity"
    NO_MATCHING_HOST = "no_matching_host"
    REQUEST_CONFLICT = "request_conflict"
    REQUEST_TIMEOUT = "request_timeout"
    SPARE_ENDED = "spare_ended"
    SPARE_NOT_FOUND = "spare_not_found"
    SPARE_NOT_READY = "spare_not_ready"
    TASK_ENDED = "task_ended"
    TASK_NOT_FOUND = "task_not_found"
    TEMPORAL_ERROR = "temporal_error"
    TEMPORAL_UNAVAILABLE = "temporal_unavailable"
    UNAUTHENTICATED = "unauthenticated"
    UNKNOWN_INVENTORY = "unknown_inventory"
    UNKNOWN_POOL = "unknown_pool"
    UNKNOWN_RECEIVER = "unknown_receiver"
    UNKNOWN_TEMPLATE = "unknown_template"
    WARM_POOL_NOT_FOUND = "warm_pool_not_found"

    def __str__(self) -> str:
        return str(self.value)
