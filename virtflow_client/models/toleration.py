from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.toleration_effect_type_0 import TolerationEffectType0
from ..models.toleration_operator import TolerationOperator
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Toleration")



@_attrs_define
class Toleration:
    """ Kubernetes semantics: an empty key with Exists tolerates every taint.

    Accepts a Kubernetes client's toleration as it serialises it: null for unset fields, and
    `tolerationSeconds` (either spelling), which placement has no use for, ignored.

        Attributes:
            key (str | Unset):  Default: ''.
            operator (TolerationOperator | Unset):  Default: TolerationOperator.EQUAL.
            value (str | Unset):  Default: ''.
            effect (None | TolerationEffectType0 | Unset):
     """

    key: str | Unset = ''
    operator: TolerationOperator | Unset = TolerationOperator.EQUAL
    value: str | Unset = ''
    effect: None | TolerationEffectType0 | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        key = self.key

        operator: str | Unset = UNSET
        if not isinstance(self.operator, Unset):
            operator = self.operator.value


        value = self.value

        effect: None | str | Unset
        if isinstance(self.effect, Unset):
            effect = UNSET
        elif isinstance(self.effect, TolerationEffectType0):
            effect = self.effect.value
        else:
            effect = self.effect


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if key is not UNSET:
            field_dict["key"] = key
        if operator is not UNSET:
            field_dict["operator"] = operator
        if value is not UNSET:
            field_dict["value"] = value
        if effect is not UNSET:
            field_dict["effect"] = effect

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        key = d.pop("key", UNSET)

        _operator = d.pop("operator", UNSET)
        operator: TolerationOperator | Unset
        if isinstance(_operator,  Unset):
            operator = UNSET
        else:
            operator = TolerationOperator(_operator)




        value = d.pop("value", UNSET)

        def _parse_effect(data: object) -> None | TolerationEffectType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                effect_type_0 = TolerationEffectType0(data)



                return effect_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TolerationEffectType0 | Unset, data)

        effect = _parse_effect(d.pop("effect", UNSET))


        toleration = cls(
            key=key,
            operator=operator,
            value=value,
            effect=effect,
        )


        toleration.additional_properties = d
        return toleration

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
