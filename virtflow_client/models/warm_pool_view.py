from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.warm_spare import WarmSpare





T = TypeVar("T", bound="WarmPoolView")



@_attrs_define
class WarmPoolView:
    """ `GET /v1/warm-pools/{name}` and the pool's query: its size and where its spares are.

        Attributes:
            name (str):
            cluster (str):
            inventory (str):
            cpu (int):
            memory_mb (int):
            size (int):
            ready (int): Warm spares Ready to be claimed
            coming_up (int): Warm spares being prepared
            claimed (int): Spares handed to requests so far
            pool (None | str | Unset):
            template (None | str | Unset):
            gpu (int | Unset):  Default: 0.
            hits (int | Unset):  Default: 0.
            misses (int | Unset):  Default: 0.
            spares (list[WarmSpare] | Unset):
            short_reason (None | str | Unset): Why the pool is below its size, when it is
     """

    name: str
    cluster: str
    inventory: str
    cpu: int
    memory_mb: int
    size: int
    ready: int
    coming_up: int
    claimed: int
    pool: None | str | Unset = UNSET
    template: None | str | Unset = UNSET
    gpu: int | Unset = 0
    hits: int | Unset = 0
    misses: int | Unset = 0
    spares: list[WarmSpare] | Unset = UNSET
    short_reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.warm_spare import WarmSpare # noqa: PLC0415
        name = self.name

        cluster = self.cluster

        inventory = self.inventory

        cpu = self.cpu

        memory_mb = self.memory_mb

        size = self.size

        ready = self.ready

        coming_up = self.coming_up

        claimed = self.claimed

        pool: None | str | Unset
        if isinstance(self.pool, Unset):
            pool = UNSET
        else:
            pool = self.pool

        template: None | str | Unset
        if isinstance(self.template, Unset):
            template = UNSET
        else:
            template = self.template

        gpu = self.gpu

        hits = self.hits

        misses = self.misses

        spares: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.spares, Unset):
            spares = []
            for spares_item_data in self.spares:
                spares_item = spares_item_data.to_dict()
                spares.append(spares_item)



        short_reason: None | str | Unset
        if isinstance(self.short_reason, Unset):
            short_reason = UNSET
        else:
            short_reason = self.short_reason


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "name": name,
            "cluster": cluster,
            "inventory": inventory,
            "cpu": cpu,
            "memory_mb": memory_mb,
            "size": size,
            "ready": ready,
            "coming_up": coming_up,
            "claimed": claimed,
        })
        if pool is not UNSET:
            field_dict["pool"] = pool
        if template is not UNSET:
            field_dict["template"] = template
        if gpu is not UNSET:
            field_dict["gpu"] = gpu
        if hits is not UNSET:
            field_dict["hits"] = hits
        if misses is not UNSET:
            field_dict["misses"] = misses
        if spares is not UNSET:
            field_dict["spares"] = spares
        if short_reason is not UNSET:
            field_dict["short_reason"] = short_reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.warm_spare import WarmSpare # noqa: PLC0415
        d = dict(src_dict)
        name = d.pop("name")

        cluster = d.pop("cluster")

        inventory = d.pop("inventory")

        cpu = d.pop("cpu")

        memory_mb = d.pop("memory_mb")

        size = d.pop("size")

        ready = d.pop("ready")

        coming_up = d.pop("coming_up")

        claimed = d.pop("claimed")

        def _parse_pool(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        pool = _parse_pool(d.pop("pool", UNSET))


        def _parse_template(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        template = _parse_template(d.pop("template", UNSET))


        gpu = d.pop("gpu", UNSET)

        hits = d.pop("hits", UNSET)

        misses = d.pop("misses", UNSET)

        _spares = d.pop("spares", UNSET)
        spares: list[WarmSpare] | Unset = UNSET
        if _spares is not UNSET:
            spares = []
            for spares_item_data in _spares:
                spares_item = WarmSpare.from_dict(spares_item_data)



                spares.append(spares_item)


        def _parse_short_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        short_reason = _parse_short_reason(d.pop("short_reason", UNSET))


        warm_pool_view = cls(
            name=name,
            cluster=cluster,
            inventory=inventory,
            cpu=cpu,
            memory_mb=memory_mb,
            size=size,
            ready=ready,
            coming_up=coming_up,
            claimed=claimed,
            pool=pool,
            template=template,
            gpu=gpu,
            hits=hits,
            misses=misses,
            spares=spares,
            short_reason=short_reason,
        )


        warm_pool_view.additional_properties = d
        return warm_pool_view

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
