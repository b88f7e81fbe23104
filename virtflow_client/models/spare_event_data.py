from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.booking_window import BookingWindow
  from ..models.drain_info import DrainInfo
  from ..models.host_move import HostMove
  from ..models.replacement import Replacement
  from ..models.topology_info import TopologyInfo
  from ..models.vm_facts import VmFacts





T = TypeVar("T", bound="SpareEventData")



@_attrs_define
class SpareEventData:
    """ What happened to which spare: the `data` object of every event.

        Attributes:
            spare_id (str):
            cluster (str):
            pool (None | str | Unset):
            host (None | str | Unset):
            vm (None | Unset | VmFacts):
            reason (None | str | Unset):
            topology (None | TopologyInfo | Unset): On spare.reserved, when the request named a topology.
            drain (DrainInfo | None | Unset):
            replacement (None | Replacement | Unset):
            window (BookingWindow | None | Unset): On spare.window_ending: the booking's window.
            move (HostMove | None | Unset): On booking.moved.
     """

    spare_id: str
    cluster: str
    pool: None | str | Unset = UNSET
    host: None | str | Unset = UNSET
    vm: None | Unset | VmFacts = UNSET
    reason: None | str | Unset = UNSET
    topology: None | TopologyInfo | Unset = UNSET
    drain: DrainInfo | None | Unset = UNSET
    replacement: None | Replacement | Unset = UNSET
    window: BookingWindow | None | Unset = UNSET
    move: HostMove | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.booking_window import BookingWindow # noqa: PLC0415
        from ..models.drain_info import DrainInfo # noqa: PLC0415
        from ..models.host_move import HostMove # noqa: PLC0415
        from ..models.replacement import Replacement # noqa: PLC0415
        from ..models.topology_info import TopologyInfo # noqa: PLC0415
        from ..models.vm_facts import VmFacts # noqa: PLC0415
        spare_id = self.spare_id

        cluster = self.cluster

        pool: None | str | Unset
        if isinstance(self.pool, Unset):
            pool = UNSET
        else:
            pool = self.pool

        host: None | str | Unset
        if isinstance(self.host, Unset):
            host = UNSET
        else:
            host = self.host

        vm: dict[str, Any] | None | Unset
        if isinstance(self.vm, Unset):
            vm = UNSET
        elif isinstance(self.vm, VmFacts):
            vm = self.vm.to_dict()
        else:
            vm = self.vm

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        topology: dict[str, Any] | None | Unset
        if isinstance(self.topology, Unset):
            topology = UNSET
        elif isinstance(self.topology, TopologyInfo):
            topology = self.topology.to_dict()
        else:
            topology = self.topology

        drain: dict[str, Any] | None | Unset
        if isinstance(self.drain, Unset):
            drain = UNSET
        elif isinstance(self.drain, DrainInfo):
            drain = self.drain.to_dict()
        else:
            drain = self.drain

        replacement: dict[str, Any] | None | Unset
        if isinstance(self.replacement, Unset):
            replacement = UNSET
        elif isinstance(self.replacement, Replacement):
            replacement = self.replacement.to_dict()
        else:
            replacement = self.replacement

        window: dict[str, Any] | None | Unset
        if isinstance(self.window, Unset):
            window = UNSET
        elif isinstance(self.window, BookingWindow):
            window = self.window.to_dict()
        else:
            window = self.window

        move: dict[str, Any] | None | Unset
        if isinstance(self.move, Unset):
            move = UNSET
        elif isinstance(self.move, HostMove):
            move = self.move.to_dict()
        else:
            move = self.move


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "spare_id": spare_id,
            "cluster": cluster,
        })
        if pool is not UNSET:
            field_dict["pool"] = pool
        if host is not UNSET:
            field_dict["host"] = host
        if vm is not UNSET:
            field_dict["vm"] = vm
        if reason is not UNSET:
            field_dict["reason"] = reason
        if topology is not UNSET:
            field_dict["topology"] = topology
        if drain is not UNSET:
            field_dict["drain"] = drain
        if replacement is not UNSET:
            field_dict["replacement"] = replacement
        if window is not UNSET:
            field_dict["window"] = window
        if move is not UNSET:
            field_dict["move"] = move

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.booking_window import BookingWindow # noqa: PLC0415
        from ..models.drain_info import DrainInfo # noqa: PLC0415
        from ..models.host_move import HostMove # noqa: PLC0415
        from ..models.replacement import Replacement # noqa: PLC0415
        from ..models.topology_info import TopologyInfo # noqa: PLC0415
        from ..models.vm_facts import VmFacts # noqa: PLC0415
        d = dict(src_dict)
        spare_id = d.pop("spare_id")

        cluster = d.pop("cluster")

        def _parse_pool(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        pool = _parse_pool(d.pop("pool", UNSET))


        def _parse_host(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        host = _parse_host(d.pop("host", UNSET))


        def _parse_vm(data: object) -> None | Unset | VmFacts:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                vm_type_0 = VmFacts.from_dict(data)



                return vm_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VmFacts, data)

        vm = _parse_vm(d.pop("vm", UNSET))


        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))


        def _parse_topology(data: object) -> None | TopologyInfo | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                topology_type_0 = TopologyInfo.from_dict(data)



                return topology_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TopologyInfo | Unset, data)

        topology = _parse_topology(d.pop("topology", UNSET))


        def _parse_drain(data: object) -> DrainInfo | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                drain_type_0 = DrainInfo.from_dict(data)



                return drain_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DrainInfo | None | Unset, data)

        drain = _parse_drain(d.pop("drain", UNSET))


        def _parse_replacement(data: object) -> None | Replacement | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                replacement_type_0 = Replacement.from_dict(data)



                return replacement_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Replacement | Unset, data)

        replacement = _parse_replacement(d.pop("replacement", UNSET))


        def _parse_window(data: object) -> BookingWindow | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                window_type_0 = BookingWindow.from_dict(data)



                return window_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BookingWindow | None | Unset, data)

        window = _parse_window(d.pop("window", UNSET))


        def _parse_move(data: object) -> HostMove | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                move_type_0 = HostMove.from_dict(data)



                return move_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HostMove | None | Unset, data)

        move = _parse_move(d.pop("move", UNSET))


        spare_event_data = cls(
            spare_id=spare_id,
            cluster=cluster,
            pool=pool,
            host=host,
            vm=vm,
            reason=reason,
            topology=topology,
            drain=drain,
            replacement=replacement,
            window=window,
            move=move,
        )

        return spare_event_data

