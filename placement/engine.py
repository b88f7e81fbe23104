"""The placement engine: filters in order, scores, the name_asc tie-break, then the VM id.

`place(inp)` is the one-shot form. A caller that decides many requests against one inventory
builds a `HostTable` once and an `Engine` per policy, then calls `Engine.decide` per request.
Built-in plugins evaluate the whole table with numpy; plugins without a table form run host by
host on the hosts still in the running. `vectorised=False` runs every plugin host by host:
the reference semantics, and the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

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
        self._keyword_count = sum(len(p.reasons) for p in self.pipeline.filters)
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
        # A host's reason is the smallest code among the filters it fails. Each failing host
        # holds minus that code in an unsigned array (`_FirstFailure`), so a mask is added with
        # one element-wise maximum: no masked writes, which cost 8 to 30 us each per decision
        # inside the real loop at 5,000 hosts.
        first = _FirstFailure(len(table), self._keyword_count)
        keywords: list[str] = []
        for plugin, by_table in zip(self.pipeline.filters, self._table_filters, strict=True):
            offset = len(keywords)
            keywords.extend(plugin.reasons)
            if by_table:
                found = plugin.filter_table(ctx, table)  # type: ignore[attr-defined]
                if found is not None:
                    first.add(found, offset)
                continue
            for i in np.flatnonzero(first.passed()).tolist():
                keyword = plugin.filter_host(ctx, table.hosts[i])
                if keyword is not None:
                    if keyword not in plugin.reasons:
                        raise ValueError(f"{plugin.name} reported undeclared reason {keyword!r}")
                    first.set(i, offset + 1 + plugin.reasons.index(keyword))
        return first.codes(), tuple(keywords)

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


class _FirstFailure:
    """Per host, the smallest reason code among the filters it fails (0: it fails none).

    Codes run from 1 to the engine's number of keywords, in filter order. A failing host holds
    minus its code modulo 2**bits, in the smallest unsigned type that holds every code: the
    smallest code is then the largest value, so a mask adds its code with `maximum`, and
    negating the array again gives the codes, 0 staying 0. In uint8 a mask costs two
    element-wise passes over 5 KB at 5,000 hosts."""

    def __init__(self, hosts: int, keyword_count: int) -> None:
        self._type = np.min_scalar_type(keyword_count).type  # uint8 up to 255 keywords
        self._negated = np.zeros(hosts, dtype=self._type)
        self._scratch = np.empty_like(self._negated)

    def _minus(self, code: int) -> np.unsignedinteger[Any]:
        return self._type(-code % (1 << (8 * self._negated.itemsize)))

    def add(self, found: IntArray | BoolArray | FilterMasks, offset: int) -> None:
        """A table filter's result (see `TableFilter`); its codes start after `offset`."""
        if isinstance(found, tuple):
            for code, mask in enumerate(found, offset + 1):
                if mask is not None:
                    self._add_mask(mask, code)
        elif found.dtype == np.bool_:
            self._add_mask(cast(BoolArray, found), offset + 1)
        else:
            codes = np.where(found > 0, found + offset, 0)
            np.negative(codes, out=codes)  # cast to the unsigned type below: modulo 2**bits
            np.maximum(self._negated, codes.astype(self._type), out=self._negated)

    def _add_mask(self, mask: BoolArray, code: int) -> None:
        # A mask read as 0/1 bytes times -code is -code where it holds, 0 elsewhere.
        np.multiply(mask.view(np.uint8), self._minus(code), out=self._scratch)
        np.maximum(self._negated, self._scratch, out=self._negated)

    def set(self, host: int, code: int) -> None:
        """A host that failed a host-by-host filter (it failed none before)."""
        self._negated[host] = self._minus(code)

    def passed(self) -> BoolArray:
        """The hosts that fail no filter so far."""
        return self._negated == 0

    def codes(self) -> IntArray:
        return (-self._negated).astype(np.int64)


def place(inp: PlacementInput, registry: PluginRegistry | None = None) -> Decision:
    """Decide one request: the same input always gives the same decision."""
    engine = Engine(inp.policy, registry)
    return engine.decide(
        HostTable.build(inp.hosts), inp.request, inp.existing_vms, inp.used_vmids, inp.next_vmid
    )
