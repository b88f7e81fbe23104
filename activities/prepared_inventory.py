"""An inventory read made ready for placement, kept while the inventory's content stays the
same: the document validated into the engine's input, its host table, its emptied table and
the engine of its policy.

Validating thousands of hosts and building their tables costs a hundred times more than a
decision. An answer reads the inventory every time (a change is seen at once: the source's
version names its bytes, not a clock), and only a changed inventory is parsed and validated
again. A decision's snapshot differs from the kept input in the allocations of the hosts its
reservations sit on: the kept table with those rows rewritten is its table.
"""

from __future__ import annotations

from dataclasses import dataclass

from placement.engine import Engine
from placement.fit import empty_inventory_engine, empty_inventory_table
from placement.models import PlacementInput
from placement.table import HostTable


@dataclass(frozen=True, eq=False)
class PreparedInventory:
    # The source's version of what was read (None: the source cannot tell, nothing is kept).
    version: str | None
    # The inventory with no reservation counted, validated with the request first asked for
    # (a later request replaces it: the request was validated on its own).
    bare: PlacementInput
    table: HostTable
    # The emptied inventory's table and engine ("could it ever fit?").
    empty_table: HostTable
    empty_engine: Engine
    engine: Engine
    # Where each host sits in `bare.hosts`, and so in every input made from it.
    positions: dict[str, int]

    @classmethod
    def of(cls, bare: PlacementInput, version: str | None) -> PreparedInventory:
        return cls(
            version=version,
            bare=bare,
            table=HostTable.build(bare.hosts),
            empty_table=empty_inventory_table(bare.hosts),
            empty_engine=empty_inventory_engine(bare.policy),
            engine=Engine(bare.policy),
            positions={host.name: k for k, host in enumerate(bare.hosts)},
        )

    def table_of(self, snapshot: PlacementInput) -> HostTable:
        """The table of `snapshot`, made from `bare` by counting reservations (which copies the
        hosts it changes and keeps the others' very objects)."""
        if len(snapshot.hosts) != len(self.bare.hosts):
            return HostTable.build(snapshot.hosts)
        pairs = zip(snapshot.hosts, self.bare.hosts, strict=True)
        changed = [(host, kept) for host, kept in pairs if host is not kept]
        if not changed:
            return self.table
        if any(host.name != kept.name for host, kept in changed):
            return HostTable.build(snapshot.hosts)
        return self.table.with_allocations([host for host, _ in changed])
