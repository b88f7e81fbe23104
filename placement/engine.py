"""The placement engine: filters in order, scores, the name_asc tie-break, then the VM id.

`place(inp)` is the one-shot form. A caller that decides many requests against one inventory
builds a `HostTable` once and an `Engine` per policy, then calls `Engine.decide` per request.
Built-in plugins evaluate the whole table with numpy; plugins without a table form run host by
host on the hosts still in the running. `vectorised=False` runs every plugin host by host:
the reference semantics, and the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from .decision import BreakdownCache, Decision
from .framework import FilterMasks, PreFilter, RequestContext, TableFilter, TableScore
from .models import ExistingVm, PlacementInput, Policy, VmRequest
from .names import NO_HOST_FITS, NO_VMID_AVAILABLE
from .pipeline import Pipeline, build_pipeline
from .registry import PluginRegistry, default_registry
from .table import BoolArray, HostTable, IntArray
from .topology import chosen_topology
from .vmid import allocate_vmid, describe_shortage, wants_vmid


class Engine:
    def __init__(
        self,
        policy: Policy,
        registry: PluginRegistry | None = None,
        *,
        vectorised: bool = True,
    ) -> None:
        self.policy = policy
        self.pipeline: Pipeline = build_pipeline(policy, registry or default_registry())
        self.vectorised = vectorised
        # Protocol isinstance checks are slow: decide once which plugins have a table form.
        self._table_filters = [
            vectorised and isinstance(p, TableFilter) for p in self.pipeline.filters
        ]
        self._table_scores = [
            vectorised and isinstance(p, TableScore) for p, _ in self.pipeline.scores
        ]
        self._pre_filters = [p for p in self.pipeline.filters if isinstance(p, PreFilter)]
        # Score breakdowns are read-only dicts: decisions of this engine share equal ones.
        self._breakdowns: BreakdownCache = {}
        # The latest decision, kept until the next one. From about 20,000 hosts a decision's
        # arrays outgrow glibc's heap trim threshold: a caller that drops each decision at once
        # would leave the heap empty, glibc would hand its top back to the system, and the next
        # decision would fault some 1.5 MB of pages in again (about 380 page faults, 0.5 ms at
        # 20,000 hosts). Held here, the last decision's arrays keep the heap's top in use.
        self._latest: Decision | None = None

    def decide(
        self,
        table: HostTable,
        request: VmRequest,
        existing_vms: Sequence[ExistingVm] = (),
        used_vmids: Sequence[int] = (),
        next_vmid: int | None = None,
    ) -> Decision:
        ctx = RequestContext.build(request, self.policy, existing_vms, table)
        wanted = ctx.near_target()
        names = table.name_array, table.name_dict
        for plugin in self._pre_filters:
            failure = plugin.pre_filter(ctx)
            if failure is not None:
                # Nothing was judged: no host is rejected, the error says why.
                none = np.zeros(0, dtype=np.int64)
                return Decision(
                    None, None, failure.error, table.names, (), np.zeros(len(table), np.int64),
                    none, (), np.zeros((0, 0), np.int64), none, failure.detail,
                    topology=chosen_topology(request, None, wanted),
                    name_array=names[0], name_dict=names[1], interned=self._breakdowns,
                    names_to=table.names_to,
                )  # fmt: skip
        reasons, keywords = self._filter(ctx, table)
        candidates = np.flatnonzero(reasons == 0)
        plugins, matrix, totals = self._score(ctx, table, candidates)
        if len(candidates) == 0:
            return Decision(
                None, None, NO_HOST_FITS, table.names, keywords, reasons, candidates,
                plugins, matrix, totals, topology=chosen_topology(request, None, wanted),
                name_array=names[0], name_dict=names[1], interned=self._breakdowns,
                names_to=table.names_to,
            )  # fmt: skip
        chosen = int(candidates[int(np.argmax(totals))])
        host: str | None = table.names[chosen]
        vmid, error, detail = None, None, ""
        if wants_vmid(request):
            vmid = allocate_vmid(request, used_vmids, next_vmid)
            if vmid is None:
                host, error, detail = None, NO_VMID_AVAILABLE, describe_shortage(request, next_vmid)
        topology = chosen_topology(request, table.hosts[chosen] if host else None, wanted)
        decision = Decision(
            host, vmid, error, table.names, keywords, reasons, candidates,
            plugins, matrix, totals, detail, topology=topology,
            name_array=names[0], name_dict=names[1], interned=self._breakdowns,
            names_to=table.names_to,
        )  # fmt: skip
        self._latest = decision
        return decision

    def _filter(self, ctx: RequestContext, table: HostTable) -> tuple[IntArray, tuple[str, ...]]:
        reasons = np.zeros(len(table), dtype=np.int64)
        keywords: list[str] = []
        # Table results not written yet, with their code offsets: written last to first, so a
        # host keeps the first filter it fails, one numpy call per boolean mask.
        pending: list[tuple[IntArray | BoolArray | FilterMasks, int]] = []
        for plugin, by_table in zip(self.pipeline.filters, self._table_filters, strict=True):
            offset = len(keywords)
            keywords.extend(plugin.reasons)
            if by_table:
                found = plugin.filter_table(ctx, table)  # type: ignore[attr-defined]
                if found is not None:
                    pending.append((found, offset))
                continue
            _write_reasons(reasons, pending)
            pending.clear()
            for i in np.flatnonzero(reasons == 0).tolist():
                keyword = plugin.filter_host(ctx, table.hosts[i])
                if keyword is not None:
                    if keyword not in plugin.reasons:
                        raise ValueError(f"{plugin.name} reported undeclared reason {keyword!r}")
                    reasons[i] = offset + 1 + plugin.reasons.index(keyword)
        _write_reasons(reasons, pending)
        return reasons, tuple(keywords)

    def _score(
        self, ctx: RequestContext, table: HostTable, candidates: IntArray
    ) -> tuple[tuple[str, ...], IntArray, IntArray]:
        if len(candidates) == 0:
            return (), np.zeros((0, 0), dtype=np.int64), np.zeros(0, dtype=np.int64)
        names: list[str] = []
        columns: list[IntArray] = []
        weights: list[int] = []
        hosts = None
        for (plugin, weight), by_table in zip(
            self.pipeline.scores, self._table_scores, strict=True
        ):
            column: IntArray | list[int] | None
            if by_table:
                column = plugin.score_table(ctx, table, candidates)  # type: ignore[attr-defined]
            else:
                hosts = hosts or [table.hosts[i] for i in candidates.tolist()]
                column = plugin.score_hosts(ctx, hosts)
            if column is None:
                continue
            values = np.asarray(column, dtype=np.int64)
            if values.shape != candidates.shape:
                raise ValueError(f"{plugin.name} scored {values.shape} for {len(candidates)} hosts")
            names.append(plugin.name)
            columns.append(values)
            weights.append(weight)
        if not columns:
            return (), np.zeros((len(candidates), 0), np.int64), np.zeros(len(candidates), np.int64)
        # One row per plugin, seen as candidates x plugins: each plugin's column stays contiguous.
        # Filled row by row: np.stack's shape checks cost more than the copies at this size.
        rows = np.empty((len(columns), len(candidates)), dtype=np.int64)
        for row, values in zip(rows, columns, strict=True):
            row[:] = values
        matrix = rows.T
        totals = columns[0] * weights[0]
        for column, weight in zip(columns[1:], weights[1:], strict=True):
            totals += column if weight == 1 else column * weight
        return tuple(names), matrix, totals


def _write_reasons(
    reasons: IntArray, pending: list[tuple[IntArray | BoolArray | FilterMasks, int]]
) -> None:
    """Write the filters' results into `reasons`, the last filter first: a host keeps the code
    of the first filter it fails. A boolean mask fails with the filter's first reason."""
    for found, offset in reversed(pending):
        if isinstance(found, tuple):
            for code in range(len(found), 0, -1):
                mask = found[code - 1]
                if mask is not None:
                    _write_code(reasons, offset + code, mask)
        elif found.dtype == np.bool_:
            _write_code(reasons, offset + 1, cast(BoolArray, found))
        else:
            np.copyto(reasons, found + offset, where=found > 0)


def _write_code(reasons: IntArray, code: int, mask: BoolArray) -> None:
    """`reasons[mask] = code`. A masked copy tests the mask host by host, which a CPU predicts
    well when few hosts fail (most masks) and badly when many do, unordered (a spread over
    zones rejects half the hosts): about 3 us against 16 us at 5,000 hosts. `putmask` takes
    about 6 us whatever the mask, so it writes the dense masks; an empty mask writes nothing."""
    hits = np.count_nonzero(mask)
    if hits * 16 > len(mask):
        np.putmask(reasons, mask, code)
    elif hits:
        np.copyto(reasons, code, where=mask)


def place(inp: PlacementInput, registry: PluginRegistry | None = None) -> Decision:
    """Decide one request: the same input always gives the same decision."""
    engine = Engine(inp.policy, registry)
    return engine.decide(
        HostTable.build(inp.hosts), inp.request, inp.existing_vms, inp.used_vmids, inp.next_vmid
    )
