from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.hold import Hold
  from ..models.placed_topology import PlacedTopology
  from ..models.reservation_devices import ReservationDevices





T = TypeVar("T", bound="Reservation")



@_attrs_define
class Reservation:
    """ Room the ledger promised to a spare on a host, until the inventory shows its VM.

        Attributes:
            cpu (int):
            memory_mb (int):
            spare_id (str):
            vm_name (str):
            host (str):
            gpu (int | Unset):  Default: 0.
            disk_gb (int | Unset):  Default: 0.
            devices (ReservationDevices | Unset):
            anti_affinity_group (None | str | Unset):
            vmid (int | None | Unset):
            topology (None | PlacedTopology | Unset):
            hold (Hold | Unset): `[start, end)`. No start: from whenever it was made (counts as since always); no end:
                until it is freed (counts as forever).
     """

    cpu: int
    memory_mb: int
    spare_id: str
    vm_name: str
    host: str
    gpu: int | Unset = 0
    disk_gb: int | Unset = 0
    devices: ReservationDevices | Unset = UNSET
    anti_affinity_group: None | str | Unset = UNSET
    vmid: int | None | Unset = UNSET
    topology: None | PlacedTopology | Unset = UNSET
    hold: Hold | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.hold import Hold # noqa: PLC0415
        from ..models.placed_topology import PlacedTopology # noqa: PLC0415
        from ..models.reservation_devices import ReservationDevices # noqa: PLC0415
        cpu = self.cpu

        memory_mb = self.memory_mb

        spare_id = self.spare_id

        vm_name = self.vm_name

        host = self.host

        gpu = self.gpu

        disk_gb = self.disk_gb

        devices: dict[str, Any] | Unset = UNSET
        if not isinstance(self.devices, Unset):
            devices = self.devices.to_dict()

        anti_affinity_group: None | str | Unset
        if isinstance(self.anti_affinity_group, Unset):
            anti_affinity_group = UNSET
        else:
            anti_affinity_group = self.anti_affinity_group

        vmid: int | None | Unset
        if isinstance(self.vmid, Unset):
            vmid = UNSET
        else:
            vmid = self.vmid

        topology: dict[str, Any] | None | Unset
        if isinstance(self.topology, Unset):
            topology = UNSET
        elif isinstance(self.topology, PlacedTopology):
            topology = self.topology.to_dict()
        else:
            topology = self.topology

        hold: dict[str, Any] | Unset = UNSET
        if not isinstance(self.hold, Unset):
            hold = self.hold.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "cpu": cpu,
            "memory_mb": memory_mb,
            "spare_id": spare_id,
            "vm_name": vm_name,
            "host": host,
        })
        if gpu is not UNSET:
            field_dict["gpu"] = gpu
        if disk_gb is not UNSET:
            field_dict["disk_gb"] = disk_gb
        if devices is not UNSET:
            field_dict["devices"] = devices
        if anti_affinity_group is not UNSET:
            field_dict["anti_affinity_group"] = anti_affinity_group
        if vmid is not UNSET:
            field_dict["vmid"] = vmid
        if topology is not UNSET:
            field_dict["topology"] = topology
        if hold is not UNSET:
            field_dict["hold"] = hold

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.hold import Hold # noqa: PLC0415
        from ..models.placed_topology import PlacedTopology # noqa: PLC0415
        from ..models.reservation_devices import ReservationDevices # noqa: PLC0415
        d = dict(src_dict)
        cpu = d.pop("cpu")

        memory_mb = d.pop("memory_mb")

        spare_id = d.pop("spare_id")

        vm_name = d.pop("vm_name")

        host = d.pop("host")

        gpu = d.pop("gpu", UNSET)

        disk_gb = d.pop("disk_gb", UNSET)

        _devices = d.pop("devices", UNSET)
        devices: ReservationDevices | Unset
        if isinstance(_devices,  Unset):
            devices = UNSET
        else:
            devices = ReservationDevices.from_dict(_devices)




        def _parse_anti_affinity_group(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        anti_affinity_group = _parse_anti_affinity_group(d.pop("anti_affinity_group", UNSET))


        def _parse_vmid(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        vmid = _parse_vmid(d.pop("vmid", UNSET))


        def _parse_topology(data: object) -> None | PlacedTopology | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                topology_type_0 = PlacedTopology.from_dict(data)



                return topology_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PlacedTopology | Unset, data)

        topology = _parse_topology(d.pop("topology", UNSET))


        _hold = d.pop("hold", UNSET)
        hold: Hold | Unset
        if isinstance(_hold,  Unset):
            hold = UNSET
        else:
            hold = Hold.from_dict(_hold)




        reservation = cls(
            cpu=cpu,
            memory_mb=memory_mb,
            spare_id=spare_id,
            vm_name=vm_name,
            host=host,
            gpu=gpu,
            disk_gb=disk_gb,
            devices=devices,
            anti_affinity_group=anti_affinity_group,
            vmid=vmid,
            topology=topology,
            hold=hold,
        )


        reservation.additional_properties = d
        return reservation

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
