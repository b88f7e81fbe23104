from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="SpareSummary")



@_attrs_define
class SpareSummary:
    """ 
        Attributes:
            spare_id (str):
            workflow_status (str):
            ui_url (str):
            cluster (None | str | Unset):
            pool (None | str | Unset):
            host (None | str | Unset):
            phase (None | str | Unset):
            started_at (datetime.datetime | None | Unset):
     """

    spare_id: str
    workflow_status: str
    ui_url: str
    cluster: None | str | Unset = UNSET
    pool: None | str | Unset = UNSET
    host: None | str | Unset = UNSET
    phase: None | str | Unset = UNSET
    started_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        spare_id = self.spare_id

        workflow_status = self.workflow_status

        ui_url = self.ui_url

        cluster: None | str | Unset
        if isinstance(self.cluster, Unset):
            cluster = UNSET
        else:
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

        phase: None | str | Unset
        if isinstance(self.phase, Unset):
            phase = UNSET
        else:
            phase = self.phase

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        elif isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "spare_id": spare_id,
            "workflow_status": workflow_status,
            "ui_url": ui_url,
        })
        if cluster is not UNSET:
            field_dict["cluster"] = cluster
        if pool is not UNSET:
            field_dict["pool"] = pool
        if host is not UNSET:
            field_dict["host"] = host
        if phase is not UNSET:
            field_dict["phase"] = phase
        if started_at is not UNSET:
            field_dict["started_at"] = started_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        spare_id = d.pop("spare_id")

        workflow_status = d.pop("workflow_status")

        ui_url = d.pop("ui_url")

        def _parse_cluster(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cluster = _parse_cluster(d.pop("cluster", UNSET))


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


        def _parse_phase(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        phase = _parse_phase(d.pop("phase", UNSET))


        def _parse_started_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)



                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))


        spare_summary = cls(
            spare_id=spare_id,
            workflow_status=workflow_status,
            ui_url=ui_url,
            cluster=cluster,
            pool=pool,
            host=host,
            phase=phase,
            started_at=started_at,
        )


        spare_summary.additional_properties = d
        return spare_summary

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
