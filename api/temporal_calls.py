"""The API's calls to Temporal: how long they may take, and their errors in the domain's words.

Every router that asks Temporal something wraps the call in `temporal_errors`, so a caller
gets 404 for a spare that does not exist and 503 when no worker or no server answers, never a
500 (the status codes are mapped in `problems.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from temporalio.service import RPCError, RPCStatusCode

from .errors import SpareNotFound, TemporalUnavailable
from .temporal_client import is_no_worker, is_unavailable

# Queries and updates need a worker; without one the server would hold the call until its own
# deadline. A worker answers a query in milliseconds: one silent this long is as good as gone
# (a query is safe to ask again). A release not accepted in time may still be taken up later,
# so its bound is longer: a 503 there must mean the worker is gone, not merely busy.
QUERY_TIMEOUT = timedelta(seconds=5)


UPDATE_ACCEPT_TIMEOUT = timedelta(seconds=10)


@contextmanager
def temporal_errors(spare_id: str) -> Iterator[None]:
    """Translate the SDK's transport errors into the domain's."""
    try:
        yield
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise SpareNotFound(spare_id) from err
        if is_no_worker(err):
            raise TemporalUnavailable(
                f"no virtflow worker answered for {spare_id} ({err.message}): is one running?"
            ) from err
        if is_unavailable(err):
            raise TemporalUnavailable(str(err)) from err
        raise
