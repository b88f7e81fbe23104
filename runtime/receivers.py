"""The webhook receivers of the settings (`receivers`): where, signed with what, how often
retried. Only the worker reads them; workflows see a receiver's `ReceiverRoute`."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from contracts.notify import RetryPolicySpec
from webhooks.events import EventType
from webhooks.signing import secret_key

DEFAULT_RETRY_SCHEDULE_SECONDS = [5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0]


class ReceiverConfig(BaseModel):
    """One configured receiver (worker settings). Never enters workflow history."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    url: str
    secrets: list[SecretStr] = Field(min_length=1)
    events: list[str] | None = None
    timeout_seconds: float = Field(default=10, gt=0, le=300)
    # The wait before each retry, in order; its length is the number of retries.
    retry_schedule_seconds: list[float] = Field(
        default_factory=lambda: list(DEFAULT_RETRY_SCHEDULE_SECONDS), min_length=1, max_length=100
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        url = urlsplit(value)
        if url.scheme not in {"http", "https"} or not url.hostname:
            raise ValueError("a receiver url must be an absolute http(s) URL")
        return value

    @field_validator("secrets")
    @classmethod
    def _real_secrets(cls, value: list[SecretStr]) -> list[SecretStr]:
        # Rejects placeholders such as whsec_change-me: they are not base64 of 24-64 bytes.
        for secret in value:
            secret_key(secret.get_secret_value())
        return value

    @field_validator("events")
    @classmethod
    def _known_events(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            known = {e.value for e in EventType}
            unknown = sorted(set(value) - known)
            if unknown:
                raise ValueError(f"unknown event types {unknown}; known: {sorted(known)}")
        return value

    @field_validator("retry_schedule_seconds")
    @classmethod
    def _positive_waits(cls, value: list[float]) -> list[float]:
        if any(wait <= 0 for wait in value):
            raise ValueError("every wait in the retry schedule must be positive")
        return value

    @property
    def retry(self) -> RetryPolicySpec:
        return RetryPolicySpec.from_schedule(self.retry_schedule_seconds)

    def wait_before_retry(self, attempt: int) -> timedelta:
        """The scheduled wait after failed attempt number `attempt` (1-based)."""
        waits = self.retry_schedule_seconds
        return timedelta(seconds=waits[min(attempt, len(waits)) - 1])
