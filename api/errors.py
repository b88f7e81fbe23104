"""The domain errors of the API and the command line.

Raised by the spare operations, explain and the inventory view; each edge maps them once:
`api/app.py` to HTTP status codes, `cli/main.py` to exit codes.
"""

from __future__ import annotations


class SpareNotFound(Exception):
    """No PrepareSpare workflow has this id (404, exit 2)."""


class SpareConflict(Exception):
    """The request contradicts what the spare already is: different body, already closed (409)."""


class InvalidInput(Exception):
    """A request field the configuration or the input rules reject (422 naming the field)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class TemporalUnavailable(Exception):
    """Temporal cannot be reached; 503 (HTTP) or exit 1 (CLI)."""


class InventoryUnavailable(Exception):
    """The inventory source did not answer; 503, try again later."""
