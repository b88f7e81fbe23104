"""Payload encryption: payloads round-trip, keys rotate without losing what was sealed before,
a wrong key fails with a message that says so, and a history holds no clear text (failure
messages included) while its search attributes stay readable."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta

import pytest
from pydantic import SecretStr, ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import SearchAttributePair, TypedSearchAttributes

from runtime.encryption import (
    ENCODING,
    KEY_ID,
    EncryptionCodec,
    PayloadKeyError,
    data_converter,
    new_key,
)
from runtime.settings import Settings
from tests.helpers import new_worker
from tests.known_secrets import PAYLOAD_KEY
from tests.runtime.encrypted_echo import HOST_KEY, EncryptedEcho, Note

OLD, NEW = SecretStr(PAYLOAD_KEY), SecretStr(new_key())


def clear(text: str) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=text.encode())


async def test_a_payload_round_trips_sealed_under_the_active_key() -> None:
    codec = EncryptionCodec({"k1": OLD}, "k1")
    (sealed,) = await codec.encode([clear('"hv-07.rack2"')])
    assert sealed.metadata["encoding"] == ENCODING
    assert sealed.metadata[KEY_ID] == b"k1"
    assert b"hv-07" not in sealed.data
    assert await codec.decode([sealed]) == [clear('"hv-07.rack2"')]
    # A fresh nonce each time: the same payload never seals to the same bytes.
    (again,) = await codec.encode([clear('"hv-07.rack2"')])
    assert again.data != sealed.data


async def test_after_rotation_new_payloads_use_the_new_key_and_old_ones_still_decode() -> None:
    (old,) = await EncryptionCodec({"k1": OLD}, "k1").encode([clear("1")])
    rotated = EncryptionCodec({"k1": OLD, "k2": NEW}, "k2")
    (new,) = await rotated.encode([clear("2")])
    assert new.metadata[KEY_ID] == b"k2"
    assert await rotated.decode([old, new]) == [clear("1"), clear("2")]
    # Encryption off again: nothing new is sealed, and what was sealed still reads.
    off = EncryptionCodec({"k1": OLD, "k2": NEW}, None)
    assert await off.encode([clear("3")]) == [clear("3")]
    assert await off.decode([old]) == [clear("1")]


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        ({"k2": NEW}, "payload sealed with key 'k1', which is not among payload_keys (k2)"),
        ({"k1": NEW}, "payload key 'k1' does not open this payload"),
    ],
)
async def test_a_wrong_or_missing_key_fails_clearly(keys: dict[str, SecretStr], said: str) -> None:
    (sealed,) = await EncryptionCodec({"k1": OLD}, "k1").encode([clear("1")])
    with pytest.raises(PayloadKeyError, match=said.replace("(", r"\(").replace(")", r"\)")):
        await EncryptionCodec(keys, None).decode([sealed])


async def test_a_key_id_swapped_in_the_metadata_does_not_open() -> None:
    """The key id is bound into the tag: relabelling a payload to another key fails."""
    (sealed,) = await EncryptionCodec({"k1": OLD}, "k1").encode([clear("1")])
    sealed.metadata[KEY_ID] = b"k2"
    with pytest.raises(PayloadKeyError, match="does not open"):
        await EncryptionCodec({"k1": OLD, "k2": OLD}, None).decode([sealed])


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"payload_keys": {"k1": "not base64!"}}, "payload key 'k1' is not base64"),
        ({"payload_keys": {"k1": "c2hvcnQ="}}, "AES needs 16, 24 or 32"),
        (
            {"payload_keys": {"k1": OLD}, "payload_encryption_key_id": "k9"},
            "add the file virtflow_payload_keys__k9",
        ),
    ],
)
def test_bad_key_settings_are_refused_at_start(fields: dict[str, object], said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        Settings(**fields)  # type: ignore[arg-type]


async def test_histories_hold_no_clear_text_but_search_attributes_stay_readable(
    client: Client,
) -> None:
    codec = EncryptionCodec({"k1": OLD}, "k1")
    sealed = Client(
        client.service_client,
        namespace=client.namespace,
        data_converter=data_converter(codec),
    )
    host = f"hv-{uuid.uuid4().hex[:8]}"
    async with new_worker(sealed, EncryptedEcho) as worker:
        ok = await sealed.execute_workflow(
            EncryptedEcho.run,
            Note(host=host, message="hello"),
            id=f"enc-{uuid.uuid4()}",
            task_queue=worker.task_queue,
            execution_timeout=timedelta(seconds=30),
        )
        assert ok == Note(host=host, message="hello")
        failing = f"enc-{uuid.uuid4()}"
        with pytest.raises(WorkflowFailureError) as failed:
            await sealed.execute_workflow(
                EncryptedEcho.run,
                Note(host=host, message="fail"),
                id=failing,
                task_queue=worker.task_queue,
                execution_timeout=timedelta(seconds=30),
                search_attributes=TypedSearchAttributes([SearchAttributePair(HOST_KEY, "start")]),
            )
    # Read with the codec: the failure's message comes back whole.
    assert f"could not reach {host}" in str(failed.value.cause)
    # Read without it: neither the input, the result nor the message is there in clear.
    history = await client.get_workflow_handle(failing).fetch_history()
    raw = history.to_json()
    assert host not in raw
    assert "could not reach" not in raw
    assert "Encoded failure" in raw  # the failure converter's stand-in message
    # The server indexes search attributes itself: they stay readable to anyone.
    description = await client.get_workflow_handle(failing).describe()
    assert description.typed_search_attributes.get(HOST_KEY) == host


def test_without_keys_the_converter_is_the_plain_one() -> None:
    plain = data_converter(None)
    sealed = data_converter(EncryptionCodec({"k1": OLD}, "k1"))
    assert plain.payload_codec is None
    assert dataclasses.replace(sealed, payload_codec=None).payload_converter_class is (
        plain.payload_converter_class
    )
