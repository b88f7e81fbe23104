"""Standard Webhooks 1.0 signatures: `v1,` base64 HMAC-SHA256 over `id.timestamp.body`.

Signing and verification are done here with the standard library rather than through the
`standardwebhooks` package: its verifier has a fixed 5-minute tolerance, reads the wall clock,
decodes the body as text and can raise errors other than its own on malformed headers. The
tests check that both produce the same signatures.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets as _secrets
import time
from collections.abc import Mapping, Sequence

SECRET_PREFIX = "whsec_"
SIGNATURE_VERSION = "v1"
MIN_SECRET_BYTES = 24
MAX_SECRET_BYTES = 64
DEFAULT_TOLERANCE_SECONDS = 300

HEADER_ID = "webhook-id"
HEADER_TIMESTAMP = "webhook-timestamp"
HEADER_SIGNATURE = "webhook-signature"

# Bounds on what a verifier reads, so a hostile sender cannot make it work hard.
_MAX_ID_LENGTH = 256
_MAX_SIGNATURES = 16
_MAX_SIGNATURE_HEADER = 4096


class InvalidSecretError(ValueError):
    """The secret is not `whsec_` + base64 of 24-64 bytes (placeholders land here)."""


class WebhookVerificationError(Exception):
    """A delivery failed verification; `reason` is safe to return to the sender."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def generate_secret() -> str:
    """A fresh secret for a new receiver: 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(_secrets.token_bytes(32)).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The HMAC key inside a `whsec_` secret; strict, so typos and placeholders fail early."""
    if not secret.startswith(SECRET_PREFIX):
        raise InvalidSecretError(f"a webhook secret must start with {SECRET_PREFIX!r}")
    encoded = secret[len(SECRET_PREFIX) :]
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidSecretError("a webhook secret must be base64 after 'whsec_'") from None
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        raise InvalidSecretError(
            f"a webhook secret must hold {MIN_SECRET_BYTES}-{MAX_SECRET_BYTES} bytes, "
            f"this one holds {len(key)}"
        )
    return key


def _digest(key: bytes, msg_id: str, timestamp: int, body: bytes) -> bytes:
    signed = msg_id.encode() + b"." + str(timestamp).encode() + b"." + body
    return hmac.new(key, signed, hashlib.sha256).digest()


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """One signature, `v1,<base64>`, of the exact body bytes sent."""
    digest = _digest(secret_key(secret), msg_id, timestamp, body)
    return f"{SIGNATURE_VERSION},{base64.b64encode(digest).decode('ascii')}"


def signed_headers(
    secrets: Sequence[str], msg_id: str, body: bytes, timestamp: int | None = None
) -> dict[str, str]:
    """The three Standard Webhooks headers; one signature per secret so rotation works."""
    if not secrets:
        raise InvalidSecretError("at least one webhook secret is needed to sign")
    ts = int(time.time()) if timestamp is None else timestamp
    return {
        HEADER_ID: msg_id,
        HEADER_TIMESTAMP: str(ts),
        HEADER_SIGNATURE: " ".join(sign(s, msg_id, ts, body) for s in secrets),
    }


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == name:
            if not isinstance(value, str) or not value.strip():
                break
            return value.strip()
    raise WebhookVerificationError(f"missing header {name}")


def _parse_timestamp(raw: str, tolerance_seconds: int, now: int | None) -> int:
    if not raw.isascii() or not raw.isdigit() or len(raw) > 12:
        raise WebhookVerificationError("malformed webhook-timestamp")
    timestamp = int(raw)
    current = int(time.time()) if now is None else now
    if timestamp < current - tolerance_seconds:
        raise WebhookVerificationError("webhook-timestamp too old")
    if timestamp > current + tolerance_seconds:
        raise WebhookVerificationError("webhook-timestamp too far in the future")
    return timestamp


def _candidate_signatures(raw: str) -> list[bytes]:
    if len(raw) > _MAX_SIGNATURE_HEADER:
        raise WebhookVerificationError("webhook-signature too long")
    found: list[bytes] = []
    for item in raw.split()[:_MAX_SIGNATURES]:
        version, sep, encoded = item.partition(",")
        if not sep:
            raise WebhookVerificationError("malformed webhook-signature")
        if version != SIGNATURE_VERSION:
            continue  # other schemes (e.g. v1a) may sit beside ours: skip, don't fail
        try:
            found.append(base64.b64decode(encoded, validate=True))
        except (binascii.Error, ValueError):
            raise WebhookVerificationError("webhook-signature is not base64") from None
    if not found:
        raise WebhookVerificationError("no v1 signature in webhook-signature")
    return found


def verify(
    headers: Mapping[str, str],
    body: bytes,
    secrets: Sequence[str],
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: int | None = None,
) -> None:
    """Accept the delivery or raise WebhookVerificationError; never any other exception."""
    try:
        _verify(headers, body, secrets, tolerance_seconds, now)
    except WebhookVerificationError:
        raise
    except Exception as exc:  # a verifier must reject, not crash, on hostile input
        raise WebhookVerificationError(f"malformed delivery ({type(exc).__name__})") from None


def _verify(
    headers: Mapping[str, str],
    body: bytes,
    secrets: Sequence[str],
    tolerance_seconds: int,
    now: int | None,
) -> None:
    msg_id = _header(headers, HEADER_ID)
    if len(msg_id) > _MAX_ID_LENGTH:
        raise WebhookVerificationError("webhook-id too long")
    timestamp = _parse_timestamp(_header(headers, HEADER_TIMESTAMP), tolerance_seconds, now)
    candidates = _candidate_signatures(_header(headers, HEADER_SIGNATURE))
    if not isinstance(body, bytes | bytearray):
        raise WebhookVerificationError("body must be the raw bytes received")
    try:
        keys = [secret_key(s) for s in secrets]
    except InvalidSecretError:
        raise WebhookVerificationError("receiver misconfigured: invalid secret") from None
    matched = False
    for key in keys:
        expected = _digest(key, msg_id, timestamp, bytes(body))
        for candidate in candidates:
            # Keep comparing after a match so timing says nothing about which one matched.
            matched |= hmac.compare_digest(expected, candidate)
    if not matched:
        raise WebhookVerificationError("no matching signature")
