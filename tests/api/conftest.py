"""Fixtures of the API suite; the helpers themselves live in api_helpers."""

from tests.api.api_helpers import api, api_settings, live

__all__ = ["api", "api_settings", "live"]
