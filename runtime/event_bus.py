"""The event bus of the settings (`event_bus`): the NATS server, its credentials, the stream.
Only the worker reads it; workflows see its `EventBusRoute`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from contracts.notify import EventBusRoute, RetryPolicySpec
from webhooks.events import SpareEvent

# NATS subject tokens: no spaces, no wildcards, no empty tokens.
SUBJECT_PREFIX = r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$"


# A publish that fails is retried with these bounds: about a day and a half in all.
DEFAULT_PUBLISH_RETRY = RetryPolicySpec(
    initial_seconds=1, backoff=2, max_interval_seconds=600, max_attempts=200
)


class EventBusConfig(BaseModel):
    """The worker's NATS settings (`event_bus` in Settings). Never enters workflow history."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    url: str = Field(description="NATS server URL(s), comma-separated, nats:// or tls://.")
    subject_prefix: str = Field(default="virtflow", pattern=SUBJECT_PREFIX)
    user: str | None = None
    password: SecretStr | None = None
    token: SecretStr | None = None
    creds_file: Path | None = Field(default=None, description="A NATS .creds file (JWT + nkey).")
    # JetStream stream that stores the events; None publishes on core NATS (no ack, no de-dup).
    stream: str | None = Field(default="VIRTFLOW", pattern=r"^[A-Za-z0-9_-]+$")
    # Create the stream (subjects `<prefix>.>`) when it does not exist yet.
    create_stream: bool = True
    # JetStream forgets a Nats-Msg-Id after this long; it should cover the publish retries.
    duplicate_window_seconds: float = Field(default=2 * 24 * 3600, gt=0)
    timeout_seconds: float = Field(default=5, gt=0, le=120)
    retry: RetryPolicySpec = DEFAULT_PUBLISH_RETRY

    @field_validator("url")
    @classmethod
    def _nats_urls(cls, value: str) -> str:
        for server in value.split(","):
            scheme, _, rest = server.strip().partition("://")
            if scheme not in {"nats", "tls", "ws", "wss"} or not rest:
                raise ValueError("the event bus url must be nats://, tls://, ws:// or wss://")
        return value

    @model_validator(mode="after")
    def _one_way_to_authenticate(self) -> EventBusConfig:
        if self.password is not None and self.user is None:
            raise ValueError("event bus password given without a user")
        if self.token is not None and self.user is not None:
            raise ValueError("give the event bus either a token or a user, not both")
        return self

    @property
    def route(self) -> EventBusRoute:
        return EventBusRoute(retry=self.retry)

    def subject(self, event: SpareEvent) -> str:
        return f"{self.subject_prefix}.{event.data.cluster}.{event.type.value}"

    def connect_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "servers": [s.strip() for s in self.url.split(",")],
            "name": "virtflow-worker",
            "connect_timeout": self.timeout_seconds,
            # One try per attempt (0 would mean "forever"): the activity's retries do the rest.
            "allow_reconnect": False,
            "max_reconnect_attempts": 1,
            "reconnect_time_wait": 0.1,
        }
        if self.user is not None:
            options["user"] = self.user
        if self.password is not None:
            options["password"] = self.password.get_secret_value()
        if self.token is not None:
            options["token"] = self.token.get_secret_value()
        if self.creds_file is not None:
            options["user_credentials"] = str(self.creds_file)
        return options
