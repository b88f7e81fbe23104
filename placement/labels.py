"""Kubernetes' label syntax, so a selector or toleration that no Node could carry is refused.

The rules are apimachinery's (`validation.IsQualifiedName`, `IsValidLabelValue`):
- a key is `[prefix/]name`: the name 1-63 characters, alphanumeric at both ends with `-`, `_`,
  `.` inside; the optional prefix a DNS subdomain of at most 253 characters;
- a value is empty, or 1-63 characters of the same form as a name;
- an extended resource (a device) is a key with a prefix outside `kubernetes.io`.
"""

from __future__ import annotations

import re

NAME_MAX = 63
PREFIX_MAX = 253
_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*")

_NAME_RULE = (
    "alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric "
    f"character, at most {NAME_MAX}"
)


def check_label_key(key: str) -> str:
    """The key, or ValueError saying which Kubernetes rule it breaks."""
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix:
            raise ValueError(f"label key {key!r}: the prefix before '/' must not be empty")
        if len(prefix) > PREFIX_MAX or not _DNS_SUBDOMAIN.fullmatch(prefix):
            raise ValueError(
                f"label key {key!r}: the prefix must be a DNS subdomain (lower-case "
                f"alphanumeric characters, '-' or '.', at most {PREFIX_MAX})"
            )
    if not name:
        raise ValueError(f"label key {key!r}: the name must not be empty")
    if len(name) > NAME_MAX or not _NAME.fullmatch(name):
        raise ValueError(f"label key {key!r}: the name must be {_NAME_RULE}")
    return key


def check_label_value(value: str) -> str:
    """The value, or ValueError saying which Kubernetes rule it breaks (empty is valid)."""
    if value and (len(value) > NAME_MAX or not _NAME.fullmatch(value)):
        raise ValueError(f"label value {value!r}: must be empty or {_NAME_RULE}")
    return value


def check_device_name(name: str) -> str:
    """A device name in Kubernetes' extended-resource style (`vendor.example/kind`): a label key
    with a domain prefix outside `kubernetes.io`; else ValueError saying what is wrong."""
    check_label_key(name)
    prefix, slash, _ = name.rpartition("/")
    if not slash:
        raise ValueError(f"device name {name!r}: needs a domain prefix, e.g. vendor.example/kind")
    if prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io"):
        raise ValueError(f"device name {name!r}: the kubernetes.io domain is reserved")
    return name


def check_labels(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        check_label_key(key)
        check_label_value(value)
    return labels
