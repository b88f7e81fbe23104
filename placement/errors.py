"""Errors of the placement library."""


class PolicyError(ValueError):
    """A policy that cannot run; the message starts with the key at fault (`plugin_weights.X`)."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason
