"""Standard Webhooks signing and verification, against the spec's vector and the reference lib."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest
from standardwebhooks.webhooks import Webhook

from webhooks.signing import (
    InvalidSecretError,
    WebhookVerificationError,
    generate_secret,
    secret_key,
    sign,
    signed_headers,
    verify,
)

# The published Standard Webhooks test vector.
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = b'{"test": 2432232314}'
EXPECTED = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

OTHER_SECRET = generate_secret()


def _headers(**override: str) -> dict[str, str]:
    headers = signed_headers([SECRET], MSG_ID, BODY, timestamp=TIMESTAMP)
    headers.update(override)
    return headers


def test_signature_matches_the_published_vector() -> None:
    assert sign(SECRET, MSG_ID, TIMESTAMP, BODY) == EXPECTED


def test_signature_matches_the_standardwebhooks_library_for_fresh_secrets() -> None:
    secret = generate_secret()
    body = '{"type":"spare.ready","spare_id":"spare-c1-r1","emoji":"✓"}'.encode()
    ours = sign(secret, "msg_abc", TIMESTAMP, body)
    theirs = Webhook(secret).sign("msg_abc", datetime.fromtimestamp(TIMESTAMP, UTC), body.decode())
    assert ours == theirs


def test_the_standardwebhooks_library_accepts_our_headers() -> None:
    headers = signed_headers([OTHER_SECRET, SECRET], MSG_ID, BODY)
    assert Webhook(SECRET).verify(BODY, headers) == {"test": 2432232314}


def test_generated_secrets_hold_32_random_bytes() -> None:
    first, second = generate_secret(), generate_secret()
    assert first.startswith("whsec_") and first != second
    assert len(secret_key(first)) == 32


def test_signed_headers_carry_one_signature_per_secret() -> None:
    headers = signed_headers([SECRET, OTHER_SECRET], MSG_ID, BODY, timestamp=TIMESTAMP)
    assert headers["webhook-id"] == MSG_ID
    assert headers["webhook-timestamp"] == str(TIMESTAMP)
    assert headers["webhook-signature"].split(" ") == [
        EXPECTED,
        sign(OTHER_SECRET, MSG_ID, TIMESTAMP, BODY),
    ]


def test_signing_without_a_secret_is_refused() -> None:
    with pytest.raises(InvalidSecretError):
        signed_headers([], MSG_ID, BODY)


@pytest.mark.parametrize(
    "secret",
    [
        "whsec_change-me",
        "change-me",
        "whsec_",
        "whsec_c2hvcnQ=",
        "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    ],
)
def test_placeholder_short_or_unprefixed_secrets_are_invalid(secret: str) -> None:
    with pytest.raises(InvalidSecretError):
        secret_key(secret)


def test_a_correct_delivery_is_accepted() -> None:
    verify(_headers(), BODY, [SECRET], now=TIMESTAMP)


def test_header_names_are_case_insensitive() -> None:
    headers = {k.upper(): v for k, v in _headers().items()}
    verify(headers, BODY, [SECRET], now=TIMESTAMP)


@pytest.mark.parametrize("receiver_secrets", [[SECRET, OTHER_SECRET], [OTHER_SECRET, SECRET]])
def test_rotation_accepts_a_delivery_signed_with_either_known_secret(
    receiver_secrets: list[str],
) -> None:
    verify(_headers(), BODY, receiver_secrets, now=TIMESTAMP)


def test_rotation_accepts_when_the_sender_signs_with_old_and_new_secrets() -> None:
    headers = signed_headers([OTHER_SECRET, SECRET], MSG_ID, BODY, timestamp=TIMESTAMP)
    verify(headers, BODY, [SECRET], now=TIMESTAMP)


def test_other_signature_versions_are_skipped_not_fatal() -> None:
    headers = _headers(**{"webhook-signature": f"v1a,{'A' * 86} {EXPECTED}"})
    verify(headers, BODY, [SECRET], now=TIMESTAMP)


REJECTIONS: list[tuple[str, dict[str, str], bytes, int, str]] = [
    ("a tampered body", _headers(), BODY + b" ", TIMESTAMP, "no matching signature"),
    (
        "a different id",
        _headers(**{"webhook-id": "msg_other"}),
        BODY,
        TIMESTAMP,
        "no matching signature",
    ),
    ("a stale timestamp", _headers(), BODY, TIMESTAMP + 301, "webhook-timestamp too old"),
    (
        "a future timestamp",
        _headers(),
        BODY,
        TIMESTAMP - 301,
        "webhook-timestamp too far in the future",
    ),
    (
        "a timestamp re-stamped without re-signing",
        _headers(**{"webhook-timestamp": str(TIMESTAMP + 1)}),
        BODY,
        TIMESTAMP,
        "no matching signature",
    ),
    (
        "a non-numeric timestamp",
        _headers(**{"webhook-timestamp": "1614265330.5"}),
        BODY,
        TIMESTAMP,
        "malformed webhook-timestamp",
    ),
    (
        "a negative timestamp",
        _headers(**{"webhook-timestamp": "-5"}),
        BODY,
        TIMESTAMP,
        "malformed webhook-timestamp",
    ),
    (
        "a huge timestamp",
        _headers(**{"webhook-timestamp": "9" * 40}),
        BODY,
        TIMESTAMP,
        "malformed webhook-timestamp",
    ),
    (
        "a signature that is not base64",
        _headers(**{"webhook-signature": "v1,***"}),
        BODY,
        TIMESTAMP,
        "webhook-signature is not base64",
    ),
    (
        "a signature without a version",
        _headers(**{"webhook-signature": EXPECTED[3:]}),
        BODY,
        TIMESTAMP,
        "malformed webhook-signature",
    ),
    (
        "only unknown signature versions",
        _headers(**{"webhook-signature": "v2,AAAA"}),
        BODY,
        TIMESTAMP,
        "no v1 signature in webhook-signature",
    ),
    (
        "an empty signature header",
        _headers(**{"webhook-signature": " "}),
        BODY,
        TIMESTAMP,
        "missing header webhook-signature",
    ),
    (
        "a truncated signature",
        _headers(**{"webhook-signature": EXPECTED[:-8] + "===="}),
        BODY,
        TIMESTAMP,
        "no matching signature",
    ),
    (
        "a valid-base64 but wrong-length signature",
        _headers(**{"webhook-signature": "v1," + base64.b64encode(b"x" * 16).decode()}),
        BODY,
        TIMESTAMP,
        "no matching signature",
    ),
]


@pytest.mark.parametrize(
    ("headers", "body", "now", "reason"),
    [case[1:] for case in REJECTIONS],
    ids=[case[0] for case in REJECTIONS],
)
def test_bad_deliveries_are_rejected_with_the_reason(
    headers: dict[str, str], body: bytes, now: int, reason: str
) -> None:
    with pytest.raises(WebhookVerificationError) as caught:
        verify(headers, body, [SECRET], now=now)
    assert caught.value.reason == reason


def test_a_wrong_secret_is_rejected() -> None:
    with pytest.raises(WebhookVerificationError, match="no matching signature"):
        verify(_headers(), BODY, [OTHER_SECRET], now=TIMESTAMP)


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_each_missing_header_is_rejected_by_name(missing: str) -> None:
    headers = _headers()
    del headers[missing]
    with pytest.raises(WebhookVerificationError) as caught:
        verify(headers, BODY, [SECRET], now=TIMESTAMP)
    assert caught.value.reason == f"missing header {missing}"


def test_the_tolerance_is_configurable() -> None:
    verify(_headers(), BODY, [SECRET], tolerance_seconds=3600, now=TIMESTAMP + 3000)
    with pytest.raises(WebhookVerificationError, match="too old"):
        verify(_headers(), BODY, [SECRET], tolerance_seconds=10, now=TIMESTAMP + 11)


def test_an_invalid_receiver_secret_rejects_instead_of_crashing() -> None:
    with pytest.raises(WebhookVerificationError, match="receiver misconfigured"):
        verify(_headers(), BODY, ["whsec_change-me"], now=TIMESTAMP)


@pytest.mark.parametrize(
    "headers",
    [
        {"webhook-id": None, "webhook-timestamp": "1", "webhook-signature": "v1,AA=="},
        {1: "x", "webhook-id": "a", "webhook-timestamp": str(TIMESTAMP)},
        {"webhook-id": "a" * 10_000, "webhook-timestamp": "1", "webhook-signature": "v1,AA=="},
    ],
)
def test_hostile_header_values_only_ever_raise_the_verification_error(
    headers: dict[object, object],
) -> None:
    with pytest.raises(WebhookVerificationError):
        verify(headers, BODY, [SECRET], now=TIMESTAMP)  # type: ignore[arg-type]


def test_a_body_given_as_text_is_rejected_not_crashing() -> None:
    with pytest.raises(WebhookVerificationError):
        verify(_headers(), BODY.decode(), [SECRET], now=TIMESTAMP)  # type: ignore[arg-type]
