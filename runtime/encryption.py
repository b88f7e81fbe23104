"""Payload encryption: an AES-GCM PayloadCodec whose keys come from the secrets directory.

Every payload a client or worker writes (workflow and activity inputs and results, queries,
updates, signals, memos, the summaries, and failure messages and stack traces, which the
failure converter moves into an encoded attribute) is replaced by one whose metadata names
the codec and the id of the key that sealed it. The id lets keys rotate: new payloads use the
key `payload_encryption_key_id` names, and any payload still decodes while its key is among
`payload_keys`. Search attributes are not payloads: the server indexes them, so they stay
readable (cluster, pool, host, phase). Temporal's own metadata (workflow type, ids, task
queue, timestamps) is not encrypted either.

`cryptography` provides the AEAD (the `encryption` extra); nothing here rolls its own crypto.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
from collections.abc import Mapping, Sequence

from pydantic import SecretStr
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import (
    DataConverter,
    DefaultFailureConverterWithEncodedAttributes,
    PayloadCodec,
)

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
NONCE_BYTES = 12


class PayloadKeyError(ValueError):
    """A key is missing, malformed or does not open a payload; the message says which."""


def parse_key(key_id: str, value: SecretStr) -> bytes:
    """An AES key from its base64 text (16, 24 or 32 bytes once decoded)."""
    try:
        key = base64.b64decode(value.get_secret_value().strip(), validate=True)
    except binascii.Error:
        raise PayloadKeyError(f"payload key {key_id!r} is not base64") from None
    if len(key) not in (16, 24, 32):
        raise PayloadKeyError(
            f"payload key {key_id!r} is {len(key)} bytes: AES needs 16, 24 or 32 "
            "(make one with `head -c 32 /dev/urandom | base64`)"
        )
    return key


def new_key() -> str:
    """A fresh 256-bit key as the base64 text a secrets file holds."""
    return base64.b64encode(os.urandom(32)).decode()


class EncryptionCodec(PayloadCodec):
    """AES-GCM per payload: a random 96-bit nonce, the serialised payload sealed, the key id
    both in the metadata and bound into the tag (associated data), so a payload cannot be
    passed off as sealed by another key."""

    def __init__(self, keys: Mapping[str, SecretStr], active: str | None) -> None:
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:
            raise PayloadKeyError(
                "payload encryption needs cryptography: pip install 'virtflow[encryption]'"
            ) from None
        self._ciphers = {kid: AESGCM(parse_key(kid, value)) for kid, value in keys.items()}
        if active is not None and active not in self._ciphers:
            raise PayloadKeyError(
                f"payload_encryption_key_id {active!r} is not among payload_keys "
                f"({', '.join(sorted(self._ciphers)) or 'none'}): add its file "
                f"virtflow_payload_keys__{active} to the secrets directory"
            )
        self.active = active

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        if self.active is None:
            return list(payloads)  # decode-only: keys kept to read what was sealed before
        cipher, kid = self._ciphers[self.active], self.active.encode()
        sealed = []
        for payload in payloads:
            nonce = os.urandom(NONCE_BYTES)
            data = cipher.encrypt(nonce, payload.SerializeToString(), kid)
            sealed.append(Payload(metadata={"encoding": ENCODING, KEY_ID: kid}, data=nonce + data))
        return sealed

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._open(payload) for payload in payloads]

    def _open(self, payload: Payload) -> Payload:
        if payload.metadata.get("encoding") != ENCODING:
            return payload  # written in clear (before encryption was on, or with it off)
        kid = payload.metadata.get(KEY_ID, b"").decode()
        cipher = self._ciphers.get(kid)
        if cipher is None:
            raise PayloadKeyError(
                f"payload sealed with key {kid!r}, which is not among payload_keys "
                f"({', '.join(sorted(self._ciphers)) or 'none'})"
            )
        from cryptography.exceptions import InvalidTag

        nonce, data = payload.data[:NONCE_BYTES], payload.data[NONCE_BYTES:]
        try:
            plain = cipher.decrypt(nonce, data, kid.encode())
        except InvalidTag:
            raise PayloadKeyError(
                f"payload key {kid!r} does not open this payload: the key file holds "
                "another key than the one that sealed it, or the payload was altered"
            ) from None
        return Payload.FromString(plain)


def codec_from(keys: Mapping[str, SecretStr], active: str | None) -> EncryptionCodec | None:
    """The codec the settings ask for; none when no key is configured."""
    if not keys and active is None:
        return None
    return EncryptionCodec(keys, active)


def data_converter(codec: PayloadCodec | None) -> DataConverter:
    """Pydantic payloads, sealed by `codec` when there is one, failures' messages with them."""
    if codec is None:
        return pydantic_data_converter
    return dataclasses.replace(
        pydantic_data_converter,
        payload_codec=codec,
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )
