"""VM id allocation after the host is chosen, as the Proxmox qemu-scheduler does it.

With `vmid_range` "a-b": the smallest free id in [a, b]. With `vmid_regex`: the smallest free id
at or above `next_vmid` whose decimal string matches (unanchored search); with both, the
smallest free id of the range that matches. The open-ended regex search gives up after
`REGEX_SEARCH_LIMIT` candidates so a pattern that matches nothing cannot hang a request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .models import MAX_VMID, VmRequest

# Proxmox ids start at 100 when the hypervisor did not tell its next free id.
DEFAULT_NEXT_VMID = 100
REGEX_SEARCH_LIMIT = 1_000_000


def wants_vmid(request: VmRequest) -> bool:
    return request.vmid_range is not None or request.vmid_regex is not None


def allocate_vmid(request: VmRequest, used: Iterable[int], next_vmid: int | None) -> int | None:
    """The id for this request, or None when none is free."""
    taken = set(used)
    bounds = request.vmid_bounds
    if bounds is not None:
        low, high = bounds
    else:
        low = DEFAULT_NEXT_VMID if next_vmid is None else next_vmid
        high = min(MAX_VMID, low + REGEX_SEARCH_LIMIT - 1)
    search = re.compile(request.vmid_regex).search if request.vmid_regex else None
    if search is None:
        # Only the used ids inside the range can be skipped: at most len(taken) + 1 steps.
        candidate = low
        while candidate <= high and candidate in taken:
            candidate += 1
        return candidate if candidate <= high else None
    for candidate in range(low, high + 1):
        if candidate not in taken and search(str(candidate)):
            return candidate
        if candidate - low >= REGEX_SEARCH_LIMIT:
            return None
    return None


def describe_shortage(request: VmRequest, next_vmid: int | None) -> str:
    if request.vmid_range is not None:
        where = f"in {request.vmid_range}"
    else:
        start = DEFAULT_NEXT_VMID if next_vmid is None else next_vmid
        where = f"from {start}"
    pattern = f" matching {request.vmid_regex!r}" if request.vmid_regex else ""
    return f"no free VM id {where}{pattern}"
