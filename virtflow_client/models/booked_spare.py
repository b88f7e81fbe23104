from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="BookedSpare")



@_attrs_define
class BookedSpare:
    """ One booking on its host: its window, when its spare is made, where it stands.

        Attributes:
            spare_id (str):
            cluster (None | str): Absent while visibility has not seen the spare
            phase (None | str): The spare's phase (VirtflowPhase)
            workflow_status (None | str): The spare's workflow: `running`, or how it ended while its ledger still holds the
                room (`terminated`, ...: the reconciler or an operator frees it)
            window_start (datetime.datetime | None): When the spare is Ready (absent for a booking held before it was kept)
            window_end (datetime.datetime):
            lead_start (datetime.datetime): When its spare is made; its room is held from then
     """

    spare_id: str
    cluster: None | str
    phase: None | str
    workflow_status: None | str
    window_start: datetime.datetime | None
    window_end: datetime.datetime
    lead_start: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        spare_id = self.spare_id

        cluster: None | str
        cluster = self.cluster

        phase: None | str
        phase = self.phase

        workflow_status: None | str
        workflow_status = self.workflow_status

        window_start: None | str
        if isinstance(self.window_start, datetime.datetime):
            window_start = self.window_start.isoformat()
        else:
            window_start = self.window_start

        window_end = self.window_end.isoformat()

        lead_start = self.lead_start.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "spare_id": spare_id,
            "cluster": cluster,
            "phase": phase,
            "workflow_status": workflow_status,
            "window_start": window_start,
            "window_end": window_end,
            "lead_start": lead_start,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        spare_id = d.pop("spare_id")

        def _parse_cluster(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        cluster = _parse_cluster(d.pop("cluster"))


        def _parse_phase(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        phase = _parse_phase(d.pop("phase"))


        def _parse_workflow_status(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        workflow_status = _parse_workflow_status(d.pop("workflow_status"))


        def _parse_window_start(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                window_start_type_0 = datetime.datetime.fromisoformat(data)



                return window_start_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        window_start = _parse_window_start(d.pop("window_start"))


        window_end = datetime.datetime.fromisoformat(d.pop("window_end"))




        lead_start = datetime.datetime.fromisoformat(d.pop("lead_start"))




        booked_spare = cls(
            spare_id=spare_id,
            cluster=cluster,
            phase=phase,
            workflow_status=workflow_status,
            window_start=window_start,
            window_end=window_end,
            lead_start=lead_start,
        )


        booked_spare.additional_properties = d
        return booked_spare

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
